//! Finding, starting and cleaning up Chromium.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use crate::{CdpError, Connection};

/// How long a starting browser may take to open its DevTools port.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Flags that keep a headless Chromium quiet and local (see PLATFORM-NOTES:
/// without the networking ones it keeps trying to reach the internet).
const BASE_FLAGS: &[&str] = &[
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-features=WebMCP",
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,Translate,MediaRouter",
    "--window-size=1280,800",
];

/// How to start Chromium.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The executable; when `None`, [`find_browser`] looks for one.
    pub executable: Option<PathBuf>,
    /// A persistent profile; when `None`, a fresh temporary one is made and removed on exit.
    pub user_data_dir: Option<PathBuf>,
    /// Run without a window.
    pub headless: bool,
    /// Unpacked extensions to load.
    pub extensions: Vec<PathBuf>,
    /// More command-line flags.
    pub extra_args: Vec<String>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self { executable: None, user_data_dir: None, headless: true, extensions: Vec::new(), extra_args: Vec::new() }
    }
}

/// Finds a Chromium or Chrome: `explicit`, then `LUMO_BROWSER`, then the usual places.
pub fn find_browser(explicit: Option<&Path>) -> Result<PathBuf, CdpError> {
    let mut tried = Vec::new();
    let from_env = std::env::var_os("LUMO_BROWSER").map(PathBuf::from);
    for candidate in explicit.map(Path::to_path_buf).into_iter().chain(from_env) {
        if candidate.is_file() {
            return Ok(candidate);
        }
        tried.push(candidate);
    }
    // The Debian binary is started directly: /usr/bin/chromium is a shell wrapper.
    const PLACES: &[&str] = &[
        "/usr/lib/chromium/chromium",
        "/opt/google/chrome/chrome",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
    ];
    const NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];
    for place in PLACES {
        let path = PathBuf::from(place);
        if path.is_file() {
            return Ok(path);
        }
        tried.push(path);
    }
    let path_dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for name in NAMES {
        if let Some(found) = path_dirs.iter().map(|dir| dir.join(name)).find(|p| p.is_file()) {
            return Ok(found);
        }
        tried.push(PathBuf::from(name));
    }
    Err(CdpError::BrowserNotFound { tried })
}

/// A Chromium that lumo started. Dropping it kills the process and removes a temporary profile.
#[derive(Debug)]
pub struct Browser {
    connection: Connection,
    child: Child,
    // Dropped after the child is killed (field order).
    _profile: Option<tempfile::TempDir>,
    executable: PathBuf,
}

impl Browser {
    /// Starts Chromium and connects to it.
    pub async fn launch(options: LaunchOptions) -> Result<Self, CdpError> {
        let executable = find_browser(options.executable.as_deref())?;
        let launch_error = |reason: String| CdpError::Launch { path: executable.clone(), reason };
        let (profile, user_data_dir) = match &options.user_data_dir {
            Some(dir) => (None, dir.clone()),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("lumo-profile-")
                    .tempdir()
                    .map_err(|e| launch_error(format!("cannot make a profile folder: {e}")))?;
                let path = dir.path().to_path_buf();
                (Some(dir), path)
            }
        };
        let port_file = user_data_dir.join("DevToolsActivePort");
        // A stale file from an earlier run of a persistent profile would point at a dead port.
        let _ = std::fs::remove_file(&port_file);

        let mut command = Command::new(&executable);
        command.args(BASE_FLAGS).arg(format!("--user-data-dir={}", user_data_dir.display()));
        if options.headless {
            command.arg("--headless");
        }
        if running_as_root() {
            command.arg("--no-sandbox");
        }
        if !options.extensions.is_empty() {
            let list = options.extensions.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
            command.arg(format!("--load-extension={list}"));
            command.arg(format!("--disable-extensions-except={list}"));
        }
        command.args(&options.extra_args).arg("about:blank");
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| launch_error(e.to_string()))?;

        let started = Instant::now();
        let ws_url = loop {
            if let Some(url) = read_port_file(&port_file) {
                break url;
            }
            if let Ok(Some(status)) = child.try_wait() {
                let tail = stderr_tail(&mut child).await;
                return Err(launch_error(format!("exited with {status} during start. {tail}")));
            }
            if started.elapsed() > START_TIMEOUT {
                let _ = child.start_kill();
                return Err(launch_error(format!("no DevTools port after {START_TIMEOUT:?}")));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // Drain stderr so a chatty browser never blocks on a full pipe.
        if let Some(mut stderr) = child.stderr.take() {
            tokio::spawn(async move {
                let mut sink = vec![0u8; 8192];
                while matches!(stderr.read(&mut sink).await, Ok(n) if n > 0) {}
            });
        }
        let connection = Connection::connect(&ws_url).await?;
        Ok(Self { connection, child, _profile: profile, executable })
    }

    /// The browser-level CDP connection.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The executable that runs.
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// The browser's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Asks the browser to close, then kills it if it lingers.
    pub async fn close(mut self) {
        let _ = self
            .connection
            .call_with_timeout("Browser.close", serde_json::json!({}), None, Duration::from_secs(2))
            .await;
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
    }
}

fn read_port_file(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let port: u16 = lines.next()?.trim().parse().ok()?;
    let path = lines.next()?.trim();
    path.starts_with("/devtools/browser/").then(|| format!("ws://127.0.0.1:{port}{path}"))
}

async fn stderr_tail(child: &mut Child) -> String {
    let Some(mut stderr) = child.stderr.take() else { return String::new() };
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_millis(500), stderr.read_to_end(&mut buf)).await;
    let text = String::from_utf8_lossy(&buf);
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Chromium refuses to start as root without `--no-sandbox`.
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

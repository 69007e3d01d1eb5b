//! Finding, starting and cleaning up Chromium.
//!
//! lumo talks to the browser it starts over `--remote-debugging-pipe` (see
//! the `pipe` module): no debugging port is opened, and the browser exits
//! when lumo does, however lumo ends.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use command_fds::{CommandFdExt, FdMapping};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use crate::connection::Connection;
use crate::error::CdpError;

/// How long a starting browser may take to answer its first command.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Browser::close`] lets the browser close by itself before killing
/// it (it usually takes 0.2–0.6 s); lumo must exit well within 2 s of a signal.
const CLOSE_GRACE: Duration = Duration::from_millis(800);

/// Flags that keep a headless Chromium quiet and local (see PLATFORM-NOTES:
/// without the networking ones it keeps trying to reach the internet).
const BASE_FLAGS: &[&str] = &[
    "--remote-debugging-pipe",
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

/// A Chromium that lumo started. [`Browser::close`] closes it in order;
/// dropping it kills the process and removes a temporary profile.
#[derive(Debug)]
pub struct Browser {
    connection: Connection,
    child: tokio::sync::Mutex<Child>,
    pid: Option<u32>,
    // Dropped after the child is killed (field order).
    profile: Mutex<Option<tempfile::TempDir>>,
    executable: PathBuf,
}

impl Browser {
    /// Starts Chromium and connects to it over a pipe.
    pub async fn launch(options: LaunchOptions) -> Result<Self, CdpError> {
        let executable = find_browser(options.executable.as_deref())?;
        let launch_error = |reason: String| CdpError::Launch { path: executable.clone(), reason };
        let (profile, user_data_dir) = match &options.user_data_dir {
            Some(dir) => (None, dir.clone()),
            None => {
                let dir =
                    crate::profile::create().map_err(|e| launch_error(format!("cannot make a profile folder: {e}")))?;
                let path = dir.path().to_path_buf();
                (Some(dir), path)
            }
        };

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

        // Chromium reads commands on its fd 3 and writes on its fd 4. Our own
        // ends are close-on-exec, so no other child keeps the pipe open.
        let pipe_error = |e: std::io::Error| launch_error(format!("cannot make the DevTools pipe: {e}"));
        let (browser_reads, to_browser) = std::io::pipe().map_err(pipe_error)?;
        let (from_browser, browser_writes) = std::io::pipe().map_err(pipe_error)?;
        command
            .fd_mappings(vec![
                FdMapping { parent_fd: OwnedFd::from(browser_reads), child_fd: 3 },
                FdMapping { parent_fd: OwnedFd::from(browser_writes), child_fd: 4 },
            ])
            .map_err(|e| launch_error(e.to_string()))?;
        let spawned = command.spawn();
        // The command holds our copies of the browser's ends: close them, so
        // that the browser's exit reads as the end of the pipe.
        drop(command);
        let mut child = spawned.map_err(|e| launch_error(e.to_string()))?;
        let to_browser = pipe::Sender::from_owned_fd(OwnedFd::from(to_browser)).map_err(pipe_error)?;
        let from_browser = pipe::Receiver::from_owned_fd(OwnedFd::from(from_browser)).map_err(pipe_error)?;
        let connection = crate::pipe::connection(from_browser, to_browser);

        // The first answer says the browser is up; a browser that fails to
        // start closes the pipe, which ends this call at once.
        if let Err(e) =
            connection.call_with_timeout("Browser.getVersion", serde_json::json!({}), None, START_TIMEOUT).await
        {
            let _ = child.start_kill();
            let status = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            let tail = stderr_tail(&mut child).await;
            let what = match status {
                Ok(Ok(status)) if !matches!(e, CdpError::Timeout { .. }) => {
                    format!("exited with {status} during start")
                }
                _ => format!("did not answer: {e}"),
            };
            return Err(launch_error(format!("{what}. {tail}")));
        }
        // Drain stderr so a chatty browser never blocks on a full pipe.
        if let Some(mut stderr) = child.stderr.take() {
            tokio::spawn(async move {
                let mut sink = vec![0u8; 8192];
                while matches!(stderr.read(&mut sink).await, Ok(n) if n > 0) {}
            });
        }
        let pid = child.id();
        Ok(Self { connection, child: tokio::sync::Mutex::new(child), pid, profile: Mutex::new(profile), executable })
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
        self.pid
    }

    /// Closes the browser in order: asks it to close, waits for the process
    /// (killing it if it lingers past [`CLOSE_GRACE`]), then removes a
    /// temporary profile. Safe to call more than once.
    pub async fn close(&self) {
        let mut child = self.child.lock().await;
        if matches!(child.try_wait(), Ok(None)) {
            let graceful = async {
                let _ =
                    self.connection.call_with_timeout("Browser.close", serde_json::json!({}), None, CLOSE_GRACE).await;
                child.wait().await
            };
            if tokio::time::timeout(CLOSE_GRACE, graceful).await.is_err() {
                tracing::warn!(pid = ?self.pid, "the browser did not exit within {CLOSE_GRACE:?} of Browser.close; killing it");
                let _ = child.kill().await;
            }
        }
        drop(child);
        tracing::debug!(pid = ?self.pid, "the browser exited");
        let profile = self.profile.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(profile) = profile {
            let path = profile.path().to_path_buf();
            if let Err(first) = profile.close() {
                // A helper process of the browser may have written a last file meanwhile.
                tracing::debug!(error = %first, "removing the temporary profile again");
                tokio::time::sleep(Duration::from_millis(100)).await;
                if let Err(e) = std::fs::remove_dir_all(&path) {
                    tracing::warn!(path = %path.display(), error = %e, first = %first, "cannot remove the temporary profile");
                }
            }
            tracing::debug!(path = %path.display(), "removed the temporary profile");
        }
    }
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

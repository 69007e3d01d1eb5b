//! lumo's browser lives and dies with lumo (issue 8, items 4 and 19).
//!
//! - Stopped by SIGTERM, SIGINT or SIGHUP (stdio and `--http`), or by the end
//!   of stdin, `lumo serve` closes the browser it started, waits for it,
//!   removes its temporary profile and exits 0 within two seconds.
//! - Killed by SIGKILL, its browser still goes (it talks to it over
//!   `--remote-debugging-pipe`), and the next lumo sweeps the profile left.
//! - The launched browser listens on no TCP port.
//! - Attached by `--cdp-endpoint http://…` or `ws://…`, lumo works and leaves
//!   that browser running when it exits.
//!
//! Each lumo gets its own `TMPDIR`, so its temporary profile is the only
//! `lumo-profile-*` folder there.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{FixtureServer, browser_pid, children_of, free_port};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::process::{Child, Command};

const CHROMIUM: &str = "/usr/lib/chromium/chromium";
/// How long lumo may take from a stop signal to its exit.
const EXIT_BOUND: Duration = Duration::from_secs(2);

fn chromium() -> String {
    std::env::var("LUMO_BROWSER").unwrap_or_else(|_| CHROMIUM.to_string())
}

/// `lumo serve ARGS` with its own TMPDIR.
fn lumo_command(tmp: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lumo"));
    command.arg("serve").args(args).env("TMPDIR", tmp).env("LUMO_BROWSER", chromium()).kill_on_drop(true);
    command
}

/// A `lumo serve` on stdio driven by rmcp's client over the child's pipes (so
/// the test keeps the child and can read its exit status).
struct StdioLumo {
    client: RunningService<RoleClient, ()>,
    child: Child,
    pid: u32,
}

impl StdioLumo {
    async fn start(tmp: &Path, args: &[&str]) -> Self {
        let mut command = lumo_command(tmp, args);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn lumo serve");
        let pid = child.id().expect("lumo has a pid");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let client = tokio::time::timeout(Duration::from_secs(30), ().serve((stdout, stdin)))
            .await
            .expect("lumo answers initialize within 30 s")
            .expect("the MCP handshake with lumo works");
        Self { client, child, pid }
    }

    async fn call_ok(&self, name: &str, args: serde_json::Value) -> String {
        let serde_json::Value::Object(args) = args else { panic!("arguments must be an object") };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        let result = tokio::time::timeout(Duration::from_secs(60), self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{name} did not answer within 60 s"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let text: Vec<String> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect();
        assert_ne!(result.is_error, Some(true), "{name} failed: {}", text.join("\n"));
        text.join("\n")
    }
}

/// A `lumo serve --http 127.0.0.1:PORT`.
struct HttpLumo {
    child: Child,
    pid: u32,
    port: u16,
}

impl HttpLumo {
    async fn start(tmp: &Path) -> Self {
        let port = free_port();
        let mut command = lumo_command(tmp, &["--http", &format!("127.0.0.1:{port}")]);
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn lumo serve --http");
        let pid = child.id().expect("lumo has a pid");
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("lumo serve --http exited early with {status}");
            }
            assert!(started.elapsed() < Duration::from_secs(15), "lumo serve --http did not listen within 15 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, pid, port }
    }

    /// Opens `url` with the Python MCP SDK's `Client(url)` (Streamable HTTP), which then disconnects.
    async fn navigate_with_python_sdk(&self, url: &str) {
        let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
        assert!(python.exists(), "no {}: run scripts/setup --tests", python.display());
        let script = r#"
import asyncio, sys
from mcp import Client
async def main():
    async with Client(sys.argv[1]) as client:
        result = await client.call_tool("browser_navigate", {"url": sys.argv[2]})
        text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
        print(text)
        return 1 if result.is_error else 0
sys.exit(asyncio.run(main()))
"#;
        let mcp_url = format!("http://127.0.0.1:{}/mcp", self.port);
        let output = tokio::time::timeout(
            Duration::from_secs(90),
            Command::new(python).arg("-c").arg(script).arg(&mcp_url).arg(url).output(),
        )
        .await
        .expect("the Python client finished within 90 s")
        .expect("run the Python client");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains(url),
            "browser_navigate over HTTP failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The one `lumo-profile-*` folder in `tmp`.
fn profiles_in(tmp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmp)
        .expect("read TMPDIR")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("lumo-profile-"))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// True while `pid` runs (a zombie has exited).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rfind(')').map(|i| stat[i + 1..].split_whitespace().next() != Some("Z")))
        .unwrap_or(false)
}

/// Live processes whose command line names `needle` (the browser and its helpers name their profile).
fn processes_naming(needle: &Path) -> Vec<(u32, String)> {
    let needle = needle.to_string_lossy().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(&needle) && alive(pid) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// The TCP ports on which any of `pids` listens (from /proc/net/tcp{,6} and their fds).
fn listening_ports(pids: &[u32]) -> Vec<u16> {
    let mut inodes = std::collections::HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let target = target.to_string_lossy().to_string();
                if let Some(inode) = target.strip_prefix("socket:[").and_then(|t| t.strip_suffix(']')) {
                    inodes.insert(inode.to_string());
                }
            }
        }
    }
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is field 1 (ADDR:PORT in hex), st field 3 (0A = LISTEN), inode field 9.
            if fields.len() > 9
                && fields[3] == "0A"
                && inodes.contains(fields[9])
                && let Some(port) = fields[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok())
            {
                ports.push(port);
            }
        }
    }
    ports
}

fn send_signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
    assert!(status.expect("run kill").success(), "kill -{signal} {pid} failed");
}

/// What the running lumo's browser is: its pid and its profile; checks it listens on no port.
fn launched_browser(lumo: u32, tmp: &Path) -> (u32, PathBuf) {
    let pid = browser_pid(lumo).expect("a Chromium child of lumo with --remote-debugging-pipe");
    let profiles = profiles_in(tmp);
    assert_eq!(profiles.len(), 1, "one temporary profile in {}: {profiles:?}", tmp.display());
    let profile = profiles[0].clone();
    assert!(!profile.join("DevToolsActivePort").exists(), "a pipe-launched browser writes no DevToolsActivePort");
    let pids: Vec<u32> = processes_naming(&profile).into_iter().map(|(p, _)| p).collect();
    assert!(pids.contains(&pid), "the browser names its profile on its command line");
    let ports = listening_ports(&pids);
    assert!(ports.is_empty(), "the launched browser must not listen on TCP; it listens on {ports:?}");
    (pid, profile)
}

/// Waits for lumo to exit after a stop; checks it exited 0 in time and left nothing behind.
async fn assert_clean_exit(child: &mut Child, how: &str, browser: u32, profile: &Path) {
    let stopped = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap_or_else(|_| panic!("lumo did not exit within 10 s of {how}"))
        .expect("wait for lumo");
    let took = stopped.elapsed();
    eprintln!("lumo exited {took:?} after {how}");
    assert!(status.success(), "lumo should exit 0 after {how}, got {status}");
    assert!(took < EXIT_BOUND, "lumo took {took:?} to exit after {how} (bound {EXIT_BOUND:?})");
    assert!(!alive(browser), "the browser (pid {browser}) still runs after lumo exited on {how}");
    // Helper processes (renderer, zygote) follow the browser within moments.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = processes_naming(profile);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "browser processes left after {how}: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!profile.exists(), "the temporary profile {} is left after {how}", profile.display());
}

async fn stdio_stop_closes_the_browser(signal: Option<&str>) {
    let fixtures = FixtureServer::start().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let lumo = StdioLumo::start(tmp.path(), &[]).await;
    let url = fixtures.url("login.html");
    let opened = lumo.call_ok("browser_navigate", json!({"url": url})).await;
    assert!(opened.contains(&url), "{opened}");
    let (browser, profile) = launched_browser(lumo.pid, tmp.path());
    let StdioLumo { client, mut child, pid } = lumo;
    let how = match signal {
        Some(signal) => {
            send_signal(pid, signal);
            format!("SIG{signal} (stdio)")
        }
        None => {
            // Dropping the client's transport closes lumo's stdin.
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
            "the end of stdin".to_string()
        }
    };
    assert_clean_exit(&mut child, &how, browser, &profile).await;
}

async fn http_stop_closes_the_browser(signal: &str) {
    let fixtures = FixtureServer::start().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut lumo = HttpLumo::start(tmp.path()).await;
    lumo.navigate_with_python_sdk(&fixtures.url("login.html")).await;
    let (browser, profile) = launched_browser(lumo.pid, tmp.path());
    send_signal(lumo.pid, signal);
    assert_clean_exit(&mut lumo.child, &format!("SIG{signal} (--http)"), browser, &profile).await;
}

#[tokio::test]
async fn sigterm_on_stdio_closes_the_browser_and_removes_its_profile() {
    stdio_stop_closes_the_browser(Some("TERM")).await;
}

#[tokio::test]
async fn sigint_on_stdio_closes_the_browser_and_removes_its_profile() {
    stdio_stop_closes_the_browser(Some("INT")).await;
}

#[tokio::test]
async fn sighup_on_stdio_closes_the_browser_and_removes_its_profile() {
    stdio_stop_closes_the_browser(Some("HUP")).await;
}

#[tokio::test]
async fn stdin_closed_closes_the_browser_and_removes_its_profile() {
    stdio_stop_closes_the_browser(None).await;
}

#[tokio::test]
async fn sigterm_on_http_closes_the_browser_and_removes_its_profile() {
    http_stop_closes_the_browser("TERM").await;
}

#[tokio::test]
async fn sigint_on_http_closes_the_browser_and_removes_its_profile() {
    http_stop_closes_the_browser("INT").await;
}

#[tokio::test]
async fn sighup_on_http_closes_the_browser_and_removes_its_profile() {
    http_stop_closes_the_browser("HUP").await;
}

#[tokio::test]
async fn sigkill_takes_the_browser_along_and_the_next_lumo_sweeps_the_profile() {
    let fixtures = FixtureServer::start().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    // Folders that are not a dead lumo's must survive the sweep.
    let foreign = tmp.path().join("lumo-profile-not-ours");
    std::fs::create_dir(&foreign).expect("mkdir");
    let other = tmp.path().join("someone-elses-profile");
    std::fs::create_dir(&other).expect("mkdir");

    let lumo = StdioLumo::start(tmp.path(), &[]).await;
    lumo.call_ok("browser_navigate", json!({"url": fixtures.url("login.html")})).await;
    let (browser, profile) = {
        let profiles: Vec<PathBuf> = profiles_in(tmp.path()).into_iter().filter(|p| *p != foreign).collect();
        assert_eq!(profiles.len(), 1, "{profiles:?}");
        (browser_pid(lumo.pid).expect("a browser"), profiles[0].clone())
    };
    let StdioLumo { client, mut child, pid } = lumo;
    send_signal(pid, "KILL");
    let _ = child.wait().await;
    let killed = Instant::now();
    while alive(browser) || !processes_naming(&profile).is_empty() {
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "the browser outlived lumo's SIGKILL by 5 s: {:?}",
            processes_naming(&profile)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("the browser was gone {:?} after lumo's SIGKILL", killed.elapsed());
    drop(client);
    assert!(profile.exists(), "a killed lumo cannot remove its profile (the next one sweeps it)");

    let next = StdioLumo::start(tmp.path(), &[]).await;
    // The sweep runs beside start-up (it never delays the first answer): give it a moment.
    let swept = Instant::now();
    while profile.exists() && swept.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!profile.exists(), "the next lumo swept the profile of the killed one as it started");
    next.call_ok("browser_navigate", json!({"url": fixtures.url("login.html")})).await;
    assert!(foreign.is_dir() && other.is_dir(), "folders without a dead lumo's owner file are left alone");
    let (browser, profile) = {
        let profiles: Vec<PathBuf> = profiles_in(tmp.path()).into_iter().filter(|p| *p != foreign).collect();
        assert_eq!(profiles.len(), 1, "{profiles:?}");
        (browser_pid(next.pid).expect("a browser"), profiles[0].clone())
    };
    let StdioLumo { client: _client, mut child, pid } = next;
    send_signal(pid, "TERM");
    assert_clean_exit(&mut child, "SIGTERM after a sweep", browser, &profile).await;
}

/// A Chromium the test starts itself with `--remote-debugging-port=0`; killed on drop.
struct OwnBrowser {
    child: std::process::Child,
    port: u16,
    ws_path: String,
    _profile: tempfile::TempDir,
}

impl OwnBrowser {
    async fn start() -> Self {
        let profile = tempfile::tempdir().expect("tempdir");
        let child = std::process::Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Chromium");
        let port_file = profile.path().join("DevToolsActivePort");
        // Owned (and so killed on drop) before anything below can panic.
        let mut browser = Self { child, port: 0, ws_path: String::new(), _profile: profile };
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(Ok(port)), Some(path)) = (lines.next().map(str::parse::<u16>), lines.next()) {
                    (browser.port, browser.ws_path) = (port, path.to_string());
                    return browser;
                }
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no DevToolsActivePort within 30 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for OwnBrowser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn attached_lumo_works_and_leaves_the_browser(endpoint: &str, browser: &mut OwnBrowser, stop: Option<&str>) {
    let fixtures = FixtureServer::start().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let lumo = StdioLumo::start(tmp.path(), &["--cdp-endpoint", endpoint]).await;
    let url = fixtures.url("login.html");
    let opened = lumo.call_ok("browser_navigate", json!({"url": url})).await;
    assert!(opened.contains(&url), "{opened}");
    let snapshot = lumo.call_ok("page_snapshot", json!({})).await;
    assert!(snapshot.contains("Sign in"), "the snapshot shows the fixture page:\n{snapshot}");
    assert!(children_of(lumo.pid).iter().all(|(_, cmd)| !cmd.contains("chromium")), "attached lumo starts no browser");
    assert!(profiles_in(tmp.path()).is_empty(), "attached lumo makes no profile");
    let StdioLumo { client, mut child, pid } = lumo;
    match stop {
        Some(signal) => send_signal(pid, signal),
        None => {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
        }
    }
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("lumo exits").expect("wait");
    assert!(status.success(), "lumo exits 0, got {status}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(browser.running(), "lumo must never close a browser it did not start ({endpoint})");
}

#[tokio::test]
async fn attaching_by_http_endpoint_works_and_leaves_the_browser_running() {
    let mut browser = OwnBrowser::start().await;
    let endpoint = format!("http://127.0.0.1:{}", browser.port);
    attached_lumo_works_and_leaves_the_browser(&endpoint, &mut browser, Some("TERM")).await;
    let ws = format!("ws://127.0.0.1:{}{}", browser.port, browser.ws_path);
    attached_lumo_works_and_leaves_the_browser(&ws, &mut browser, None).await;
}

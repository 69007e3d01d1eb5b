//! Issue 10 item 5, isolation between clients: two MCP sessions on one
//! `lumo serve --http` each get their own browser context and page tool
//! bindings. Driven by the Python `mcp` SDK (`isolation.py`) against real
//! Chromium; this side starts lumo, serves the fixtures and reads lumo's log.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::FixtureServer;

/// A running `lumo serve --http` whose log (lumo_browser at info) goes to a file.
struct Served {
    port: u16,
    log: tempfile::NamedTempFile,
    lumo: tokio::process::Child,
}

async fn serve(extra: &[&str]) -> Served {
    let port = common::free_port();
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    if std::env::var_os("LUMO_BROWSER").is_none() && Path::new("/usr/lib/chromium/chromium").is_file() {
        command.env("LUMO_BROWSER", "/usr/lib/chromium/chromium");
    }
    let lumo = command
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .args(extra)
        .env("LUMO_LOG", "lumo_browser=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log.reopen().expect("reopen the log"))
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lumo serve --http");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Served { port, log, lumo }
}

impl Served {
    /// Runs `isolation.py` against this lumo; panics unless it prints "all ok".
    async fn run_client(&self, fixtures: &FixtureServer, mode: &[&str]) -> String {
        let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
        assert!(python.is_file(), "the Python mcp SDK is missing: run scripts/setup --tests");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/isolation.py");
        let out = tokio::time::timeout(
            Duration::from_secs(240),
            tokio::process::Command::new(python)
                .arg(script)
                .arg(format!("http://127.0.0.1:{}/mcp", self.port))
                .arg(fixtures.port.to_string())
                .args(mode)
                .output(),
        )
        .await
        .expect("the Python client finishes within 240 s")
        .expect("run the Python client");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("all ok"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout.to_string()
    }

    /// Waits until lumo logged `count` disposed browser contexts; returns how many it did.
    async fn disposed(&self, count: usize) -> usize {
        let mut disposed = 0;
        for _ in 0..50 {
            let text = std::fs::read_to_string(self.log.path()).unwrap_or_default();
            disposed = text.matches("disposed of the browser context").count();
            if disposed >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        disposed
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_cannot_see_or_touch_each_others_tabs_cookies_or_page_tools() {
    let fixtures = FixtureServer::start().await;
    let mut served = serve(&[]).await;
    served.run_client(&fixtures, &[]).await;
    // Both sessions closed (the SDK sends DELETE): their browser contexts went with them.
    let disposed = served.disposed(2).await;
    let _ = served.lumo.kill().await;
    assert!(disposed >= 2, "both sessions' browser contexts are disposed: {disposed}\n{}", served.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_http_session_takes_its_browser_context_with_it() {
    let fixtures = FixtureServer::start().await;
    let mut served = serve(&["--session-idle", "4"]).await;
    let stdout = served.run_client(&fixtures, &["expire"]).await;
    assert!(stdout.contains("ok   the idle session expired"), "{stdout}");
    let disposed = served.disposed(1).await;
    let _ = served.lumo.kill().await;
    assert!(disposed >= 1, "the expired session's browser context is disposed\n{}", served.log());
}

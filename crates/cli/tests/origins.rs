//! Issue 10, item 2 (origin lists), through the rmcp client against the real
//! `lumo` binary and headless Chromium: `--browse-allow` / `--browse-block`
//! (and `LUMO_BROWSE_ALLOW` / `LUMO_BROWSE_BLOCK`) decide on the parsed origin,
//! directly, at every redirect hop and for script navigations, so a refused
//! origin is never even requested. 127.0.0.1, localhost and a second port are
//! the different origins (no external network).

mod common;

use std::ffi::OsStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Lumo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A server that answers `/redirect?to=URL` with a 302 and anything else with a
/// small page titled after its port, and remembers every request's `Host` and path.
struct Site {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Site {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let log = log.clone();
                tokio::spawn(async move {
                    let _ = answer(stream, port, &log).await;
                });
            }
        });
        Self { port, seen, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Requests that reached this server with this `Host` header (e.g. `localhost:1234`).
    fn hits(&self, host: &str) -> Vec<String> {
        self.seen.lock().expect("lock").iter().filter(|r| r.starts_with(&format!("{host} "))).cloned().collect()
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(mut stream: TcpStream, port: u16, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 || buf.len() > 64 * 1024 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let host = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    log.lock().expect("lock").push(format!("{host} {target}"));
    let (status, extra, body) = match target.split_once("/redirect?to=") {
        Some((_, to)) => ("302 Found", format!("Location: {to}\r\n"), "moved".to_string()),
        None if target.starts_with("/favicon") => ("404 Not Found", String::new(), String::new()),
        None => (
            "200 OK",
            String::new(),
            format!("<!doctype html><title>site {port}</title><h1>Site on port {port}</h1><p>secret of {port}</p>"),
        ),
    };
    let header = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Type: text/html\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

async fn refused(lumo: &Lumo, url: &str, says: &str) {
    let answer = lumo.fails("browser_navigate", json!({"url": url}), "forbidden").await;
    assert!(answer.error_message().contains(says), "{url}: {}", answer.error_message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_origin_is_never_loaded_directly_by_redirect_or_by_script() {
    let (allowed, blocked) = (Site::start().await, Site::start().await);
    let block = format!("http://127.0.0.1:{}", blocked.port);
    let lumo = Lumo::start_with(&["--browse-block", &block], &[]).await;
    let target = blocked.url("page");
    let own_host = format!("127.0.0.1:{}", blocked.port);

    lumo.open(&allowed.url("page")).await;
    refused(&lumo, &target, "is blocked (--browse-block").await;
    refused(&lumo, &allowed.url(&format!("redirect?to={target}")), "redirected to a refused origin").await;
    let new_tab = lumo.fails("browser_tabs", json!({"action": "new", "url": target}), "forbidden").await;
    assert!(new_tab.error_message().contains("blocked"), "{}", new_tab.error_message());

    // A script navigation: the page sends itself there.
    lumo.open(&allowed.url("page")).await;
    let moved = lumo.call("devtools_evaluate", json!({"expression": format!("location.href = '{target}'; 1")})).await;
    // The tab now shows the browser's error page for the blocked URL: lumo says so
    // (at once, or on the next read) and reads nothing of it.
    if moved.is_error() {
        assert!(moved.error_message().contains("is blocked"), "{}", moved.error_message());
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let snapshot = lumo.call("page_snapshot", json!({})).await;
    assert!(!snapshot.text().contains(&format!("secret of {}", blocked.port)), "{}", snapshot.text());
    assert!(snapshot.is_error() && snapshot.error_message().contains("is blocked"), "{}", snapshot.text());
    // And through a redirect that a script started.
    lumo.open(&allowed.url("page")).await;
    let hop = allowed.url(&format!("redirect?to={target}"));
    lumo.call("devtools_evaluate", json!({"expression": format!("location.href = '{hop}'; 1")})).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!lumo.call("page_snapshot", json!({})).await.text().contains(&format!("secret of {}", blocked.port)));

    assert!(blocked.hits(&own_host).is_empty(), "the blocked origin was requested: {:?}", blocked.hits(&own_host));
    assert!(!allowed.hits(&format!("127.0.0.1:{}", allowed.port)).is_empty(), "the allowed site served pages");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allow_list_decides_on_the_parsed_origin() {
    let site = Site::start().await;
    let port = site.port;
    let allow = format!("http://127.0.0.1:{port}");
    let lumo = Lumo::start_with(&[], &[("LUMO_BROWSE_ALLOW", OsStr::new(&allow))]).await;
    // Case and userinfo do not change the origin.
    lumo.ok("browser_navigate", json!({"url": format!("HTTP://127.0.0.1:{port}/page")})).await;
    lumo.ok("browser_navigate", json!({"url": format!("http://user@127.0.0.1:{port}/page")})).await;
    for lookalike in [
        format!("http://localhost:{port}/page"),
        format!("http://127.0.0.1.evil:{port}/page"),
        format!("http://127.0.0.1:{port}@localhost:{port}/page"),
        format!("http://127.0.0.1:{}/page", port.wrapping_add(1).max(1)),
        format!("https://127.0.0.1:{port}/page"),
    ] {
        refused(&lumo, &lookalike, "is not on the allow list").await;
    }
    // localhost is another origin, by redirect too.
    refused(&lumo, &site.url(&format!("redirect?to=http://localhost:{port}/page")), "not on the allow list").await;
    assert!(site.hits(&format!("localhost:{port}")).is_empty(), "{:?}", site.hits(&format!("localhost:{port}")));
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookalikes_of_a_blocked_host_are_blocked_and_other_hosts_are_not() {
    let site = Site::start().await;
    let port = site.port;
    let lumo = Lumo::start_with(&["--browse-block", "http://localhost:*"], &[]).await;
    refused(&lumo, &format!("HTTP://LOCALHOST.:{port}/page"), "is blocked").await;
    refused(&lumo, &format!("http://user@localhost:{port}/page"), "is blocked").await;
    lumo.ok("browser_navigate", json!({"url": format!("http://localhost@127.0.0.1:{port}/page")})).await;
    assert!(site.hits(&format!("localhost:{port}")).is_empty(), "{:?}", site.hits(&format!("localhost:{port}")));
    assert!(site.hits(&format!("localhost.:{port}")).is_empty());
    lumo.stop().await;
}

#[test]
fn a_bad_origin_pattern_is_a_clear_startup_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["call", "browser_tabs", r#"{"action":"list"}"#, "--browse-block", "ftp://example.com"])
        .output()
        .expect("run lumo");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the scheme must be http, https or *") && stderr.contains("e.g."), "{stderr}");
}

//! The bridge extension end to end: headless Chromium with `extension/bridge`
//! loaded, `lumo serve --bridge` driven by a real MCP client, browser tools
//! running through the extension's `chrome.debugger` relay.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::FixtureServer;
use futures_util::StreamExt;
use lumo_cdp::{Browser, Connection, LaunchOptions};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const EXTENSION_ID: &str = "hjfgijdboblbpgomjhgpbhfiobiokomm";

fn extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension/bridge").canonicalize().expect("extension/bridge")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// Chromium with the bridge loaded, lumo serving the bridge, the extension paired.
struct Rig {
    browser: Browser,
    lumo: Option<RunningService<RoleClient, ()>>,
    port: u16,
    extra: Vec<String>,
    _state: tempfile::TempDir,
}

impl Rig {
    async fn start(extra: &[&str]) -> Self {
        let state = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let browser = Browser::launch(LaunchOptions {
            executable: Some(PathBuf::from("/usr/lib/chromium/chromium")).filter(|p| p.is_file()),
            headless: true,
            extensions: vec![extension_dir()],
            ..LaunchOptions::default()
        })
        .await
        .expect("launch Chromium with the bridge extension");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let lumo = serve(port, state.path(), &extra).await;
        let rig = Self { browser, lumo: Some(lumo), port, extra, _state: state };
        let code = rig.pair_code();
        let server = format!("ws://127.0.0.1:{port}/bridge");
        rig.in_worker(&format!("chrome.storage.local.set({{server: {server:?}, pairCode: {code:?}}})")).await;
        rig
    }

    /// Stops lumo (its end of the socket drops) and starts a new one on the same port and state.
    async fn restart_lumo(&mut self) {
        if let Some(old) = self.lumo.take() {
            let _ = old.cancel().await;
        }
        self.lumo = Some(serve(self.port, self._state.path(), &self.extra).await);
    }

    fn pair_code(&self) -> String {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["pair", "--bridge-dir"])
            .arg(self._state.path())
            .output()
            .expect("run lumo pair");
        assert!(out.status.success(), "lumo pair: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("utf-8").trim().to_string()
    }

    fn cdp(&self) -> &Connection {
        self.browser.connection()
    }

    /// The bridge's service worker target, once it exists.
    async fn worker_target(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let targets = self.cdp().call("Target.getTargets", json!({}), None).await.expect("getTargets");
            let found = targets["targetInfos"].as_array().into_iter().flatten().find(|t| {
                t["type"] == "service_worker" && t["url"].as_str().unwrap_or_default().contains(EXTENSION_ID)
            });
            if let Some(t) = found {
                return t["targetId"].as_str().expect("targetId").to_string();
            }
            assert!(Instant::now() < deadline, "the bridge's service worker never appeared");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Evaluates `expression` (awaited) in the bridge's service worker.
    async fn in_worker(&self, expression: &str) -> Value {
        lumo_host::providers::in_worker(self.cdp(), EXTENSION_ID, expression).await.expect("evaluate in the worker")
    }

    async fn status(&self) -> Value {
        self.in_worker("chrome.storage.session.get('status').then(s => s.status)").await
    }

    async fn wait_connected(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let status = self.status().await;
            if status["state"] == "connected" {
                return status;
            }
            assert!(Instant::now() < deadline, "the bridge did not connect: {status}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn call(&self, name: &str, args: Value) -> (bool, String) {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        let result =
            tokio::time::timeout(Duration::from_secs(60), self.lumo.as_ref().expect("lumo runs").call_tool(params))
                .await
                .unwrap_or_else(|_| panic!("{name} hung"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let text =
            result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
        (result.is_error == Some(true), text)
    }
}

async fn serve(port: u16, state: &Path, extra: &[String]) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    command.args(["serve", "--bridge", &format!("127.0.0.1:{port}"), "--bridge-dir"]).arg(state);
    command.args(extra);
    // Bound until it listens: a second lumo on the port would fail to start.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ().serve(TokioChildProcess::new(command).expect("spawn lumo")).await.expect("MCP handshake")
}

#[tokio::test]
async fn pairing_then_browser_tools_run_over_the_relay() {
    let pages = FixtureServer::start().await;
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    let (failed, text) = rig.call("browser_navigate", json!({"url": pages.url("login.html")})).await;
    assert!(!failed, "navigate over the bridge failed: {text}");
    let (failed, text) = rig.call("page_snapshot", json!({})).await;
    assert!(!failed && text.contains("Sign in"), "snapshot over the bridge: {text}");
    // The code works once: a second pairing with it is refused.
    let creds = rig.in_worker("chrome.storage.local.get(null)").await;
    assert!(creds["token"].is_string() && creds["refresh"].is_string(), "{creds}");
    assert!(creds["pairCode"].is_null(), "the used code is forgotten: {creds}");
}

/// Opens a socket to the bridge with `origin` and `first` as the first message; returns the close code and reason.
async fn refused(port: u16, origin: &str, first: Value) -> (u16, String) {
    let mut request = format!("ws://127.0.0.1:{port}/bridge").into_client_request().expect("request");
    request.headers_mut().insert("origin", origin.parse().expect("header"));
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.expect("connect");
    futures_util::SinkExt::send(&mut ws, Message::text(first.to_string())).await.ok();
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => (u16::from(frame.code), frame.reason.to_string()),
        Some(Err(e)) => panic!("the refused socket failed: {e}"),
        other => panic!("the refused socket closed without a reason: {other:?}"),
    }
}

#[tokio::test]
async fn wrong_origin_wrong_token_and_wrong_code_are_refused_with_reasons() {
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    let ext = format!("chrome-extension://{EXTENSION_ID}");
    let (code, reason) = refused(rig.port, "https://evil.example", json!({"type": "auth", "token": "x"})).await;
    assert_eq!(code, 4003, "{reason}");
    assert!(reason.contains("origin https://evil.example refused"), "{reason}");
    let (code, reason) =
        refused(rig.port, "chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh", json!({"type": "auth"})).await;
    assert_eq!(code, 4003, "{reason}");
    let (code, reason) =
        refused(rig.port, &ext, json!({"type": "auth", "token": "v1.access.99999999999999.x.00"})).await;
    assert_eq!(code, 4001, "{reason}");
    let (code, reason) = refused(rig.port, &ext, json!({"type": "pair", "code": "guess"})).await;
    assert_eq!(code, 4002, "{reason}");
    // The paired extension was not disturbed.
    let (failed, text) = rig.call("browser_tabs", json!({"action": "list"})).await;
    assert!(!failed, "{text}");
}

#[tokio::test]
async fn a_call_survives_the_service_worker_being_stopped_mid_call() {
    let pages = FixtureServer::start().await;
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    rig.call("browser_navigate", json!({"url": pages.url("login.html")})).await;
    // A navigation that takes 2 s to answer; the worker is stopped while it waits.
    let url = pages.url("form.html?delay=2000");
    let call = rig.call("browser_navigate", json!({"url": url}));
    let stop = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let target = rig.worker_target().await;
        rig.cdp().call("Target.closeTarget", json!({"targetId": target}), None).await.expect("stop the worker");
    };
    let started = Instant::now();
    let ((failed, text), ()) = tokio::join!(call, stop);
    assert!(!failed, "the call failed after the worker stopped: {text}");
    assert!(text.contains("form.html"), "{text}");
    eprintln!("call completed {:?} after a worker stop", started.elapsed());
    let (failed, text) = rig.call("page_snapshot", json!({})).await;
    assert!(!failed, "{text}");
}

#[tokio::test]
async fn short_tokens_are_refreshed_before_they_expire() {
    let rig = Rig::start(&["--bridge-token-ttl", "6"]).await;
    let first = rig.wait_connected().await;
    let before = rig.in_worker("chrome.storage.local.get('tokenExpiresAt').then(s => s.tokenExpiresAt)").await;
    tokio::time::sleep(Duration::from_secs(9)).await;
    let after = rig.in_worker("chrome.storage.local.get('tokenExpiresAt').then(s => s.tokenExpiresAt)").await;
    assert!(after.as_f64() > before.as_f64(), "the token was not refreshed: {before} → {after}");
    let status = rig.status().await;
    assert_eq!(status["state"], "connected", "{status}");
    assert_eq!(status["at"], first["at"], "the connection was not reset by an expired token");
    let (failed, text) = rig.call("browser_tabs", json!({"action": "list"})).await;
    assert!(!failed, "{text}");
}

#[tokio::test]
async fn the_extension_reconnects_within_the_backoff_when_lumo_drops_the_socket() {
    let mut rig = Rig::start(&[]).await;
    let first = rig.wait_connected().await;
    let dropped = Instant::now();
    rig.restart_lumo().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let status = rig.status().await;
        if status["state"] == "connected" && status["at"] != first["at"] {
            break status;
        }
        assert!(Instant::now() < deadline, "no reconnect within 10 s: {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let took = dropped.elapsed();
    eprintln!("reconnected {took:?} after the server dropped the socket: {status}");
    // First retry after 3 s ± 20 %, plus lumo's own restart.
    assert!(took < Duration::from_secs(6), "reconnect took {took:?}");
    let (failed, text) = rig.call("browser_tabs", json!({"action": "list"})).await;
    assert!(!failed, "{text}");
}

/// Times `n` snapshot calls; returns (mean per call, failures).
async fn timed_snapshots(rig_call: impl AsyncFn() -> (bool, String), n: usize) -> (Duration, Vec<String>) {
    let started = Instant::now();
    let mut failures = Vec::new();
    for _ in 0..n {
        let (failed, text) = rig_call().await;
        if failed {
            failures.push(text);
        }
    }
    (started.elapsed() / n as u32, failures)
}

#[tokio::test]
async fn two_hundred_calls_with_twenty_worker_stops_lose_none() {
    let pages = FixtureServer::start().await;
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    rig.call("browser_navigate", json!({"url": pages.url("login.html")})).await;
    let calls = timed_snapshots(|| rig.call("page_snapshot", json!({})), 200);
    let stops = async {
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let target = rig.worker_target().await;
            let _ = rig.cdp().call("Target.closeTarget", json!({"targetId": target}), None).await;
        }
    };
    let ((mean, failures), ()) = tokio::join!(calls, stops);
    eprintln!("200 snapshots over the bridge with 20 worker stops: mean {mean:?} per call, {} failed", failures.len());
    assert!(failures.is_empty(), "failed calls: {failures:#?}");
    // Without stops, for the latency figure.
    let (quiet, failures) = timed_snapshots(|| rig.call("page_snapshot", json!({})), 100).await;
    assert!(failures.is_empty(), "{failures:#?}");
    let launched = common::Lumo::start().await;
    launched.ok("browser_navigate", json!({"url": pages.url("login.html")})).await;
    let (direct, _) = timed_snapshots(
        || async {
            let a = launched.call("page_snapshot", json!({})).await;
            (a.is_error(), a.text())
        },
        100,
    )
    .await;
    eprintln!("page_snapshot: {quiet:?} per call over the bridge, {direct:?} launched (pipe)");
}

#[tokio::test]
async fn a_silent_connection_is_closed_within_twenty_seconds() {
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    let token = rig.in_worker("chrome.storage.local.get('token').then(s => s.token)").await;
    // Point the extension elsewhere, so the silent socket below is the only one.
    rig.in_worker("chrome.storage.local.set({server: 'ws://127.0.0.1:9/bridge'})").await;
    let mut request = format!("ws://127.0.0.1:{}/bridge", rig.port).into_client_request().expect("request");
    request.headers_mut().insert("origin", format!("chrome-extension://{EXTENSION_ID}").parse().expect("header"));
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.expect("connect");
    futures_util::SinkExt::send(&mut ws, Message::text(json!({"type": "auth", "token": token}).to_string()))
        .await
        .expect("send auth");
    let started = Instant::now();
    let close = loop {
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await.expect("closed within 30 s") {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            other => panic!("no close frame: {other:?}"),
        }
    };
    let frame = close.expect("a close reason");
    let took = started.elapsed();
    assert_eq!(u16::from(frame.code), 4008, "{frame:?}");
    assert!(took >= Duration::from_secs(19) && took < Duration::from_secs(22), "closed after {took:?}");
}

#[tokio::test]
async fn tabs_lumo_opens_are_shared_in_the_lumo_tab_group() {
    let rig = Rig::start(&[]).await;
    rig.wait_connected().await;
    let (failed, text) = rig.call("browser_tabs", json!({"action": "list"})).await;
    assert!(!failed, "{text}");
    let groups = rig.in_worker("chrome.tabGroups.query({}).then(g => g.map(x => x.title))").await;
    assert_eq!(groups, json!(["lumo"]), "{groups}");
}

#[tokio::test]
async fn a_call_fails_saying_why_when_the_extension_stays_away() {
    let pages = FixtureServer::start().await;
    let rig = Rig::start(&["--bridge-wait", "3"]).await;
    rig.wait_connected().await;
    rig.call("browser_navigate", json!({"url": pages.url("login.html")})).await;
    rig.in_worker("chrome.storage.local.set({server: 'ws://127.0.0.1:9/bridge'})").await;
    let started = Instant::now();
    let (failed, text) = rig.call("page_snapshot", json!({})).await;
    assert!(failed && text.contains("bridge extension has not been connected for 3 s"), "{text}");
    // The browser is away, not the command wrong: `unavailable`, as for a closed browser.
    assert!(text.contains("[unavailable]"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
}

//! lumo-cdp's carriers against a real Chromium: the launched browser over
//! `--remote-debugging-pipe` (no port, closed in order), attaching by
//! `http://host:port` and `ws://…` (issue 8, items 4 and 19), and a
//! connection over a carrier of the caller's own.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use lumo_cdp::{Browser, CdpError, Connection, LaunchOptions, connect_endpoint};
use serde_json::json;

/// The `--user-data-dir=` of a running process, from its command line.
fn profile_of(pid: u32) -> PathBuf {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("the browser's command line");
    let cmdline = String::from_utf8_lossy(&cmdline);
    let arg = cmdline.split('\0').find_map(|a| a.strip_prefix("--user-data-dir=")).expect("--user-data-dir");
    PathBuf::from(arg)
}

#[tokio::test]
async fn a_launched_browser_has_no_debugging_port_and_close_removes_it_and_its_profile() {
    let browser = Browser::launch(LaunchOptions::default()).await.expect("Chromium must be installed");
    let pid = browser.pid().expect("pid");
    let cmdline = String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline")).to_string();
    assert!(cmdline.contains("--remote-debugging-pipe"), "{cmdline}");
    assert!(!cmdline.contains("--remote-debugging-port"), "{cmdline}");
    let profile = profile_of(pid);
    assert!(profile.join("lumo-owner").is_file(), "the temporary profile names its owner");
    assert!(!profile.join("DevToolsActivePort").exists(), "no DevTools port was opened");
    let version = browser.connection().call("Browser.getVersion", json!({}), None).await.expect("getVersion");
    assert!(version["product"].as_str().unwrap_or_default().contains("Chrome"), "{version}");

    let started = Instant::now();
    browser.close().await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1500), "closing took {took:?}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the browser process is gone");
    assert!(!profile.exists(), "the temporary profile is removed");
    tokio::time::timeout(Duration::from_secs(2), browser.connection().closed())
        .await
        .expect("the pipe reads as closed once the browser is gone");
    // A second close is harmless.
    browser.close().await;
}

/// A Chromium started with `--remote-debugging-port=0`, killed on drop.
struct PortBrowser {
    child: std::process::Child,
    port: u16,
    ws_path: String,
    _profile: tempfile::TempDir,
}

impl PortBrowser {
    async fn start() -> Self {
        let profile = tempfile::tempdir().expect("tempdir");
        let executable = lumo_cdp::find_browser(None).expect("Chromium must be installed");
        let child = std::process::Command::new(executable)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
            .args(["--disable-component-update", "--disable-sync", "--remote-debugging-port=0"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Chromium");
        // Owned (and so killed on drop) before anything below can panic.
        let mut browser = Self { child, port: 0, ws_path: String::new(), _profile: profile };
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(browser._profile.path().join("DevToolsActivePort")) {
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
}

impl Drop for PortBrowser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn attaching_by_http_host_port_reads_json_version_over_http11() {
    let mut browser = PortBrowser::start().await;
    for endpoint in [
        format!("http://127.0.0.1:{}", browser.port),
        format!("http://127.0.0.1:{}/", browser.port),
        format!("ws://127.0.0.1:{}{}", browser.port, browser.ws_path),
    ] {
        let cdp = connect_endpoint(&endpoint).await.unwrap_or_else(|e| panic!("{endpoint}: {e}"));
        let version = cdp.call("Browser.getVersion", json!({}), None).await.expect("getVersion");
        assert!(version["product"].as_str().unwrap_or_default().contains("Chrome"), "{endpoint}: {version}");
        drop(cdp);
    }
    assert!(matches!(browser.child.try_wait(), Ok(None)), "attaching leaves the browser running");
}

#[tokio::test]
async fn attaching_to_nothing_or_a_bad_address_says_what_went_wrong() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let err = connect_endpoint(&format!("http://127.0.0.1:{port}")).await.expect_err("nobody listens");
    assert!(matches!(err, CdpError::Connect { .. }), "{err}");
    let err = connect_endpoint("ftp://127.0.0.1:1").await.expect_err("not ws or http");
    assert!(err.to_string().contains("expected ws://… or http://host:port"), "{err}");
}

#[tokio::test]
async fn a_connection_runs_over_any_stream_and_sink() {
    // A carrier of our own: two channels, with a stand-in browser that answers every call.
    let (to_browser, mut browser_inbox) = futures_channel();
    let (browser_outbox, from_browser) = tokio::sync::mpsc::unbounded_channel::<Result<String, CdpError>>();
    tokio::spawn(async move {
        while let Some(text) = browser_inbox.recv().await {
            let call: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let answer = json!({"id": call["id"], "result": {"echo": call["method"]}});
            let event = json!({"method": "Test.event", "params": {"lone": "\u{fffd}"}});
            let _ = browser_outbox.send(Ok(event.to_string()));
            let _ = browser_outbox.send(Ok(answer.to_string()));
        }
    });
    let incoming = futures_util::stream::unfold(from_browser, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    let cdp = Connection::over(incoming, to_browser);
    let mut events = cdp.subscribe();
    let answer = cdp.call("Any.method", json!({}), None).await.expect("answer");
    assert_eq!(answer["echo"], "Any.method");
    let event = events.recv().await.expect("event");
    assert_eq!(event.method, "Test.event");
}

/// A sink of strings backed by a channel, and the channel's receiving end.
fn futures_channel()
-> (impl futures_util::Sink<String, Error = CdpError> + Send + 'static, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let sink = futures_util::sink::unfold(tx, |tx, text: String| async move {
        tx.send(text).map_err(|_| CdpError::ConnectionLost)?;
        Ok::<_, CdpError>(tx)
    });
    (sink, rx)
}

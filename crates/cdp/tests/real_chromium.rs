//! lumo-cdp against a real Chromium: launch, flattened sessions, events,
//! size limits, and what happens when the browser dies.

use std::time::Duration;

use lumo_cdp::{Browser, CdpError, LaunchOptions};
use serde_json::{Value, json};

async fn launch() -> Browser {
    Browser::launch(LaunchOptions::default()).await.expect("Chromium must be installed for these tests")
}

async fn attach_page(browser: &Browser) -> String {
    let cdp = browser.connection();
    let target = cdp.call("Target.createTarget", json!({"url": "about:blank"}), None).await.expect("createTarget");
    let attached = cdp
        .call("Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}), None)
        .await
        .expect("attach");
    attached["sessionId"].as_str().expect("sessionId").to_string()
}

#[tokio::test]
async fn launches_and_evaluates_in_a_flattened_session() {
    let browser = launch().await;
    let cdp = browser.connection();
    let version = cdp.call("Browser.getVersion", json!({}), None).await.expect("version");
    assert!(version["product"].as_str().unwrap_or_default().contains("Chrome"), "{version}");
    let session = attach_page(&browser).await;
    let result =
        cdp.call("Runtime.evaluate", json!({"expression": "6 * 7", "returnByValue": true}), Some(&session)).await;
    assert_eq!(result.expect("evaluate")["result"]["value"], json!(42));
    browser.close().await;
}

#[tokio::test]
async fn protocol_errors_are_typed() {
    let browser = launch().await;
    let err = browser.connection().call("No.suchMethod", json!({}), None).await.expect_err("must fail");
    assert!(matches!(err, CdpError::Protocol { code: -32601, .. }), "{err:?}");
    browser.close().await;
}

#[tokio::test]
async fn events_reach_subscribers_with_their_session() {
    let browser = launch().await;
    let cdp = browser.connection();
    let session = attach_page(&browser).await;
    let mut events = cdp.subscribe();
    cdp.call("Runtime.enable", json!({}), Some(&session)).await.expect("enable");
    cdp.call("Runtime.evaluate", json!({"expression": "console.log('hello lumo')"}), Some(&session))
        .await
        .expect("log");
    let event = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let event = events.recv().await.expect("stream open");
            if event.method == "Runtime.consoleAPICalled" {
                return event;
            }
        }
    })
    .await
    .expect("console event");
    assert_eq!(event.session_id.as_deref(), Some(session.as_str()));
    assert_eq!(event.params["args"][0]["value"], json!("hello lumo"));
    browser.close().await;
}

#[tokio::test]
async fn answers_bigger_than_tungstenite_defaults_arrive() {
    let browser = launch().await;
    let session = attach_page(&browser).await;
    // 80 MB: over the 64 MiB message and 16 MiB frame defaults.
    let result = browser
        .connection()
        .call(
            "Runtime.evaluate",
            json!({"expression": "'x'.repeat(80_000_000)", "returnByValue": true}),
            Some(&session),
        )
        .await
        .expect("big answer");
    assert_eq!(result["result"]["value"].as_str().map(str::len), Some(80_000_000));
    browser.close().await;
}

#[tokio::test]
async fn a_dead_browser_fails_pending_and_later_calls() {
    let browser = launch().await;
    let cdp = browser.connection().clone();
    let session = attach_page(&browser).await;
    let pending = {
        let cdp = cdp.clone();
        let session = session.clone();
        tokio::spawn(async move {
            cdp.call(
                "Runtime.evaluate",
                json!({"expression": "new Promise(() => {})", "awaitPromise": true}),
                Some(&session),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pid = browser.pid().expect("pid");
    std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status().expect("kill");
    let result: Result<Value, CdpError> = pending.await.expect("join");
    assert!(matches!(result, Err(CdpError::ConnectionLost)), "{result:?}");
    tokio::time::timeout(Duration::from_secs(5), cdp.closed()).await.expect("closed resolves");
    let later = cdp.call("Browser.getVersion", json!({}), None).await;
    assert!(matches!(later, Err(CdpError::ConnectionLost)), "{later:?}");
}

#[tokio::test]
async fn calls_time_out_cleanly() {
    let browser = launch().await;
    let session = attach_page(&browser).await;
    let err = browser
        .connection()
        .call_with_timeout(
            "Runtime.evaluate",
            json!({"expression": "new Promise(() => {})", "awaitPromise": true}),
            Some(&session),
            Duration::from_millis(300),
        )
        .await
        .expect_err("times out");
    assert!(matches!(err, CdpError::Timeout { .. }), "{err:?}");
    // The connection is still usable afterwards.
    browser.connection().call("Browser.getVersion", json!({}), None).await.expect("still alive");
    browser.close().await;
}

#[test]
fn a_missing_browser_says_how_to_install_one() {
    let err = CdpError::BrowserNotFound { tried: vec!["/usr/lib/chromium/chromium".into(), "chromium".into()] };
    let text = err.to_string();
    assert!(text.contains("apt-get install chromium") && text.contains("--browser PATH"), "{text}");
    assert!(text.contains("/usr/lib/chromium/chromium, chromium"), "{text}");
}

#[tokio::test]
async fn strings_with_lone_surrogates_arrive() {
    let browser = launch().await;
    let session = attach_page(&browser).await;
    let result = browser
        .connection()
        .call_with_timeout(
            "Runtime.evaluate",
            json!({"expression": "'a\\ud800b'", "returnByValue": true}),
            Some(&session),
            Duration::from_secs(5),
        )
        .await
        .expect("answer arrives instead of timing out");
    assert_eq!(result["result"]["value"], json!("a\u{fffd}b"));
    browser.close().await;
}

//! The helper is in a document before lumo's first call on it (issue 13 item
//! 2: a document's first snapshot created lumo's world and evaluated 47 kB,
//! ~12 ms): Chromium runs it in the "lumo" world of every new top document
//! of a tab lumo drives, and not in the page's other frames.
//!
//! Seen from outside: lumo attaches to a Chromium this test launched, and the
//! test's own CDP session looks into the worlds of the tab and of its
//! out-of-process frame after `browser_navigate` and before any call that
//! reads the page.

mod common;

use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo};
use lumo_cdp::{Browser, Connection, LaunchOptions};
use serde_json::{Value, json};

/// The port Chromium wrote to `DevToolsActivePort` in its profile.
async fn debugging_port(profile: &std::path::Path) -> u16 {
    let started = Instant::now();
    loop {
        let port = std::fs::read_to_string(profile.join("DevToolsActivePort"))
            .ok()
            .and_then(|text| text.lines().next().and_then(|l| l.parse().ok()));
        if let Some(port) = port {
            return port;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no DevToolsActivePort within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `typeof globalThis.__lumo` in each "lumo" world of the tab showing `url`,
/// keyed by whether the world is the top document's.
async fn lumo_worlds(cdp: &Connection, url: &str) -> Vec<(bool, String)> {
    lumo_worlds_of(cdp, "page", url).await
}

/// The same for the target of `kind` ("page", or "iframe": a frame in a process of its own) showing `url`,
/// keyed by whether the world is that target's root document's.
async fn lumo_worlds_of(cdp: &Connection, kind: &str, url: &str) -> Vec<(bool, String)> {
    let targets = cdp.call("Target.getTargets", json!({}), None).await.expect("targets");
    let target = targets["targetInfos"]
        .as_array()
        .and_then(|all| all.iter().find(|t| t["type"] == kind && t["url"] == url))
        .unwrap_or_else(|| panic!("no {kind} target shows {url}: {targets}"))
        .clone();
    let attached = cdp
        .call("Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}), None)
        .await
        .expect("attach");
    let session = attached["sessionId"].as_str().expect("a session").to_string();
    let mut events = cdp.subscribe();
    // Enabling the domain reports every context the tab has now.
    cdp.call("Runtime.enable", json!({}), Some(&session)).await.expect("Runtime.enable");
    let mut contexts: Vec<Value> = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(500), events.recv()).await {
        if event.method == "Runtime.executionContextCreated" && event.session_id.as_deref() == Some(&session) {
            contexts.push(event.params["context"].clone());
        }
    }
    let mut worlds = Vec::new();
    for context in contexts.iter().filter(|c| c["name"] == "lumo") {
        let top = context["auxData"]["frameId"] == target["targetId"];
        let answer = cdp
            .call(
                "Runtime.evaluate",
                json!({"expression": "typeof globalThis.__lumo", "uniqueContextId": context["uniqueId"], "returnByValue": true}),
                Some(&session),
            )
            .await
            .expect("evaluate in lumo's world");
        worlds.push((top, answer["result"]["value"].as_str().unwrap_or_default().to_string()));
    }
    worlds
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_helper_is_in_new_documents_of_a_tab_and_of_its_cross_origin_frames_before_lumos_first_call() {
    let profile = tempfile::tempdir().expect("tempdir");
    let browser = Browser::launch(LaunchOptions {
        headless: true,
        user_data_dir: Some(profile.path().to_path_buf()),
        extra_args: vec!["--remote-debugging-port=0".into()],
        ..LaunchOptions::default()
    })
    .await
    .expect("Chromium must be installed for these tests");
    let endpoint = format!("http://127.0.0.1:{}", debugging_port(profile.path()).await);
    let server = FixtureServer::start().await;
    let lumo = Lumo::start_with(&["--cdp-endpoint", &endpoint], &[]).await;

    let url = server.url("frames.html");
    lumo.open(&url).await;
    let worlds = lumo_worlds(browser.connection(), &url).await;
    assert!(worlds.contains(&(true, "object".to_string())), "no helper in the top document's lumo world: {worlds:?}");
    // The same-origin frame's world (if Chromium made one) runs nothing: the top document's helper reads it.
    assert!(worlds.iter().all(|(top, kind)| *top || kind == "undefined"), "a frame ran the helper: {worlds:?}");

    // A cross-origin frame runs in a process of its own, with a CDP session of its own: its
    // document got the helper too, before any call (lumo reads it there, refs `f<n>e<m>`).
    let other = url.replace("127.0.0.1", "localhost").replace("frames.html", "frame-child.html");
    // (lumo learns of the frame as it loads, so the registration may still be on its way.)
    let started = Instant::now();
    let mut frame_worlds = Vec::new();
    while started.elapsed() < Duration::from_secs(5) {
        frame_worlds = lumo_worlds_of(browser.connection(), "iframe", &other).await;
        if frame_worlds.contains(&(true, "object".to_string())) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        frame_worlds.contains(&(true, "object".to_string())),
        "no helper in the out-of-process frame's lumo world: {frame_worlds:?}"
    );

    // And lumo reads the page through it, frames included (the cross-origin one through its own helper).
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains("Frames") && snapshot.contains("iframe \"Same-origin frame\""), "{snapshot}");
    assert!(snapshot.contains("f1e") || snapshot.contains("f2e"), "the out-of-process frame's refs: {snapshot}");

    // A second document of the same tab gets it too.
    let next = server.url("login.html");
    lumo.open(&next).await;
    let worlds = lumo_worlds(browser.connection(), &next).await;
    assert!(worlds.contains(&(true, "object".to_string())), "{worlds:?}");
    lumo.stop().await;
    browser.close().await;
}

//! The browser tools (browser_navigate, browser_tabs) and the browser's
//! life (a crash is reported, the next call starts a new one), over stdio MCP
//! against the real `lumo` binary and headless Chromium.

mod common;

use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, assert_answer, browser_pid, ref_in};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_navigate_opens_reloads_and_walks_history() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let opened = lumo.open(&server.url("login.html")).await;
    assert_eq!(opened.structured()["title"], "Login — lumo fixture");
    assert_answer!(opened, starts_with "Opened:");
    assert!(opened.page_text().starts_with("url: http://127.0.0.1:"), "the URL is page data: {}", opened.text());
    let reloaded = lumo.ok("browser_navigate", json!({"go": "reload"})).await;
    assert_answer!(reloaded, starts_with "Reloaded.");

    // History.
    lumo.open(&server.url("form.html")).await;
    let back = lumo.ok("browser_navigate", json!({"go": "back"})).await;
    assert_answer!(back, contains "login.html");
    let forward = lumo.ok("browser_navigate", json!({"go": "forward"})).await;
    assert_answer!(forward, contains "form.html");
    lumo.fails("browser_navigate", json!({"go": "forward"}), "invalid_state").await;
    lumo.fails("browser_navigate", json!({"url": "https://a.example", "go": "back"}), "invalid_arguments").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_tabs_follow_page_navigations_and_new_tabs() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    // A navigation the page starts later, and a wait for it.
    lumo.open(&server.url("navigate.html")).await;
    let snapshot = lumo.snapshot().await;
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "button \"Go to login later\"")})).await;
    let waited = lumo.ok("page_wait", json!({"text": "Remember me", "timeout_ms": 5000})).await;
    assert_answer!(waited, starts_with "Text \"Remember me\" is on the page");
    assert!(lumo.snapshot().await.contains(&format!("\nurl: {}\n", server.url("login.html"))));
    lumo.ok("browser_navigate", json!({"go": "back"})).await;

    // A link with target=_blank opens a tab; select it, read it, close it.
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains(&format!("\nurl: {}\n", server.url("navigate.html"))), "{snapshot}");
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "[Open login in a new tab]")})).await;
    let mut listed = String::new();
    for _ in 0..50 {
        listed = lumo.ok("browser_tabs", json!({"action": "list"})).await.text();
        if listed.starts_with("2 tab(s)") && listed.contains(&server.url("login.html")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listed.starts_with("2 tab(s)"), "{listed}");
    assert!(listed.contains("*0 ") && listed.contains(&server.url("login.html")), "{listed}");
    let selected = lumo.ok("browser_tabs", json!({"action": "select", "index": 1})).await;
    assert_answer!(selected, contains "*1 ");
    let other = lumo.snapshot().await;
    assert!(other.contains(&format!("\nurl: {}\n", server.url("login.html"))), "{other}");
    let closed = lumo.ok("browser_tabs", json!({"action": "close"})).await;
    assert_answer!(closed, starts_with "1 tab(s)");
    assert_answer!(closed, contains "*0 ");
    lumo.fails("browser_tabs", json!({"action": "select", "index": 7}), "not_found").await;
    lumo.fails("browser_tabs", json!({"action": "select"}), "invalid_arguments").await;
    let opened = lumo.ok("browser_tabs", json!({"action": "new"})).await;
    assert_answer!(opened, starts_with "2 tab(s)");
    assert_answer!(opened, contains "*1 ");
    lumo.ok("browser_tabs", json!({"action": "close", "index": 1})).await;
    let started = Instant::now();
    let opened = lumo.ok("browser_tabs", json!({"action": "new", "url": server.url("login.html")})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "opening a tab took {:?}", started.elapsed());
    assert_answer!(opened, contains "*1 ");
    assert_answer!(opened, contains server.url("login.html"));
    assert!(lumo.snapshot().await.contains("button \"Sign in\""), "the new tab is the current one");
    lumo.ok("browser_tabs", json!({"action": "close"})).await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_crash_is_reported_then_recovered() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    assert_eq!(browser_pid(lumo.pid), None, "the browser starts on the first browser tool call");
    lumo.open(&server.url("login.html")).await;
    let pid = browser_pid(lumo.pid).expect("a Chromium child of lumo with --remote-debugging-pipe");

    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().expect("run kill");
    assert!(killed.success(), "kill -9 {pid}");
    // Let lumo notice the lost connection.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let crashed = lumo.fails("page_snapshot", json!({}), "unavailable").await;
    assert!(crashed.error_message().contains("browser"), "{}", crashed.error_message());
    // The next call starts a new browser.
    lumo.open(&server.url("login.html")).await;
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains("button \"Sign in\""), "{snapshot}");
    let again = browser_pid(lumo.pid).expect("a new Chromium");
    assert_ne!(again, pid, "a new browser process");
    lumo.stop().await;
}

//! Regression tests for bugs the end-to-end tests found, each named after
//! the behaviour it pins (page_find on plain text and through labels,
//! cross-origin frame requests, tab titles, viewport snapshots, labelled selects).

mod common;

use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, ref_in};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_matches_paragraph_and_status_text() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("long-list.html")).await;
    let status = lumo.ok("page_find", json!({"text": "Nothing selected"})).await;
    assert_eq!(status.structured()["total"], 1, "{}", status.text());
    lumo.open(&server.url("frames.html")).await;
    // Both child frames say it: the same-origin one and the cross-origin one (its refs are f<n>e<m>).
    let paragraph = lumo.ok("page_find", json!({"text": "Inside the child frame"})).await;
    assert_eq!(paragraph.structured()["total"], 2, "{}", paragraph.text());
    assert!(paragraph.text().contains("(frame f1)"), "{}", paragraph.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_reports_the_checkbox_not_its_label() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("login.html")).await;
    let found = lumo.ok("page_find", json!({"role": "checkbox"})).await;
    assert!(found.text().contains("checkbox \"Remember me\""), "{}", found.text());
    let r = ref_in(&found.text(), "- ");
    lumo.ok("page_check", json!({"ref": r})).await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_frames_do_not_leave_requests_in_flight() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("frames.html")).await;
    lumo.ok("page_wait", json!({"network_idle": true, "timeout_ms": 5000})).await;
    let pending = lumo.ok("network_requests", json!({"status": "pending"})).await;
    assert!(pending.text().starts_with("No matching requests"), "{}", pending.text());
    lumo.open(&server.url("login.html")).await;
    let requests = lumo.ok("network_requests", json!({})).await;
    assert!(
        !requests.page_text().contains("frame-child.html"),
        "the old page's requests are gone:\n{}",
        requests.text()
    );
    let snapshot = lumo.snapshot().await;
    let started = Instant::now();
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "checkbox \"Remember me\"")})).await;
    assert!(started.elapsed() < Duration::from_millis(1000), "a click took {:?}", started.elapsed());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_list_document_titles() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("navigate.html")).await;
    let started = Instant::now();
    let opened = lumo.ok("browser_tabs", json!({"action": "new", "url": server.url("login.html")})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "opening a tab took {:?}", started.elapsed());
    assert!(
        opened.text().contains(&format!("*1 Login — lumo fixture — {}", server.url("login.html"))),
        "{}",
        opened.text()
    );
    let listed = lumo.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(listed.text().contains(" 0 Navigate — lumo fixture — "), "{}", listed.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewport_snapshot_keeps_to_the_viewport() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("long-list.html")).await;
    lumo.ok("page_scroll", json!({"to": "bottom"})).await;
    let visible = lumo.ok("page_snapshot", json!({"viewport": true})).await.page_text();
    assert!(visible.contains("Row 1000|"), "{visible}");
    assert!(!visible.contains("Row 1|"), "row 1 is far above the viewport");
    assert!(visible.len() < 10_000, "{} bytes for one screen of rows", visible.len());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_in_a_label_is_named_by_the_label_text() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("form.html")).await;
    let snapshot = lumo.ok("page_snapshot", json!({"interactive": true})).await.text();
    let line = snapshot.lines().find(|l| l.contains("combobox")).unwrap_or_default();
    assert!(line.starts_with("combobox \"Country\" ["), "{line}");
    let found = lumo.ok("page_find", json!({"role": "combobox"})).await;
    assert_eq!(found.structured()["total"], Value::from(1));
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_in_a_cross_origin_frame_is_seen_and_answered() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("frames.html")).await;
    let found = lumo.ok("page_find", json!({"text": "Child confirm"})).await;
    let line = found.text().lines().find(|l| l.contains("(frame f")).map(str::to_string);
    let line = line.unwrap_or_else(|| panic!("no cross-origin match in {}", found.text()));
    let r = line.split('[').nth(1).and_then(|rest| rest.split(']').next()).expect("a ref").to_string();
    assert!(r.starts_with('f'), "{line}");
    let clicked = lumo.ok("page_click", json!({"ref": r})).await;
    assert!(clicked.text().contains("A dialog is open (confirm)"), "{}", clicked.text());
    assert!(clicked.page_text().contains("Proceed in the frame?"), "{}", clicked.text());
    lumo.ok("page_dialog", json!({"accept": true})).await;
    let status = lumo.ok("page_find", json!({"text": "Child confirm: true"})).await;
    assert_eq!(status.structured()["total"], 1, "{}", status.text());
    lumo.stop().await;
}

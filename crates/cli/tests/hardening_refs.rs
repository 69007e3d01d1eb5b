//! Hardening of refs, `page_find` and `page_press_key` (issue 8 items 6, 7
//! and 18): a ref never reaches another tab's element, a regex cannot hang a
//! tab, and bad refs and keys get errors that say what was wrong.

mod common;

use common::{FixtureServer, Lumo};
use serde_json::json;

/// Issue 8 item 18: an empty key is not "Pressed ."; unknown keys list valid ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn press_key_refuses_empty_and_unknown_keys() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("danger.html")).await;
    for key in ["", "Control+", "Shift++x"] {
        let answer = lumo.fails("page_press_key", json!({"key": key}), "invalid_arguments").await;
        assert!(answer.error_message().starts_with("key:"), "{key:?}: {}", answer.error_message());
    }
    let unknown = lumo.fails("page_press_key", json!({"key": "Entr"}), "invalid_arguments").await;
    let message = unknown.error_message();
    assert!(message.contains("\"Entr\"") && message.contains("Enter") && message.contains("ArrowDown"), "{message}");
    // Valid keys still work, the plus sign included.
    lumo.ok("page_press_key", json!({"key": "Enter"})).await;
    lumo.ok("page_press_key", json!({"key": "+"})).await;
    lumo.ok("page_press_key", json!({"key": "Control++"})).await;
    lumo.ok("page_press_key", json!({"key": "shift+tab"})).await;
    lumo.stop().await;
}

//! The `Input` domain of one tab: the data of an HTML5 drag that Chromium
//! handed to lumo instead of dropping it (`page_drag` drops it itself).

use serde_json::Value;

use super::state::TabState;

/// Applies one `Input.*` event; returns whether it changed anything.
pub(super) fn decode(s: &mut TabState, method: &str, params: &Value) -> bool {
    match method {
        "Input.dragIntercepted" => s.drag = Some(params["data"].clone()),
        _ => return false,
    }
    true
}

//! The helper's source and the world it runs in, with nothing else: the
//! session asks Chromium to run it in every new document of a tab and of its
//! out-of-process frames (see [`preload`], [`preload_frame`]), and `world.rs`
//! installs it by hand where that did not happen.

use serde_json::{Value, json};

/// The helper, assembled by `build.rs` from the parts `js/parts.txt` lists.
pub(crate) const HELPER_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/helper.js"));

/// The isolated world lumo's helper runs in, in every frame it reads.
pub(crate) const WORLD: &str = "lumo";

/// `Page.addScriptToEvaluateOnNewDocument`'s parameters that run the helper
/// in the "lumo" world of every new document of a tab (and of the one it
/// shows now), so a document's first call finds it there: creating the world
/// and evaluating the helper on the first call cost about 12 ms, and asking
/// for the world again on every call 1–3 ms.
/// Only the top document runs it: the helper there reads same-origin frames
/// itself, and a page's other frames (ads, widgets) need not pay for it.
pub(crate) fn preload() -> Value {
    let source = format!("if (window === window.top) {{\n{HELPER_JS}\n}}");
    json!({"source": source, "worldName": WORLD, "runImmediately": true})
}

/// The same for an out-of-process (cross-origin) frame, registered on its own
/// session: only the frame's root document runs it (its parent is out of its
/// reach, so `frameElement` is null), not the same-origin frames inside it,
/// which the helper there reads itself.
pub(crate) fn preload_frame() -> Value {
    let source = format!("if (window !== window.top && window.frameElement === null) {{\n{HELPER_JS}\n}}");
    json!({"source": source, "worldName": WORLD, "runImmediately": true})
}

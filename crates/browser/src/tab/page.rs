//! The `Page` domain of one tab: navigations of the main frame (a new
//! document, or a move within it), loading, JavaScript dialogs, file
//! choosers; every frame's navigation also goes to its page tools.

use serde_json::Value;

use super::state::{Dialog, FileChooser, LONG_REQUEST, TabState};

/// Applies one `Page.*` event; returns whether it changed anything.
pub(super) fn decode(s: &mut TabState, method: &str, params: &Value) -> bool {
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let main = |s: &TabState| params["frameId"].as_str() == Some(&s.main_frame);
    match method {
        "Page.frameNavigated" => {
            s.webmcp.on_event(method, params);
            let frame = &params["frame"];
            if frame.get("parentId").is_none() {
                s.url = str_of(&frame["url"]);
                s.main_frame = str_of(&frame["id"]);
                s.navigations += 1;
                s.worlds.forget();
                // A new document: keep only the requests of this navigation still under way.
                let main = s.main_frame.clone();
                s.requests.retain(|r| {
                    !r.finished && r.frame_id == main && r.started.is_some_and(|t| t.elapsed() < LONG_REQUEST)
                });
                s.file_chooser = None;
            }
        }
        "Page.frameDetached" | "Page.frameStartedNavigating" => {
            s.webmcp.on_event(method, params);
        }
        "Page.navigatedWithinDocument" if main(s) => {
            s.url = str_of(&params["url"]);
            s.within_document += 1;
        }
        "Page.frameStartedLoading" if main(s) => s.loading = true,
        "Page.frameStoppedLoading" if main(s) => {
            s.loading = false;
            s.stopped_loading += 1;
        }
        "Page.loadEventFired" => s.loading = false,
        "Page.javascriptDialogOpening" => {
            s.dialog = Some(Dialog {
                frame_session: None,
                kind: str_of(&params["type"]),
                message: str_of(&params["message"]),
                default_prompt: str_of(&params["defaultPrompt"]),
            })
        }
        "Page.javascriptDialogClosed" => s.dialog = None,
        "Page.fileChooserOpened" => {
            s.file_chooser = Some(FileChooser {
                backend_node_id: params["backendNodeId"].as_i64().unwrap_or(0),
                multiple: params["mode"].as_str() == Some("selectMultiple"),
            })
        }
        _ => return false,
    }
    true
}

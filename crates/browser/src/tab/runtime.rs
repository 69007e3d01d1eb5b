//! The `Runtime` domain of one tab: the page's console calls and uncaught
//! errors (into the console log), and execution contexts coming and going
//! (lumo's helper worlds, of the tab and of its out-of-process frames).

use serde_json::Value;

use super::state::{CONSOLE_CAP, ConsoleEntry, TabState, push_capped};
use crate::helper::script::WORLD;

/// Applies one `Runtime.*` event; returns whether it changed anything.
pub(super) fn decode(s: &mut TabState, method: &str, params: &Value) -> bool {
    match method {
        "Runtime.executionContextsCleared" => s.worlds.forget(),
        "Runtime.executionContextCreated" => {
            // With the helper registered (Page.addScriptToEvaluateOnNewDocument), Chromium ran it as it made this world.
            if is_lumo_world(&params["context"], &s.main_frame) {
                s.worlds.announced(&params["context"], s.preloaded);
            }
            return false;
        }
        "Runtime.executionContextDestroyed" => {
            s.worlds.destroyed(params["executionContextId"].as_i64());
            return false;
        }
        "Runtime.consoleAPICalled" => {
            let text = params["args"]
                .as_array()
                .map(|args| args.iter().map(remote_object_text).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            let frame = &params["stackTrace"]["callFrames"][0];
            let location = frame["url"]
                .as_str()
                .map(|u| format!("{u}:{}", frame["lineNumber"].as_i64().unwrap_or(0) + 1))
                .unwrap_or_default();
            push_capped(
                &mut s.console,
                ConsoleEntry {
                    level: console_level(params["type"].as_str().unwrap_or("log")),
                    text,
                    location,
                    browser_source: None,
                },
                CONSOLE_CAP,
            );
        }
        "Runtime.exceptionThrown" => {
            let details = &params["exceptionDetails"];
            let text = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("exception")
                .to_string();
            let location = format!(
                "{}:{}",
                details["url"].as_str().unwrap_or(""),
                details["lineNumber"].as_i64().unwrap_or(0) + 1
            );
            let entry = ConsoleEntry { level: "error".into(), text, location, browser_source: None };
            push_capped(&mut s.console, entry, CONSOLE_CAP);
        }
        _ => return false,
    }
    true
}

/// A context event of an out-of-process frame's session: the helper's world of
/// the frame's document, announced as Chromium makes it (the helper registered
/// for the frame's documents runs there) and forgotten as it goes.
pub(super) fn frame_context(s: &mut TabState, session: &str, method: &str, params: &Value) {
    for child in s.children.iter_mut().filter(|c| c.session_id == session) {
        match method {
            "Runtime.executionContextCreated" => {
                if is_lumo_world(&params["context"], &child.frame_id) {
                    child.worlds.announced(&params["context"], true);
                }
            }
            "Runtime.executionContextDestroyed" => child.worlds.destroyed(params["executionContextId"].as_i64()),
            _ => child.worlds.forget(),
        }
    }
}

/// Whether `context` is the "lumo" world of frame `frame_id`'s document.
fn is_lumo_world(context: &Value, frame_id: &str) -> bool {
    context["auxData"]["frameId"].as_str() == Some(frame_id) && context["name"].as_str() == Some(WORLD)
}

pub(super) fn console_level(kind: &str) -> String {
    match kind {
        "error" | "assert" => "error",
        "warning" => "warning",
        "debug" => "debug",
        "info" => "info",
        _ => "log",
    }
    .to_string()
}

/// A short text for a console argument: its value, or its description.
fn remote_object_text(arg: &Value) -> String {
    match &arg["value"] {
        Value::String(s) => s.clone(),
        Value::Null if arg["preview"].is_object() => preview_text(&arg["preview"]),
        Value::Null => arg["description"]
            .as_str()
            .or(arg["unserializableValue"].as_str())
            .unwrap_or(arg["type"].as_str().unwrap_or(""))
            .to_string(),
        other => other.to_string(),
    }
}

/// `{a: 1, b: "x"}` or `[1, 2, …]` from a CDP ObjectPreview (Chromium sends one for
/// console arguments), instead of a bare `Object`.
fn preview_text(preview: &Value) -> String {
    let props = preview["properties"].as_array().map(Vec::as_slice).unwrap_or_default();
    let value = |p: &Value| {
        let v = p["value"].as_str().unwrap_or("");
        if p["type"] == "string" { format!("{v:?}") } else { v.to_string() }
    };
    let more = if preview["overflow"].as_bool() == Some(true) { ", …" } else { "" };
    if preview["subtype"] == "array" {
        let items: Vec<String> = props.iter().map(value).collect();
        format!("[{}{more}]", items.join(", "))
    } else {
        let items: Vec<String> =
            props.iter().map(|p| format!("{}: {}", p["name"].as_str().unwrap_or("?"), value(p))).collect();
        let class =
            preview["description"].as_str().filter(|d| *d != "Object").map(|d| format!("{d} ")).unwrap_or_default();
        format!("{class}{{{}{more}}}", items.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::remote_object_text;

    #[test]
    fn console_objects_show_their_preview() {
        let object = json!({"type": "object", "description": "Object", "preview": {"type": "object", "description": "Object",
            "overflow": false, "properties": [{"name": "a", "type": "number", "value": "1"}, {"name": "b", "type": "string", "value": "x"}]}});
        assert_eq!(remote_object_text(&object), "{a: 1, b: \"x\"}");
        let array = json!({"type": "object", "subtype": "array", "description": "Array(3)", "preview": {"type": "object",
            "subtype": "array", "description": "Array(3)", "overflow": true, "properties": [{"name": "0", "type": "number", "value": "1"}]}});
        assert_eq!(remote_object_text(&array), "[1, …]");
        assert_eq!(remote_object_text(&json!({"type": "string", "value": "hi"})), "hi");
    }
}

//! One tab: its CDP session and what lumo has seen happen in it (console,
//! network, dialogs, file choosers, loading), kept current by the event pump.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::Notify;

/// How many console messages and network requests a tab keeps.
pub(crate) const CONSOLE_CAP: usize = 1000;
pub(crate) const NETWORK_CAP: usize = 2000;

#[derive(Debug, Clone)]
pub(crate) struct ConsoleEntry {
    pub(crate) level: String,
    pub(crate) text: String,
    pub(crate) location: String,
    /// Written by the browser itself (CDP `Log` domain: failed loads, blocked
    /// ports, CSP violations…), e.g. "network"; `None` for the page's own
    /// console calls and uncaught errors.
    pub(crate) browser_source: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    pub(crate) id: String,
    /// The short number tools show (`#12`); never repeats within a tab.
    pub(crate) seq: u64,
    pub(crate) url: String,
    pub(crate) method: String,
    pub(crate) resource_type: String,
    pub(crate) status: Option<i64>,
    pub(crate) mime: String,
    pub(crate) request_headers: Value,
    pub(crate) response_headers: Value,
    pub(crate) post_data: Option<String>,
    pub(crate) encoded_size: Option<f64>,
    pub(crate) failure: Option<String>,
    pub(crate) finished: bool,
    /// When it was sent.
    pub(crate) started: Option<Instant>,
    /// The frame that sent it.
    pub(crate) frame_id: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Dialog {
    /// The session of the frame that opened it, when a cross-origin frame did.
    pub(crate) frame_session: Option<String>,
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) default_prompt: String,
}

#[derive(Debug, Clone)]
pub(crate) struct FileChooser {
    pub(crate) backend_node_id: i64,
    pub(crate) multiple: bool,
}

#[derive(Debug, Default)]
pub(crate) struct TabState {
    pub(crate) url: String,
    /// The last document request the origin lists stopped in this tab, and why.
    pub(crate) blocked: Option<String>,
    pub(crate) title: String,
    pub(crate) loading: bool,
    /// Bumped on every main-frame navigation (new document).
    pub(crate) navigations: u64,
    /// Bumped on every main-frame navigation within the document (pushState,
    /// history within one document, a fragment): no new document, no load.
    pub(crate) within_document: u64,
    /// Bumped whenever the main frame stops loading, whether or not a new
    /// document came of it (a same-document change, a 204, a download).
    pub(crate) stopped_loading: u64,
    pub(crate) last_network_activity: Option<Instant>,
    pub(crate) console: VecDeque<ConsoleEntry>,
    pub(crate) requests: VecDeque<Request>,
    /// The last request number given out.
    pub(crate) request_seq: u64,
    pub(crate) dialog: Option<Dialog>,
    pub(crate) file_chooser: Option<FileChooser>,
    /// The isolated world's execution context that has lumo's helper installed.
    pub(crate) world: Option<i64>,
    pub(crate) main_frame: String,
    /// The data of an HTML5 drag that Chromium handed to lumo (`Input.dragIntercepted`).
    pub(crate) drag: Option<Value>,
    /// Out-of-process (cross-origin) frames, each with its own CDP session.
    pub(crate) children: Vec<ChildFrame>,
    /// The index the next child frame gets (refs `f<index>e<n>`); never reused.
    pub(crate) next_child: u32,
    /// WebMCP page tools registered in this tab's frames.
    pub(crate) webmcp: crate::webmcp::TabTools,
}

/// Requests older than this do not keep a page from counting as quiet:
/// long polls, streams, and requests whose end Chromium reports elsewhere.
const LONG_REQUEST: std::time::Duration = std::time::Duration::from_secs(3);

/// Where a tab was before an action: what its answer compares against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) navigations: u64,
    pub(crate) within_document: u64,
    pub(crate) stopped_loading: u64,
    pub(crate) request_seq: u64,
}

impl TabState {
    /// The counters to compare against after an action.
    pub(crate) fn marks(&self) -> Marks {
        Marks {
            navigations: self.navigations,
            within_document: self.within_document,
            stopped_loading: self.stopped_loading,
            request_seq: self.request_seq,
        }
    }

    /// Whether the main frame moved since `before`: a new document, or a new URL within it.
    pub(crate) fn moved_since(&self, before: &Marks) -> bool {
        self.navigations != before.navigations || self.within_document != before.within_document
    }

    /// How many requests are in flight (ignoring long-lived ones).
    pub(crate) fn inflight(&self) -> usize {
        // A cross-origin frame's document finishes in that frame's own session, which
        // may attach too late to report it: subframe documents never hold a wait.
        self.requests
            .iter()
            .filter(|r| !r.finished && r.started.is_some_and(|t| t.elapsed() < LONG_REQUEST))
            .filter(|r| r.resource_type != "Document" || r.frame_id == self.main_frame)
            .count()
    }
}

/// A cross-origin frame running in its own process, attached with its own session.
#[derive(Debug, Clone)]
pub(crate) struct ChildFrame {
    pub(crate) index: u32,
    pub(crate) frame_id: String,
    pub(crate) session_id: String,
    pub(crate) world: Option<i64>,
}

/// A tab lumo is attached to.
#[derive(Debug)]
pub(crate) struct Tab {
    pub(crate) target_id: String,
    pub(crate) session_id: String,
    /// The browser context (CDP `browserContextId`) the tab lives in.
    pub(crate) browser_context: String,
    state: Mutex<TabState>,
    /// Woken on every event of this tab; waits re-check their condition.
    pub(crate) changed: Notify,
    /// Serialises actions and reads on this tab.
    pub(crate) busy: tokio::sync::Mutex<()>,
}

impl Tab {
    pub(crate) fn new(target_id: String, session_id: String, main_frame: String, browser_context: String) -> Self {
        let state = TabState { next_child: 1, main_frame, ..TabState::default() };
        Self {
            target_id,
            session_id,
            browser_context,
            state: Mutex::new(state),
            changed: Notify::new(),
            busy: Default::default(),
        }
    }

    /// The CDP session that owns `frame_id`: a cross-origin frame's own, else the tab's.
    pub(crate) fn session_for_frame(&self, frame_id: &str) -> String {
        let s = self.state();
        s.children
            .iter()
            .find(|c| c.frame_id == frame_id)
            .map_or_else(|| self.session_id.clone(), |c| c.session_id.clone())
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, TabState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies one CDP event of this tab's session.
    /// Applies one CDP event of a cross-origin frame's own session: its console,
    /// network, page tools and dialogs are the tab's; its loading is not.
    pub(crate) fn on_frame_event(&self, session: &str, method: &str, params: &Value) {
        match method {
            "Page.frameNavigated" | "Page.frameDetached" | "Page.frameStartedNavigating" => {
                self.state().webmcp.on_event(method, params);
                self.changed.notify_waiters();
            }
            "Page.javascriptDialogOpening" => {
                self.on_event(method, params);
                if let Some(dialog) = self.state().dialog.as_mut() {
                    dialog.frame_session = Some(session.to_string());
                }
            }
            m if m.starts_with("Page.") || m == "Runtime.executionContextsCleared" => {}
            _ => self.on_event(method, params),
        }
    }

    pub(crate) fn on_event(&self, method: &str, params: &Value) {
        let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
        {
            let mut s = self.state();
            match method {
                "Page.frameNavigated" => {
                    s.webmcp.on_event(method, params);
                    let frame = &params["frame"];
                    if frame.get("parentId").is_none() {
                        s.url = str_of(&frame["url"]);
                        s.main_frame = str_of(&frame["id"]);
                        s.navigations += 1;
                        s.world = None;
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
                m if m.starts_with("WebMCP.") => {
                    s.webmcp.on_event(method, params);
                }
                "Page.navigatedWithinDocument" if params["frameId"].as_str() == Some(&s.main_frame) => {
                    s.url = str_of(&params["url"]);
                    s.within_document += 1;
                }
                "Page.frameStartedLoading" if params["frameId"].as_str() == Some(&s.main_frame) => s.loading = true,
                "Page.frameStoppedLoading" if params["frameId"].as_str() == Some(&s.main_frame) => {
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
                "Input.dragIntercepted" => s.drag = Some(params["data"].clone()),
                "Page.fileChooserOpened" => {
                    s.file_chooser = Some(FileChooser {
                        backend_node_id: params["backendNodeId"].as_i64().unwrap_or(0),
                        multiple: params["mode"].as_str() == Some("selectMultiple"),
                    })
                }
                "Runtime.executionContextsCleared" => s.world = None,
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
                // The browser's own messages: failed loads, blocked ports, CSP violations, interventions.
                // Not the 404 of the favicon the browser looks for by itself on every site without one:
                // the page never asked for it.
                "Log.entryAdded"
                    if !(params["entry"]["source"] == "network"
                        && params["entry"]["url"].as_str().is_some_and(|u| u.ends_with("/favicon.ico"))) =>
                {
                    let entry = &params["entry"];
                    let location = match (entry["url"].as_str().filter(|u| !u.is_empty()), entry["lineNumber"].as_i64())
                    {
                        (Some(url), Some(line)) => format!("{url}:{}", line + 1),
                        (Some(url), None) => url.to_string(),
                        (None, _) => String::new(),
                    };
                    let level = match entry["level"].as_str().unwrap_or("info") {
                        "verbose" => "debug",
                        other => other,
                    };
                    let entry = ConsoleEntry {
                        level: console_level(level),
                        text: str_of(&entry["text"]),
                        location,
                        browser_source: Some(entry["source"].as_str().unwrap_or("other").to_string()),
                    };
                    push_capped(&mut s.console, entry, CONSOLE_CAP);
                }
                "Network.requestWillBeSent" => {
                    let request = &params["request"];
                    let id = str_of(&params["requestId"]);
                    // A redirect reuses the id (and ends with one loadingFinished): keep
                    // one entry, the latest hop, and count it in flight once.
                    let hop = s.requests.iter().find(|r| r.id == id).map(|r| r.seq);
                    s.last_network_activity = Some(Instant::now());
                    s.requests.retain(|r| r.id != id);
                    let seq = hop.unwrap_or(s.request_seq + 1);
                    s.request_seq = s.request_seq.max(seq);
                    let entry = Request {
                        id,
                        seq,
                        url: str_of(&request["url"]),
                        method: str_of(&request["method"]),
                        resource_type: str_of(&params["type"]),
                        request_headers: request["headers"].clone(),
                        post_data: request["postData"].as_str().map(str::to_string),
                        started: Some(Instant::now()),
                        frame_id: str_of(&params["frameId"]),
                        ..Request::default()
                    };
                    push_capped(&mut s.requests, entry, NETWORK_CAP);
                }
                "Network.responseReceived" => {
                    let response = &params["response"];
                    if let Some(r) = find_request(&mut s, &params["requestId"]) {
                        r.status = response["status"].as_i64();
                        r.mime = str_of(&response["mimeType"]);
                        r.response_headers = response["headers"].clone();
                        if r.resource_type.is_empty() {
                            r.resource_type = str_of(&params["type"]);
                        }
                    }
                }
                "Network.loadingFinished" | "Network.loadingFailed" => {
                    s.last_network_activity = Some(Instant::now());
                    let failed = method == "Network.loadingFailed";
                    if let Some(r) = find_request(&mut s, &params["requestId"]) {
                        r.finished = true;
                        r.encoded_size = params["encodedDataLength"].as_f64();
                        if failed {
                            r.failure = Some(str_of(&params["errorText"]));
                        }
                    }
                }
                _ => return,
            }
        }
        self.changed.notify_waiters();
    }

    /// What waits on the agent (an open dialog, a file chooser), as lumo's own
    /// words plus the page's words (a dialog's message), kept apart so the
    /// page's text is fenced as untrusted.
    pub(crate) fn pending_notices(&self) -> (Vec<String>, Vec<String>) {
        let s = self.state();
        let (mut ours, mut page) = (Vec::new(), Vec::new());
        if let Some(d) = &s.dialog {
            ours.push(format!(
                "A dialog is open ({}): the page is blocked until you answer it with page_dialog (accept or dismiss).",
                d.kind
            ));
            page.push(format!("dialog message: {:?}", d.message));
        }
        if let Some(f) = &s.file_chooser {
            ours.push(format!(
                "A file chooser is open ({}). Answer it with file_upload {{paths}}.",
                if f.multiple { "several files" } else { "one file" }
            ));
        }
        (ours, page)
    }
}

fn find_request<'a>(s: &'a mut TabState, id: &Value) -> Option<&'a mut Request> {
    let id = id.as_str()?;
    s.requests.iter_mut().rev().find(|r| r.id == id)
}

fn push_capped<T>(queue: &mut VecDeque<T>, item: T, cap: usize) {
    if queue.len() >= cap {
        queue.pop_front();
    }
    queue.push_back(item);
}

fn console_level(kind: &str) -> String {
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
pub(crate) fn remote_object_text(arg: &Value) -> String {
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

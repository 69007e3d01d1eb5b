//! WebMCP page tools as the page registered them: the registrations of one
//! tab per frame ([`TabTools`]), kept current from the `WebMCP` and `Page`
//! events the tab decodes, and the rule that maps a page's name into an
//! exposed `webmcp_*` name ([`exposed_name`]). Plain data: it imports nothing
//! of the crate.
//!
//! Chromium 156 sends no `toolsRemoved` on a cross-document navigation or
//! reload, so a frame's tools are dropped here on `Page.frameNavigated` and
//! `Page.frameDetached`. A back/forward-cache restore sends the restored
//! document's `toolsAdded` *before* its `Page.frameNavigated`: tools that
//! arrived since the frame's `Page.frameStartedNavigating` are the restored
//! ones and are kept.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// The prefix of every exposed page tool.
pub(crate) const PREFIX: &str = "webmcp_";
/// Longest exposed name (the model function-name rule).
const MAX_EXPOSED: usize = 64;
/// Names of lumo's own `webmcp_*` tools, which page tools cannot take.
pub(crate) const RESERVED: [&str; 2] = ["webmcp_list", "webmcp_call"];
/// How many finished invocations a tab remembers (a response may arrive before its waiter looks).
const RESPONSES_CAP: usize = 64;

/// Document epochs: a frame gets a new one on every navigation; never repeats.
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// What binds an exposed name to one registration: tab, frame, document, name and definition.
/// An identical re-registration in the same document keeps it; anything else changes it.
pub(crate) fn binding(target: &str, t: &Registered, epoch: u64) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    (target, &t.frame_id, epoch, &t.name, &t.description).hash(&mut h);
    t.input_schema.to_string().hash(&mut h);
    t.annotations.to_string().hash(&mut h);
    h.finish()
}

/// One registration as the page made it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Registered {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) annotations: Value,
    pub(crate) frame_id: String,
    pub(crate) backend_node_id: Option<i64>,
    /// The frame's document epoch when it registered.
    pub(crate) epoch: u64,
    /// Order of arrival within the tab.
    pub(crate) seq: u64,
}

/// What `toolResponded` said.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub(crate) status: String,
    pub(crate) output: Option<Value>,
    pub(crate) error_text: Option<String>,
    pub(crate) exception: Option<String>,
}

/// A tab's page tools, kept current by its events.
#[derive(Debug, Default)]
pub(crate) struct TabTools {
    /// In registration order: first come first served.
    pub(crate) tools: Vec<Registered>,
    /// Frame id → URL, from `Page.frameNavigated` and the frame tree at attach.
    pub(crate) frames: HashMap<String, String>,
    /// Finished invocations by id.
    pub(crate) responses: VecDeque<(String, Response)>,
    /// Frame id → document epoch.
    pub(crate) epochs: HashMap<String, u64>,
    /// Whether any `WebMCP.*` event arrived at all.
    pub(crate) seen_events: bool,
    /// Arrival counter for [`Registered::seq`].
    pub(crate) next_seq: u64,
    /// Frame id → `seq` when its latest cross-document navigation started.
    pub(crate) navigation_started: HashMap<String, u64>,
}

impl TabTools {
    /// Applies one event; returns whether it concerned WebMCP state.
    pub(crate) fn on_event(&mut self, method: &str, params: &Value) -> bool {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        if method.starts_with("WebMCP.") {
            tracing::trace!(%method, %params, "webmcp event");
        }
        match method {
            "WebMCP.toolsAdded" => {
                self.seen_events = true;
                for tool in params["tools"].as_array().into_iter().flatten() {
                    let name = text(&tool["name"]);
                    let frame_id = text(&tool["frameId"]);
                    let description = text(&tool["description"]);
                    let input_schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
                    let annotations = tool.get("annotations").cloned().unwrap_or(Value::Null);
                    let backend_node_id = tool["backendNodeId"].as_i64();
                    // `WebMCP.enable` replays the registered tools: keep the first copy.
                    let same = |t: &Registered| t.name == name && t.frame_id == frame_id;
                    if self.tools.iter().any(|t| {
                        same(t)
                            && t.description == description
                            && t.input_schema == input_schema
                            && t.annotations == annotations
                            && t.backend_node_id == backend_node_id
                    }) {
                        continue;
                    }
                    // A different tool of the same name in the frame can only be another
                    // document's (a page cannot register a name twice): the new one wins.
                    self.tools.retain(|t| !same(t));
                    let epoch = self.epoch(&frame_id);
                    self.next_seq += 1;
                    self.tools.push(Registered {
                        name,
                        description,
                        input_schema,
                        annotations,
                        frame_id,
                        backend_node_id,
                        epoch,
                        seq: self.next_seq,
                    });
                }
                true
            }
            "WebMCP.toolsRemoved" => {
                self.seen_events = true;
                for gone in params["tools"].as_array().into_iter().flatten() {
                    let (name, frame) = (text(&gone["name"]), text(&gone["frameId"]));
                    self.tools.retain(|t| !(t.name == name && t.frame_id == frame));
                }
                true
            }
            "WebMCP.toolResponded" => {
                self.seen_events = true;
                let id = text(&params["invocationId"]);
                let response = Response {
                    status: text(&params["status"]),
                    output: params.get("output").cloned(),
                    error_text: params["errorText"].as_str().map(str::to_string),
                    exception: params["exception"]["description"].as_str().map(str::to_string),
                };
                if self.responses.len() >= RESPONSES_CAP {
                    self.responses.pop_front();
                }
                self.responses.push_back((id, response));
                true
            }
            "WebMCP.toolInvoked" => {
                self.seen_events = true;
                false
            }
            "Page.frameStartedNavigating" => {
                let kind = params["navigationType"].as_str().unwrap_or_default();
                if !kind.contains("ameDocument") {
                    self.navigation_started.insert(text(&params["frameId"]), self.next_seq);
                }
                false
            }
            "Page.frameNavigated" => {
                let frame = &params["frame"];
                let id = text(&frame["id"]);
                // No toolsRemoved comes for the old document: its tools are gone.
                // A back/forward-cache restore is different: Chromium sends the restored
                // document's tools (toolsAdded) *before* this event, so keep the tools that
                // arrived since the navigation started (issue 8 item 10).
                let started = self.navigation_started.remove(&id);
                let keep_after = match (params["type"].as_str(), started) {
                    (Some("BackForwardCacheRestore"), Some(seq)) => seq,
                    // Restored without a start marker: keeping beats dropping (calls are still bound).
                    (Some("BackForwardCacheRestore"), None) => 0,
                    _ => u64::MAX,
                };
                let before = self.tools.len();
                self.tools.retain(|t| t.frame_id != id || t.seq > keep_after);
                self.epochs.insert(id.clone(), EPOCH.fetch_add(1, Ordering::Relaxed));
                self.frames.insert(id, text(&frame["url"]));
                before != self.tools.len()
            }
            // "swap": the frame moved to another process (a cross-origin frame); it lives on
            // there with its own session, whose tools may already have arrived: keep them.
            "Page.frameDetached" if params["reason"] == "swap" => false,
            "Page.frameDetached" => {
                let id = text(&params["frameId"]);
                let before = self.tools.len();
                self.tools.retain(|t| t.frame_id != id);
                self.frames.remove(&id);
                self.epochs.remove(&id);
                before != self.tools.len()
            }
            _ => false,
        }
    }

    /// Records the frames of a `Page.getFrameTree` answer.
    pub(crate) fn record_tree(&mut self, tree: &Value) {
        let frame = &tree["frame"];
        if let (Some(id), Some(url)) = (frame["id"].as_str(), frame["url"].as_str()) {
            self.frames.insert(id.to_string(), url.to_string());
        }
        for child in tree["childFrames"].as_array().into_iter().flatten() {
            self.record_tree(child);
        }
    }

    fn epoch(&mut self, frame: &str) -> u64 {
        *self.epochs.entry(frame.to_string()).or_insert_with(|| EPOCH.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether the registration `generation` (of tab `target`) is still there.
    pub(crate) fn holds(&self, target: &str, generation: u64) -> bool {
        self.tools.iter().any(|t| binding(target, t, t.epoch) == generation)
    }

    pub(crate) fn response(&self, id: &str) -> Option<Response> {
        self.responses.iter().rev().find(|(i, _)| i == id).map(|(_, r)| r.clone())
    }
}

/// The exposed name for a page tool name, or why it cannot be exposed.
///
/// `.` becomes `_`; letters, digits, `_` and `-` stay; the whole
/// (`webmcp_` + name) must fit in 64 characters.
pub fn exposed_name(name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("the page gave an empty name".into());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        return Err(format!("the name has {c:?}, outside [A-Za-z0-9_.-]"));
    }
    let exposed = format!("{PREFIX}{}", name.replace('.', "_"));
    if exposed.len() > MAX_EXPOSED {
        return Err(format!(
            "the name is {} characters; at most {} fit the model's function-name limit of {MAX_EXPOSED} after the {PREFIX:?} prefix",
            name.len(),
            MAX_EXPOSED - PREFIX.len()
        ));
    }
    if RESERVED.contains(&exposed.as_str()) {
        return Err(format!("{exposed} is one of lumo's own tools"));
    }
    Ok(exposed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_map_into_the_function_name_rule() {
        assert_eq!(exposed_name("search.products").as_deref(), Ok("webmcp_search_products"));
        assert_eq!(exposed_name("a-b_c").as_deref(), Ok("webmcp_a-b_c"));
        assert!(exposed_name(&"x".repeat(57)).is_ok());
        assert!(exposed_name(&"x".repeat(58)).is_err());
        assert!(exposed_name("a b").is_err());
        assert!(exposed_name("list").is_err());
        assert!(exposed_name("").is_err());
        let re = regex::Regex::new("^[a-zA-Z0-9_-]{1,64}$").expect("regex");
        assert!(re.is_match(&exposed_name(&"a.b".repeat(19)).unwrap_or_default()));
    }

    #[test]
    fn removal_and_navigation_drop_tools() {
        let mut t = TabTools::default();
        let add = json!({"tools": [{"name": "a", "frameId": "F", "description": "d"}, {"name": "b", "frameId": "G", "description": "d"}]});
        t.on_event("WebMCP.toolsAdded", &add);
        t.on_event("WebMCP.toolsAdded", &add);
        assert_eq!(t.tools.len(), 2);
        t.on_event("Page.frameNavigated", &json!({"frame": {"id": "F", "url": "http://127.0.0.1:1/x"}}));
        assert_eq!(t.tools.len(), 1);
        t.on_event("Page.frameDetached", &json!({"frameId": "G"}));
        assert!(t.tools.is_empty());
    }

    #[test]
    fn a_back_forward_cache_restore_keeps_the_restored_tools() {
        let mut t = TabTools::default();
        let add = |t: &mut TabTools, name: &str| {
            t.on_event("WebMCP.toolsAdded", &json!({"tools": [{"name": name, "frameId": "F", "description": name}]}))
        };
        let navigated = |kind: &str| json!({"frame": {"id": "F", "url": "http://127.0.0.1:1/x"}, "type": kind});
        t.on_event("Page.frameStartedNavigating", &json!({"frameId": "F", "navigationType": "differentDocument"}));
        t.on_event("Page.frameNavigated", &navigated("Navigation"));
        add(&mut t, "alpha");
        t.on_event("Page.frameStartedNavigating", &json!({"frameId": "F", "navigationType": "differentDocument"}));
        t.on_event("Page.frameNavigated", &navigated("Navigation"));
        add(&mut t, "beta");
        // Back: the restored document's tools come first, then frameNavigated.
        t.on_event(
            "Page.frameStartedNavigating",
            &json!({"frameId": "F", "navigationType": "historyDifferentDocument"}),
        );
        add(&mut t, "alpha");
        t.on_event("Page.frameNavigated", &navigated("BackForwardCacheRestore"));
        let names: Vec<&str> = t.tools.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["alpha"]);
    }
}

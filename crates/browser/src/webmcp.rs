//! WebMCP page tools: the tools a page registers with
//! `document.modelContext.registerTool` (or declares with `<form toolname>`),
//! discovered and invoked over the CDP `WebMCP` domain.
//!
//! Discovery: every attached tab enables `WebMCP` on its page session; the
//! tab keeps the registered tools per frame from `toolsAdded` / `toolsRemoved`
//! and drops a frame's tools itself on `Page.frameNavigated` and
//! `Page.frameDetached` (Chromium 156 sends no `toolsRemoved` on a
//! cross-document navigation or reload).
//!
//! Exposure: each tool of the selected tab is exposed as `webmcp_<name>`, its
//! name mapped into `^[a-zA-Z0-9_-]{1,64}$` ([`exposed_name`]); a name that is
//! too long, malformed, reserved or that collides after mapping is refused
//! visibly (first come first served across frames).
//!
//! Binding: every registration gets a generation that never repeats. Each MCP
//! session keeps its own [`PageBindings`], filled only by listing: a `webmcp_*`
//! name that session was shown is bound to that registration; when the page has
//! since navigated or registered the tool again, the call fails with
//! `stale_context` instead of running a different tool of the same name. A name
//! the session never listed is unknown ([`Unresolved::NotListed`]).
//!
//! Bounds (what a page can put in front of the model): descriptions cut at
//! [`MAX_DESCRIPTION_CHARS`], schemas up to [`MAX_SCHEMA_BYTES`], at most
//! [`MAX_TOOLS_PER_TAB`] exposed per tab; the rest refused with the reason.
//!
//! A back/forward-cache restore sends the restored document's `toolsAdded`
//! *before* its `Page.frameNavigated`: tools that arrived since the frame's
//! `Page.frameStartedNavigating` are the restored ones and are kept.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::{Value, json};

use crate::session::{Live, Session};
use crate::tab::Tab;
use crate::tool::{Hints, Tool, ToolOutput, ToolResult, fail};

/// The prefix of every exposed page tool.
pub(crate) const PREFIX: &str = "webmcp_";
/// Longest exposed name (the model function-name rule).
const MAX_EXPOSED: usize = 64;
/// Names of lumo's own `webmcp_*` tools, which page tools cannot take.
const RESERVED: [&str; 2] = ["webmcp_list", "webmcp_call"];
/// How long an invocation may run by default.
pub(crate) const INVOKE_TIMEOUT: Duration = Duration::from_secs(60);
/// How many finished invocations a tab remembers (a response may arrive before its waiter looks).
const RESPONSES_CAP: usize = 64;
/// Longest page tool description exposed, in characters; the rest is cut visibly.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Largest page tool input schema exposed, serialized; a bigger tool is refused.
pub(crate) const MAX_SCHEMA_BYTES: usize = 8192;
/// Most page tools exposed per tab (seed 000 allows a provider 64); the rest are refused.
pub(crate) const MAX_TOOLS_PER_TAB: usize = 64;
/// How long to wait for what a declarative (form) tool did.
const DECLARATIVE_SETTLE: Duration = Duration::from_millis(1500);

/// Document epochs: a frame gets a new one on every navigation; never repeats.
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// What binds an exposed name to one registration: tab, frame, document, name and definition.
/// An identical re-registration in the same document keeps it; anything else changes it.
fn binding(target: &str, t: &Registered, epoch: u64) -> u64 {
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

    fn response(&self, id: &str) -> Option<Response> {
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

/// A page tool of the selected tab, as lumo lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    /// The name the page registered.
    pub name: String,
    /// `webmcp_<mapped name>`, or why the tool is not exposed.
    pub exposed: Result<String, String>,
    /// The page's description.
    pub description: String,
    /// The page's input schema (an object schema; `{type: object}` when the page gave none).
    pub input_schema: Value,
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `consequentialHint`: running it has effects the user should confirm.
    pub consequential: bool,
    /// `untrustedContentHint`.
    pub untrusted_content: bool,
    /// Declared with `<form toolname>` rather than registered from script.
    pub declarative: bool,
    /// The frame that registered it.
    pub frame_id: String,
    /// That frame's URL.
    pub frame_url: String,
    /// That frame's origin (`scheme://host:port`).
    pub origin: String,
    /// Whether the frame is the tab's main frame.
    pub main_frame: bool,
    /// Binds the exposed name to this registration (tab, frame, document, name, definition).
    pub generation: u64,
    /// The tab it lives in.
    pub target_id: String,
}

impl PageTool {
    /// The MCP hints: read-only, consequential → destructive, open world (the page's server).
    pub fn hints(&self) -> Hints {
        Hints { read_only: self.read_only, destructive: self.consequential, open_world: true }
    }

    /// Its annotations as short words: read-only, consequential, untrusted-content, form.
    pub fn hint_words(&self) -> Vec<&'static str> {
        [
            (self.read_only, "read-only"),
            (self.consequential, "consequential"),
            (self.untrusted_content, "untrusted-content"),
            (self.declarative, "form"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect()
    }

    /// A short summary of the input schema: `a: string*, b: number` (`*` = required).
    pub fn schema_summary(&self) -> String {
        schema_summary(&self.input_schema)
    }
}

/// `{properties:{a:{type:string}}, required:[a]}` → `a: string*`.
pub fn schema_summary(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema["properties"].as_object() else { return "(no arguments)".into() };
    if properties.is_empty() {
        return "(no arguments)".into();
    }
    properties
        .iter()
        .map(|(name, p)| {
            let kind = match &p["type"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ if p.get("enum").is_some() => "enum".into(),
                _ => "any".into(),
            };
            let star = if required.contains(&name.as_str()) { "*" } else { "" };
            format!("{name}: {kind}{star}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn origin_of(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{host}")
}

fn flag(annotations: &Value, key: &str) -> bool {
    annotations[key].as_bool().unwrap_or(false)
}

/// A page's description, cut to [`MAX_DESCRIPTION_CHARS`] with a visible marker.
fn bounded_description(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_DESCRIPTION_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
    format!(
        "{kept} [… cut by lumo: the page's description has {count} characters; the first {MAX_DESCRIPTION_CHARS} are shown]"
    )
}

/// The page tools of one tab, mapped to exposed names in registration order.
///
/// Bounded (issue 8 item 3): descriptions are cut at [`MAX_DESCRIPTION_CHARS`],
/// a tool whose schema is over [`MAX_SCHEMA_BYTES`] is refused, and at most
/// [`MAX_TOOLS_PER_TAB`] are exposed; every refusal says why.
pub(crate) fn tab_tools(tab: &Tab) -> Vec<PageTool> {
    let s = tab.state();
    let mut taken: HashMap<String, (String, String)> = HashMap::new();
    let mut out = Vec::with_capacity(s.webmcp.tools.len());
    for t in &s.webmcp.tools {
        let frame_url = s.webmcp.frames.get(&t.frame_id).cloned().unwrap_or_default();
        let origin = origin_of(&frame_url);
        let mut input_schema = match &t.input_schema {
            Value::Object(_) => t.input_schema.clone(),
            _ => json!({"type": "object", "properties": {}}),
        };
        if input_schema.get("type").is_none()
            && let Some(map) = input_schema.as_object_mut()
        {
            map.insert("type".into(), json!("object"));
        }
        // The exposed schema is sanitized where lumo lists it (`sanitize_page_schema` in the MCP
        // front); arguments are validated against the page's own schema.
        let schema_bytes = input_schema.to_string().len();
        let exposed = exposed_name(&t.name)
            .and_then(|exposed| match taken.get(&exposed) {
                Some((first, first_origin)) => Err(format!(
                    "{exposed} is already taken by {:?} from {first_origin} (first come first served)",
                    clip(first, 80)
                )),
                None => Ok(exposed),
            })
            .and_then(|exposed| {
                if schema_bytes > MAX_SCHEMA_BYTES {
                    Err(format!(
                        "its inputSchema is {schema_bytes} bytes serialized; lumo exposes page tools with schemas up to {MAX_SCHEMA_BYTES} bytes"
                    ))
                } else if taken.len() >= MAX_TOOLS_PER_TAB {
                    Err(format!(
                        "the tab already exposes {MAX_TOOLS_PER_TAB} page tools, lumo's limit per tab (first come first served)"
                    ))
                } else {
                    taken.insert(exposed.clone(), (t.name.clone(), origin.clone()));
                    Ok(exposed)
                }
            });
        if schema_bytes > MAX_SCHEMA_BYTES {
            // Not exposed: keep the oversized schema out of every listing.
            input_schema = json!({"type": "object", "properties": {}});
        }
        out.push(PageTool {
            name: t.name.clone(),
            exposed,
            description: bounded_description(&t.description),
            input_schema,
            read_only: flag(&t.annotations, "readOnly"),
            consequential: flag(&t.annotations, "consequential"),
            untrusted_content: flag(&t.annotations, "untrustedContent"),
            declarative: t.backend_node_id.is_some(),
            frame_id: t.frame_id.clone(),
            main_frame: t.frame_id == s.main_frame,
            frame_url,
            origin,
            generation: binding(&tab.target_id, t, t.epoch),
            target_id: tab.target_id.clone(),
        });
    }
    out
}

/// Session-wide WebMCP state: a synchronous view of the running browser.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    live: Mutex<Weak<Live>>,
}

impl Shared {
    pub(crate) fn set_live(&self, live: &Arc<Live>) {
        *lock(&self.live) = Arc::downgrade(live);
    }

    fn live(&self) -> Option<Arc<Live>> {
        lock(&self.live).upgrade().filter(|l| !l.cdp.is_closed())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The page tools one MCP session was shown, by exposed name.
///
/// Each session (each stdio connection, each Streamable HTTP session) has its
/// own: a call binds only to what *that* session listed, and only listing
/// (`tools/list`, `webmcp_list`) fills it; looking a tool up never does.
#[derive(Debug, Default)]
pub struct PageBindings {
    shown: Mutex<HashMap<String, PageTool>>,
}

impl PageBindings {
    /// An empty table: nothing listed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that the session was shown `tools`: later calls of these names
    /// bind to exactly these registrations. Replaces what was shown before.
    pub fn bind(&self, tools: &[PageTool]) {
        let mut shown = lock(&self.shown);
        shown.clear();
        for t in tools {
            if let Ok(exposed) = &t.exposed {
                shown.insert(exposed.clone(), t.clone());
            }
        }
    }

    /// The registration an exposed name was bound to when the session listed it.
    pub fn get(&self, exposed: &str) -> Option<PageTool> {
        lock(&self.shown).get(exposed).cloned()
    }
}

/// Why a page tool name does not resolve for a session.
#[derive(Debug, Clone)]
pub enum Unresolved {
    /// The session was never shown a page tool of that name: an unknown tool.
    NotListed,
    /// It was shown, but that registration is gone or was replaced (`stale_context`),
    /// or the tool is refused (`forbidden`).
    Failed(ToolFailure),
}

impl Session {
    /// The page tools of the selected tab (exposed or refused), in registration
    /// order. Empty when no browser runs yet.
    pub fn page_tools(&self) -> Vec<PageTool> {
        let Some(tab) = self.webmcp.live().and_then(|l| l.selected(self.scope)) else { return Vec::new() };
        // A page the URL policy keeps closed (a file: page without --allow-file-urls) offers no tools.
        if self.policy.check_page(&tab.state().url).is_err() {
            return Vec::new();
        }
        tab_tools(&tab)
    }

    /// The page tools of the selected tab of every handle on this browser: what
    /// a watcher of list changes fingerprints (any handle's change may be news to its client).
    pub fn page_tools_everywhere(&self) -> Vec<PageTool> {
        let Some(live) = self.webmcp.live() else { return Vec::new() };
        live.all_selected().iter().flat_map(|tab| tab_tools(tab)).collect()
    }

    /// The page tool a name refers to for a session that was shown `bindings`.
    ///
    /// `name` is an exposed name (`webmcp_…`) or the name the page registered.
    /// A name the session never listed is [`Unresolved::NotListed`]; one it
    /// listed whose registration is gone or was replaced (navigation,
    /// re-registration, another tab selected) fails with `stale_context`.
    pub fn resolve_page_tool(&self, name: &str, bindings: &PageBindings) -> Result<PageTool, Unresolved> {
        let exposed =
            if name.starts_with(PREFIX) { name.to_string() } else { format!("{PREFIX}{}", name.replace('.', "_")) };
        let tools = self.page_tools();
        let Some(bound) = bindings.get(&exposed) else {
            // Refused tools are never listed as callable: say why rather than "unknown".
            let exposed_now = tools.iter().any(|t| t.exposed.as_deref() == Ok(exposed.as_str()));
            if !exposed_now
                && let Some(refused) = tools
                    .iter()
                    .find(|t| t.exposed.is_err() && (t.name == name || format!("{PREFIX}{}", t.name) == name))
            {
                let reason = refused.exposed.clone().err().unwrap_or_default();
                return Err(Unresolved::Failed(fail(
                    ErrorCode::Forbidden,
                    format!("page tool {:?} is not exposed: {reason}", clip(&refused.name, 80)),
                )));
            }
            return Err(Unresolved::NotListed);
        };
        let current = tools.iter().find(|t| t.exposed.as_deref() == Ok(exposed.as_str()));
        match current {
            Some(t) if t.target_id == bound.target_id && t.generation == bound.generation => Ok(t.clone()),
            Some(_) => Err(Unresolved::Failed(stale(
                &exposed,
                "the page registered it again, navigated or another tab is selected",
            ))),
            None => Err(Unresolved::Failed(stale(
                &exposed,
                "the page no longer offers it (it navigated or unregistered it)",
            ))),
        }
    }

    /// Whether the selected tab's main world has `document.modelContext`
    /// (WebMCP needs the feature flag and a secure context).
    pub async fn webmcp_available(&self) -> Result<bool, ToolFailure> {
        let (live, tab) = self.tab().await?;
        let result = live
            .call(
                &tab,
                "Runtime.evaluate",
                json!({"expression": "typeof document.modelContext === 'object' && document.modelContext !== null && typeof document.modelContext.registerTool === 'function'", "returnByValue": true}),
            )
            .await?;
        Ok(result["result"]["value"].as_bool().unwrap_or(false))
    }

    /// Waits until the selected tab has at least `count` page tools, or `timeout` passes.
    pub async fn wait_for_page_tools(&self, count: usize, timeout: Duration) -> Result<usize, ToolFailure> {
        let (_, tab) = self.tab().await?;
        crate::page::wait_until(&tab, timeout, |s| s.webmcp.tools.len() >= count).await;
        Ok(tab.state().webmcp.tools.len())
    }
}

fn stale(exposed: &str, why: &str) -> ToolFailure {
    fail(
        ErrorCode::StaleContext,
        format!(
            "{exposed}: the page tools changed ({why}). List them again (tools/list or webmcp_list) and call the new name."
        ),
    )
}

/// The MCP tool for a page tool: its spec is the page's, its handler invokes
/// exactly this registration.
pub fn page_tool(tool: &PageTool) -> Tool<Arc<Session>> {
    let bound = tool.clone();
    let mut t = Tool::new(
        tool.exposed.as_deref().unwrap_or(&tool.name),
        &tool.description,
        tool.hints(),
        move |session: Arc<Session>, input: Value| {
            let bound = bound.clone();
            async move { invoke(&session, &bound, input).await }
        },
    )
    .untrusted();
    t.spec.input_schema = tool.input_schema.clone();
    let mut notes = Vec::new();
    if tool.consequential {
        notes.push("consequential: asks for confirmation");
    }
    if tool.declarative {
        notes.push("a form on the page");
    }
    t.spec.description = format!(
        "[page tool {:?} from {}{}] {}",
        tool.name,
        tool.origin,
        if notes.is_empty() { String::new() } else { format!("; {}", notes.join("; ")) },
        tool.description
    );
    t
}

/// A tool for a `webmcp_*` name that no longer matches: it fails with `stale_context` (or why).
pub fn unavailable_page_tool(name: &str, failure: ToolFailure) -> Tool<Arc<Session>> {
    let mut t = Tool::new(name, "A page tool that is gone.", Hints::ACT, move |_: Arc<Session>, _: Value| {
        let failure = failure.clone();
        async move { Err(failure) }
    });
    t.spec.input_schema = json!({"type": "object"});
    t
}

/// Cancels a pending invocation when the call is dropped (MCP cancellation, timeout).
struct CancelOnDrop {
    live: Arc<Live>,
    /// The session of the tool's frame (a cross-origin frame has its own).
    session: String,
    invocation: String,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (live, session, id) = (self.live.clone(), self.session.clone(), std::mem::take(&mut self.invocation));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Err(e) = live.call_in(&session, "WebMCP.cancelInvocation", json!({"invocationId": id})).await {
                    tracing::debug!(error = %e.message, "could not cancel a page tool invocation");
                }
            });
        }
    }
}

/// Invokes a bound registration and waits for its answer.
pub(crate) async fn invoke(session: &Session, bound: &PageTool, input: Value) -> ToolResult {
    invoke_with_timeout(session, bound, input, INVOKE_TIMEOUT).await
}

async fn invoke_with_timeout(session: &Session, bound: &PageTool, input: Value, timeout: Duration) -> ToolResult {
    let live = session.live().await?;
    // Only a tab of the caller's own browser context.
    let tab = live
        .tabs_in(session.scope)
        .into_iter()
        .find(|t| t.target_id == bound.target_id)
        .ok_or_else(|| stale(bound.exposed.as_deref().unwrap_or(&bound.name), "its tab was closed"))?;
    session.check_readable(&live, &tab).await?;
    let still_there = |tab: &Tab| tab_tools(tab).iter().any(|t| t.generation == bound.generation);
    if !still_there(&tab) {
        return Err(stale(bound.exposed.as_deref().unwrap_or(&bound.name), "the registration is gone"));
    }
    crate::page::ensure_no_dialog(&tab)?;
    let input = if input.is_object() { input } else { json!({}) };
    let (url_before, title_before, navigations_before, marks_before) = {
        let s = tab.state();
        (s.url.clone(), s.title.clone(), s.navigations, s.marks())
    };
    let title_before =
        if bound.declarative { document_title(&live, &tab).await.unwrap_or(title_before) } else { title_before };
    let frame_session = tab.session_for_frame(&bound.frame_id);
    let started = live
        .call_in(
            &frame_session,
            "WebMCP.invokeTool",
            json!({"frameId": bound.frame_id, "toolName": bound.name, "input": input}),
        )
        .await
        .map_err(|e| {
            if e.message.contains("not found") {
                stale(bound.exposed.as_deref().unwrap_or(&bound.name), "the page no longer has it")
            } else {
                e
            }
        })?;
    let id = started["invocationId"]
        .as_str()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, "the browser gave no invocation id"))?
        .to_string();
    let mut guard = CancelOnDrop { live: live.clone(), session: frame_session, invocation: id.clone(), armed: true };
    let wait = if bound.declarative { DECLARATIVE_SETTLE } else { timeout };
    let mut gone_since: Option<tokio::time::Instant> = None;
    let deadline = tokio::time::Instant::now() + wait;
    let response = loop {
        let notified = tab.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(r) = tab.state().webmcp.response(&id) {
            break Some(r);
        }
        if !still_there(&tab) && bound.declarative {
            break None;
        }
        if !still_there(&tab) {
            // Give a response that raced the removal a moment to arrive.
            let since = *gone_since.get_or_insert_with(tokio::time::Instant::now);
            if since.elapsed() > Duration::from_millis(300) {
                guard.armed = false;
                let s = tab.state();
                let why = if s.navigations != navigations_before {
                    format!("the page navigated to {} during the call", s.url)
                } else {
                    "the page removed the tool during the call".to_string()
                };
                return Err(fail(
                    ErrorCode::StaleContext,
                    format!(
                        "{}: {why}; the tool gave no answer. Its effect is unknown: check the page (page_snapshot) before calling again.",
                        bound.name
                    ),
                ));
            }
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            break None;
        }
        let tick = if gone_since.is_some() { Duration::from_millis(50) } else { deadline - now };
        let _ = tokio::time::timeout(tick.min(deadline - now), notified).await;
    };
    let Some(response) = response else {
        if bound.declarative {
            guard.armed = false;
            return Ok(declarative_report(&live, &tab, bound, &url_before, &title_before, navigations_before).await);
        }
        // The guard cancels the invocation in the page.
        return Err(fail(
            ErrorCode::Timeout,
            format!("page tool {:?} gave no answer within {}s; lumo cancelled it", bound.name, timeout.as_secs()),
        ));
    };
    guard.armed = false;
    match response.status.as_str() {
        "Completed" => {
            let output = response.output.unwrap_or(Value::Null);
            // Chromium 156 ends an invocation whose page unloads as Completed with `[]`:
            // tell a navigation apart from a tool that answered nothing.
            let empty = output.is_null() || output.as_array().is_some_and(Vec::is_empty);
            if empty
                && crate::page::wait_until(&tab, Duration::from_millis(1500), |s| s.navigations != navigations_before)
                    .await
            {
                let (url, title) = {
                    let s = tab.state();
                    (s.url.clone(), s.title.clone())
                };
                // URLs and titles are the page's (a URL can carry a token): fenced.
                return Ok(ToolOutput::text(format!(
                    "Page tool {:?} navigated the page before it answered (no output). The page tools changed: list them again (tools/list or webmcp_list).",
                    bound.name
                ))
                .with_page_text(format!("url before: {url_before}\nurl: {url}\ntitle: {title}"))
                .with_structured(json!({"ok": true, "navigated": true, "urlBefore": url_before, "url": url, "title": title})));
            }
            let mut out = completed(bound, output);
            // A tool may move the page as it answers: say so, as actions do.
            crate::action::settle(&tab, marks_before, crate::action::Reach::MayNavigate).await;
            note_move(&tab, &mut out, &url_before, navigations_before);
            Ok(out)
        }
        "Canceled" => Err(fail(ErrorCode::Cancelled, format!("page tool {:?} was cancelled", bound.name))),
        _ => {
            let text = response
                .error_text
                .filter(|t| !t.is_empty())
                .or(response.exception)
                .unwrap_or_else(|| "the page tool failed without saying why".to_string());
            // The page's error text is the page's words: fenced, never lumo's own message.
            Ok(ToolOutput::page_failure(
                fail(
                    ErrorCode::OperationFailed,
                    format!("page tool {:?} failed; the page's error text follows", bound.name),
                ),
                format!("error: {}", clip(&text, 2000)),
            ))
        }
    }
}

pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// Most images a page tool's MCP-shaped answer may carry.
const MAX_IMAGES: usize = 8;
/// Largest image (base64 characters) taken from a page tool's answer.
const MAX_IMAGE_BASE64: usize = 8 * 1024 * 1024;
/// Longest page text taken from one answer (the gate's budget cuts the rest of the answer).
const MAX_PAGE_TEXT: usize = 200_000;

/// Shapes a completed answer.
///
/// Three shapes are seen in the wild (PLATFORM-NOTES): MCP's own
/// `{content:[…], isError?, structuredContent?}` (`@mcp-b/global`), which is
/// unwrapped (text as page text, images as images); a plain object that reports
/// a failure (`{ok:false, …}` or `{isError:true, …}`), which becomes a failure
/// (`isError`) with the page's words fenced; anything else, which is the answer.
fn completed(bound: &PageTool, output: Value) -> ToolOutput {
    // `executeTool` results may come as a JSON string: read it when it parses.
    let output = match output {
        Value::String(s) => serde_json::from_str::<Value>(&s).unwrap_or(Value::String(s)),
        other => other,
    };
    if let Some(out) = mcp_shaped(bound, &output) {
        return out;
    }
    let compact = output.to_string();
    let business_error = output["isError"].as_bool() == Some(true) || output["ok"].as_bool() == Some(false);
    if business_error {
        return ToolOutput::page_failure(
            fail(
                ErrorCode::OperationFailed,
                format!(
                    "page tool {:?} from {} reported a failure; its code and message are in the page's answer below",
                    bound.name, bound.origin
                ),
            ),
            clip(&compact, MAX_PAGE_TEXT),
        )
        .with_structured(json!({"pageError": page_error(&output), "output": output}));
    }
    let structured = match &output {
        Value::Object(_) => output.clone(),
        _ => json!({"result": output}),
    };
    ToolOutput::text(format!("Page tool {:?} from {} answered:", bound.name, bound.origin))
        .with_page_text(clip(&compact, MAX_PAGE_TEXT))
        .with_structured(structured)
}

/// `{code, message}` of a page-reported failure, from the usual places.
fn page_error(output: &Value) -> Value {
    let error = &output["error"];
    let code = error["code"].as_str().or(output["code"].as_str());
    let message = error["message"].as_str().or(error.as_str()).or(output["message"].as_str());
    json!({"code": code, "message": message.map(|m| clip(m, 2000))})
}

/// Unwraps an answer in MCP's own result shape, or `None` when it is not one.
fn mcp_shaped(bound: &PageTool, output: &Value) -> Option<ToolOutput> {
    let map = output.as_object()?;
    let blocks = map.get("content")?.as_array()?;
    let known = ["content", "isError", "structuredContent", "_meta"];
    if !map.keys().all(|k| known.contains(&k.as_str()))
        || !blocks.iter().all(|b| b["type"].is_string())
        || map.get("isError").is_some_and(|e| !e.is_boolean())
    {
        return None;
    }
    let mut texts = Vec::new();
    let mut images = Vec::new();
    let mut dropped = 0usize;
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => texts.push(block["text"].as_str().unwrap_or_default().to_string()),
            Some("image") => {
                let (data, mime) =
                    (block["data"].as_str().unwrap_or_default(), block["mimeType"].as_str().unwrap_or_default());
                let base64ish =
                    data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'));
                if mime.starts_with("image/")
                    && !data.is_empty()
                    && base64ish
                    && data.len() <= MAX_IMAGE_BASE64
                    && images.len() < MAX_IMAGES
                {
                    images.push(crate::tool::Image { mime: mime.to_string(), data: data.replace(['\n', '\r'], "") });
                } else {
                    dropped += 1;
                }
            }
            // Audio, resources, links: shown as their JSON, as the page's words.
            _ => texts.push(block.to_string()),
        }
    }
    let mut page_text = clip(&texts.join("\n"), MAX_PAGE_TEXT);
    if dropped > 0 {
        page_text.push_str(&format!("\n[{dropped} image block(s) dropped by lumo: not image/* base64, over {MAX_IMAGE_BASE64} characters, or over {MAX_IMAGES} images]"));
    }
    let structured = map.get("structuredContent").filter(|v| v.is_object()).cloned();
    let mut out = if map.get("isError").and_then(Value::as_bool) == Some(true) {
        let mut out = ToolOutput::page_failure(
            fail(
                ErrorCode::OperationFailed,
                format!(
                    "page tool {:?} from {} reported a failure (isError); the page's words follow",
                    bound.name, bound.origin
                ),
            ),
            page_text,
        );
        out.structured = structured.map(|s| json!({"output": s}));
        out
    } else {
        let mut out = ToolOutput::text(format!("Page tool {:?} from {} answered:", bound.name, bound.origin));
        if !page_text.is_empty() {
            out.page_text = Some(page_text);
        }
        out.structured = structured;
        out
    };
    out.images = images;
    Some(out)
}

/// Appends to an answer that the page moved while the tool ran (a navigation or a URL change).
fn note_move(tab: &Tab, out: &mut ToolOutput, url_before: &str, navigations: u64) {
    let s = tab.state();
    let note = if s.navigations != navigations {
        "\nThe page navigated (URLs below); its page tools may have changed: list them again (tools/list or webmcp_list)."
    } else if s.url != url_before {
        "\nThe page's URL changed (URLs below)."
    } else {
        return;
    };
    match out.failure.as_mut() {
        Some(failure) => failure.message.push_str(note),
        None => out.text.push_str(note),
    }
    // URLs are the page's (a URL can carry a token): they go with the fenced page text.
    let urls = format!("url before: {url_before}\nurl: {}", s.url);
    out.page_text = Some(match out.page_text.take() {
        Some(page) => format!("{page}\n{urls}"),
        None => urls,
    });
}

/// The main frame's `document.title` (the target's title is a URL-shaped
/// placeholder until the page sets one, and for form tool results).
async fn document_title(live: &Live, tab: &Tab) -> Option<String> {
    let result = live
        .call(tab, "Runtime.evaluate", json!({"expression": "document.title", "returnByValue": true}))
        .await
        .ok()?;
    result["result"]["value"].as_str().map(|t| clip(t, 300))
}

/// What a declarative (form) tool did: Chromium sends no `toolResponded` for them.
async fn declarative_report(
    live: &Live,
    tab: &Tab,
    bound: &PageTool,
    url_before: &str,
    title_before: &str,
    navigations: u64,
) -> ToolOutput {
    // A submission that navigates takes a moment more to land.
    if crate::page::wait_until(tab, Duration::from_millis(300), |s| s.loading || s.navigations != navigations).await {
        crate::page::wait_until(tab, Duration::from_secs(5), |s| s.navigations != navigations && !s.loading).await;
    }
    let (url, navigated) = {
        let s = tab.state();
        (s.url.clone(), s.navigations != navigations || s.url != url_before)
    };
    // Chromium's own title for the result is a URL-shaped placeholder: read the document's.
    let title = document_title(live, tab).await.unwrap_or_default();
    let text = if navigated {
        format!(
            "Form tool {:?} filled and submitted the form; the page moved (URLs below). The page sends no result for form tools: read the page to see the outcome.",
            bound.name
        )
    } else {
        format!(
            "Form tool {:?} filled the form; the page stayed where it was{}. The page sends no result for form tools: read the page (page_snapshot) to see what changed, and submit it yourself if it was only filled.",
            bound.name,
            if title != title_before { " (its title changed)" } else { "" }
        )
    };
    // The title is the page's words.
    ToolOutput::text(text)
        .with_page_text(format!("url before: {url_before}\nurl: {url}\ntitle: {title}"))
        .with_structured(json!({
            "ok": true,
            "declarative": true,
            "navigated": navigated,
            "urlBefore": url_before,
            "url": url,
            "title": title,
        }))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn descriptions_are_cut_visibly() {
        assert_eq!(bounded_description("short"), "short");
        let cut = bounded_description(&"é".repeat(5000));
        assert!(cut.starts_with(&"é".repeat(MAX_DESCRIPTION_CHARS)));
        assert!(cut.contains("cut by lumo") && cut.contains("5000"), "{cut}");
    }

    #[test]
    fn schema_summaries_are_short() {
        let s = json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "number"}}, "required": ["q"]});
        assert_eq!(schema_summary(&s), "n: number, q: string*");
        assert_eq!(schema_summary(&json!({})), "(no arguments)");
    }
}

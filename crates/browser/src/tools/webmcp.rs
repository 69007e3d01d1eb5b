//! The page tools' own built-ins: `webmcp_list` and `webmcp_call`, for
//! clients that do not follow `notifications/tools/list_changed`.
//!
//! Listing binds: `webmcp_list` fills the calling MCP session's
//! [`PageBindings`], so the host builds it per call with [`list_bound`]; the
//! copy in [`tools`] (for the tool list) lists without binding.
//!
//! Routing: [`route`] tells the host which tool a call of these names runs,
//! so the host never names a browser tool: `webmcp_list` runs bound to the
//! caller's session, `webmcp_call {name, input}` runs the page tool itself
//! (after its own arguments are checked against its own schema), and a
//! `webmcp_*` page tool name runs the registration that session listed.

use std::sync::Arc;

use lumo_protocol::text::clip_marked;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, OnTab, Page, TabUse, off_tab, on_tab};
use crate::session::Session;
use crate::tool::{Hints, Outcome, Tool, ToolOutput, ToolSpec, fail};
use crate::webmcp::registry::PREFIX;
use crate::webmcp::{PageBindings, PageTool, Unresolved, invoke, page_tool, unavailable_page_tool};

/// How many refused tools `webmcp_list` names one by one; the rest are counted.
const REFUSED_SHOWN: usize = 20;

const LIST_DESCRIPTION: &str = "List the tools the selected tab's page registered with WebMCP: exposed name, annotations, arguments, frame origin; refused ones with the reason. Listing makes them callable in this session.";

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new("webmcp_list", LIST_DESCRIPTION, Hints::READ, |session: Ctx, _: ListArgs| list(session, None)),
        call_tool(),
    ]
}

fn call_tool() -> Tool<Ctx> {
    Tool::new(
        "webmcp_call",
        "Call a page tool of the selected tab by its name (as webmcp_list shows it) with its input object.",
        Hints { read_only: false, destructive: true, open_world: true },
        call,
    )
    .untrusted()
}

/// A call routed to the tool that runs it.
pub struct Routed {
    /// The tool that runs.
    pub tool: Tool<Ctx>,
    /// The arguments it runs with.
    pub args: Value,
    /// The page tool it runs, if it is one (the gate asks before a consequential one).
    pub page: Option<PageTool>,
    /// The tool the call named and the arguments it gave, when the call routed
    /// elsewhere (`webmcp_call` to a page tool): checked against that tool's
    /// schema before the routed tool's.
    pub addressed: Option<(ToolSpec, Value)>,
}

impl Routed {
    /// A call that runs the tool it named.
    pub fn to(tool: Tool<Ctx>, args: Value) -> Self {
        Self { tool, args, page: None, addressed: None }
    }
}

/// Routes a call for the MCP session that was shown `bindings`, when its name
/// is one the built-in list alone cannot run: `webmcp_list` (binds what it
/// lists in that session), `webmcp_call` with a page tool name (runs that
/// page tool, so it passes the same checks), or a `webmcp_*` page tool that
/// session listed (or one it listed that is gone: that call fails saying why).
/// `Err(args)`: not routed here (a built-in tool, or a name never listed).
pub fn route(session: &Session, name: &str, args: Value, bindings: &Arc<PageBindings>) -> Result<Routed, Value> {
    if name == "webmcp_list" {
        return Ok(Routed::to(list_bound(bindings.clone()), args));
    }
    if name == "webmcp_call"
        && let Some(target) = args["name"].as_str().map(str::to_string)
    {
        let addressed = Some((call_tool().spec, args.clone()));
        let input = args.get("input").cloned().unwrap_or_else(|| json!({}));
        // Through webmcp_call an unlisted name is a tool failure that says what to do.
        let routed = route_page_tool(session, &target, input, bindings)
            .unwrap_or_else(|input| Routed::to(unavailable_page_tool("webmcp_call", not_listed(&target)), input));
        return Ok(Routed { addressed, ..routed });
    }
    if name.starts_with(PREFIX) && !is_builtin(name) {
        return route_page_tool(session, name, args, bindings);
    }
    Err(args)
}

fn is_builtin(name: &str) -> bool {
    name == "webmcp_list" || name == "webmcp_call"
}

/// Whether a call of `name` belongs to page tools (for the audit's source):
/// `webmcp_call` and every `webmcp_*` page tool; `webmcp_list` is lumo's own.
pub fn is_page_tool_call(name: &str) -> bool {
    name.starts_with(PREFIX) && name != "webmcp_list"
}

/// The page tool `name` is bound to; `Err(args)` when the session never listed it.
fn route_page_tool(session: &Session, name: &str, args: Value, bindings: &PageBindings) -> Result<Routed, Value> {
    match session.resolve_page_tool(name, bindings) {
        Ok(page) => Ok(Routed { page: Some(page.clone()), ..Routed::to(page_tool(&page), args) }),
        Err(Unresolved::Failed(failure)) => Ok(Routed::to(unavailable_page_tool(name, failure), args)),
        Err(Unresolved::NotListed) => Err(args),
    }
}

/// `webmcp_list` for one MCP session: what it lists is bound in `bindings`.
fn list_bound(bindings: Arc<PageBindings>) -> Tool<Ctx> {
    Tool::new("webmcp_list", LIST_DESCRIPTION, Hints::READ, move |session: Ctx, _: ListArgs| {
        let bindings = bindings.clone();
        async move { list(session, Some(&bindings)).await }
    })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {}

/// One page tool as JSON.
pub(crate) fn describe(t: &PageTool) -> Value {
    json!({
        "name": t.name,
        "exposedName": t.exposed.as_ref().ok(),
        "refused": t.exposed.as_ref().err(),
        "description": t.description,
        "annotations": {"readOnlyHint": t.read_only, "consequentialHint": t.consequential, "untrustedContentHint": t.untrusted_content},
        "declarative": t.declarative,
        "arguments": t.schema_summary(),
        "inputSchema": t.input_schema,
        "frame": {"id": t.frame_id, "url": t.frame_url, "origin": t.origin, "main": t.main_frame},
    })
}

/// A refused tool as JSON: its name (clipped) and why, nothing more of the page's.
fn describe_refused(t: &PageTool) -> Value {
    json!({"name": clip_marked(&t.name, 80), "refused": t.exposed.as_ref().err(), "frame": {"origin": t.origin, "main": t.main_frame}})
}

async fn list(session: Ctx, bindings: Option<&PageBindings>) -> Outcome {
    let session = &session;
    on_tab(session, TabUse::UNLOCKED, |OnTab { tab, .. }| async move {
        let tools = session.page_tools();
        if let Some(bindings) = bindings {
            bindings.bind(&tools);
        }
        let url = tab.state().url.clone();
        let (exposed, refused): (Vec<&PageTool>, Vec<&PageTool>) = tools.iter().partition(|t| t.exposed.is_ok());
        let mut text = if tools.is_empty() {
            format!("The page ({url}) registered no WebMCP tools.")
        } else {
            format!("{} page tool(s) on {url}:", exposed.len())
        };
        if !refused.is_empty() {
            text.push_str(&format!(" {} more refused (reasons below).", refused.len()));
        }
        let mut lines = Vec::new();
        for t in &exposed {
            lines.push(format!(
                "- {} [{}] page name {:?} from {}: ({}) {}",
                t.exposed.as_deref().unwrap_or_default(),
                t.hint_words().join(", "),
                t.name,
                t.origin,
                t.schema_summary(),
                t.description
            ));
        }
        for t in refused.iter().take(REFUSED_SHOWN) {
            lines.push(format!(
                "- (refused: {}) page name {:?} from {}",
                t.exposed.as_ref().err().map(String::as_str).unwrap_or_default(),
                clip_marked(&t.name, 80),
                t.origin
            ));
        }
        if refused.len() > REFUSED_SHOWN {
            lines.push(format!("- … and {} more refused", refused.len() - REFUSED_SHOWN));
        }
        let structured = json!({
            "ok": true,
            "url": url,
            "tools": exposed.iter().map(|t| describe(t)).collect::<Vec<_>>(),
            "refused": refused.iter().take(REFUSED_SHOWN).map(|t| describe_refused(t)).collect::<Vec<_>>(),
            "refusedCount": refused.len(),
        });
        let mut out = ToolOutput::text(text).with_structured(structured);
        if !lines.is_empty() {
            // Names and descriptions are the page's words.
            out = out.with_page_text(lines.join("\n"));
        }
        Ok(out)
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    /// The page tool: its exposed name (`webmcp_…`) or the name the page registered.
    name: String,
    /// The tool's input, matching its inputSchema.
    #[serde(default)]
    #[schemars(extend("type" = "object", "additionalProperties" = true))]
    input: Option<Value>,
}

/// Without a session's bindings only refusals resolve: the host routes
/// `webmcp_call` to the page tool itself, with the caller's bindings.
async fn call(session: Ctx, args: CallArgs) -> Outcome {
    let tool = match session.resolve_page_tool(&args.name, &PageBindings::new()) {
        Ok(tool) => tool,
        Err(Unresolved::Failed(failure)) => return Err(failure.into()),
        Err(Unresolved::NotListed) => return Err(not_listed(&args.name).into()),
    };
    off_tab(&session, Page::Checked, invoke(&session, &tool, args.input.unwrap_or_else(|| json!({})))).await
}

/// The answer for a page tool name this session was never shown.
fn not_listed(name: &str) -> lumo_protocol::ToolFailure {
    fail(
        lumo_protocol::ErrorCode::NotFound,
        format!(
            "no page tool {:?} was listed in this session; list them (webmcp_list or tools/list) and call a listed name",
            clip_marked(name, 80)
        ),
    )
}

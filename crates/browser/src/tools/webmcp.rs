//! The page tools' own built-ins: `webmcp_list` and `webmcp_call`, for
//! clients that do not follow `notifications/tools/list_changed`.
//!
//! Listing binds: `webmcp_list` fills the calling MCP session's
//! [`PageBindings`], so the host builds it per call with [`list_bound`]; the
//! copy in [`tools`] (for the tool list) lists without binding.

use std::sync::Arc;

use lumo_protocol::text::clip_marked;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, with_notices};
use crate::tool::{Hints, Tool, ToolOutput, ToolResult, fail};
use crate::webmcp::{PageBindings, PageTool, Unresolved, invoke};

/// How many refused tools `webmcp_list` names one by one; the rest are counted.
const REFUSED_SHOWN: usize = 20;

const LIST_DESCRIPTION: &str = "List the tools the selected tab's page registered with WebMCP: exposed name, annotations, arguments, frame origin; refused ones with the reason. Listing makes them callable in this session.";

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new("webmcp_list", LIST_DESCRIPTION, Hints::READ, |session: Ctx, _: ListArgs| list(session, None)),
        Tool::new(
            "webmcp_call",
            "Call a page tool of the selected tab by its name (as webmcp_list shows it) with its input object.",
            Hints { read_only: false, destructive: true, open_world: true },
            call,
        )
        .untrusted(),
    ]
}

/// `webmcp_list` for one MCP session: what it lists is bound in `bindings`.
pub fn list_bound(bindings: Arc<PageBindings>) -> Tool<Ctx> {
    Tool::new("webmcp_list", LIST_DESCRIPTION, Hints::READ, move |session: Ctx, _: ListArgs| {
        let bindings = bindings.clone();
        async move { list(session, Some(&bindings)).await }
    })
    .after(with_notices)
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

async fn list(session: Ctx, bindings: Option<&PageBindings>) -> ToolResult {
    let (_, tab) = session.tab().await?;
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
async fn call(session: Ctx, args: CallArgs) -> ToolResult {
    match session.resolve_page_tool(&args.name, &PageBindings::new()) {
        Ok(tool) => invoke(&session, &tool, args.input.unwrap_or_else(|| json!({}))).await,
        Err(Unresolved::Failed(failure)) => Err(failure),
        Err(Unresolved::NotListed) => Err(not_listed(&args.name)),
    }
}

/// The answer for a page tool name this session was never shown.
pub fn not_listed(name: &str) -> lumo_protocol::ToolFailure {
    fail(
        lumo_protocol::ErrorCode::NotFound,
        format!(
            "no page tool {:?} was listed in this session; list them (webmcp_list or tools/list) and call a listed name",
            clip_marked(name, 80)
        ),
    )
}

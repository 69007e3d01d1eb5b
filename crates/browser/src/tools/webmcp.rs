//! The page tools' own built-ins: `webmcp_list` and `webmcp_call`, for
//! clients that do not follow `notifications/tools/list_changed`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Ctx;
use crate::tool::{Hints, Tool, ToolOutput, ToolResult};
use crate::webmcp::{PageTool, invoke};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "webmcp_list",
            "List the tools the selected tab's page registered with WebMCP: exposed name, annotations, arguments, frame origin; refused ones with the reason.",
            Hints::READ,
            list,
        ),
        Tool::new(
            "webmcp_call",
            "Call a page tool of the selected tab by its name (as webmcp_list shows it) with its input object.",
            Hints { read_only: false, destructive: true, open_world: true },
            call,
        )
        .untrusted(),
    ]
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

async fn list(session: Ctx, _: ListArgs) -> ToolResult {
    let (_, tab) = session.tab().await?;
    let tools = session.page_tools();
    session.mark_page_tools_shown(&tools);
    let url = tab.state().url.clone();
    let mut text = if tools.is_empty() {
        format!("The page ({url}) registered no WebMCP tools.")
    } else {
        format!("{} page tool(s) on {url}:", tools.len())
    };
    let mut lines = Vec::new();
    for t in &tools {
        let hints = t.hint_words();
        let head = match &t.exposed {
            Ok(exposed) => exposed.clone(),
            Err(reason) => format!("(refused: {reason})"),
        };
        lines.push(format!(
            "- {head} [{}] page name {:?} from {}: ({}) {}",
            hints.join(", "),
            t.name,
            t.origin,
            t.schema_summary(),
            t.description
        ));
    }
    let structured = json!({"ok": true, "url": url, "tools": tools.iter().map(describe).collect::<Vec<_>>()});
    let mut out = ToolOutput::text(std::mem::take(&mut text)).with_structured(structured);
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

async fn call(session: Ctx, args: CallArgs) -> ToolResult {
    let tool = session.resolve_page_tool(&args.name)?;
    invoke(&session, &tool, args.input.unwrap_or_else(|| json!({}))).await
}

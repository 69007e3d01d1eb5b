//! Reading the page: `page_snapshot` (a compact tree with refs) and `page_find`.

use lumo_protocol::ErrorCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::Ctx;
use crate::page::{check_ref, lumo_call, stale_ref};
use crate::tool::{Hints, Tool, ToolOutput, ToolResult, fail};

/// The default byte budget of a snapshot: enough for a 5,000-element page in
/// lumo's terse format, small enough to leave the model room to think.
pub(crate) const DEFAULT_SNAPSHOT_BYTES: usize = 100_000;
const MAX_SNAPSHOT_BYTES: usize = 2_000_000;

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "page_snapshot",
            "Read the page as a compact tree; actionable elements carry refs like [e12] for other page_* tools.",
            Hints::READ,
            snapshot,
        )
        .untrusted(),
        Tool::new(
            "page_find",
            "Find elements by text, role or regex; returns matches with refs and context.",
            Hints::READ,
            find,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SnapshotArgs {
    /// Only the subtree of this ref.
    #[serde(rename = "ref")]
    root: Option<String>,
    /// Only actionable elements, as a flat list.
    #[serde(default)]
    interactive: bool,
    /// Only what is inside the viewport.
    #[serde(default)]
    viewport: bool,
    /// Byte budget of the answer (default 100000).
    max_bytes: Option<usize>,
}

async fn snapshot(session: Ctx, args: SnapshotArgs) -> ToolResult {
    if let Some(r) = &args.root {
        check_ref(r)?;
    }
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_SNAPSHOT_BYTES);
    if !(200..=MAX_SNAPSHOT_BYTES).contains(&max_bytes) {
        return Err(fail(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside 200–{MAX_SNAPSHOT_BYTES}"),
        ));
    }
    let (live, tab) = session.tab().await?;
    let _busy = tab.busy.lock().await;
    let result = lumo_call(
        &live,
        &tab,
        "snapshot",
        json!({"ref": args.root, "interactive": args.interactive, "viewport": args.viewport, "maxBytes": max_bytes}),
    )
    .await?;
    if result["error"] == "stale_ref" {
        return Err(stale_ref(args.root.as_deref().unwrap_or_default()));
    }
    let mut body = result["text"].as_str().unwrap_or_default().to_string();
    let omitted = result["omitted"].as_u64().unwrap_or(0);
    if omitted > 0 {
        body.push_str(&format!(
            "\n[truncated: {omitted} more lines over the {max_bytes}-byte budget; use page_find, a subtree (ref), interactive or viewport, or a larger max_bytes]"
        ));
    }
    let url = tab.state().url.clone();
    let title = result["title"].as_str().unwrap_or_default();
    let text = format!("Snapshot of {url}");
    let header = if title.is_empty() { String::new() } else { format!("title: {title}\n") };
    Ok(ToolOutput::text(text).with_page_text(format!("{header}{body}")))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    /// Case-insensitive text contained in the element's name, value or text.
    text: Option<String>,
    /// ARIA role, e.g. button, link, textbox, heading, row.
    role: Option<String>,
    /// JavaScript regular expression (case-insensitive) matched against the same text.
    regex: Option<String>,
    /// Most matches to return (default 20, at most 200).
    limit: Option<u32>,
}

async fn find(session: Ctx, args: FindArgs) -> ToolResult {
    if args.text.is_none() && args.role.is_none() && args.regex.is_none() {
        return Err(fail(ErrorCode::InvalidArguments, "give at least one of text, role or regex"));
    }
    let limit = args.limit.unwrap_or(20);
    if !(1..=200).contains(&limit) {
        return Err(fail(ErrorCode::InvalidArguments, format!("limit: {limit} is outside 1–200")));
    }
    let (live, tab) = session.tab().await?;
    let _busy = tab.busy.lock().await;
    let result = lumo_call(
        &live,
        &tab,
        "find",
        json!({"text": args.text, "role": args.role, "regex": args.regex, "limit": limit}),
    )
    .await?;
    if let Some(error) = result["error"].as_str() {
        return Err(fail(ErrorCode::InvalidArguments, error.to_string()));
    }
    let total = result["total"].as_u64().unwrap_or(0);
    let body = result["text"].as_str().unwrap_or_default().to_string();
    let text = match total {
        0 => "No match. Try other words, a role, or page_snapshot.".to_string(),
        n if n > u64::from(limit) => format!("{n} matches, first {limit}:"),
        n => format!("{n} match{}:", if n == 1 { "" } else { "es" }),
    };
    let out = ToolOutput::text(text).with_structured(json!({"total": total}));
    Ok(if body.is_empty() { out } else { out.with_page_text(body) })
}

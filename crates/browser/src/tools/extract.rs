//! Reading what a page says: `page_extract`, the main content as compact
//! Markdown (title, byline, language, published time; links and buttons with
//! the same refs `page_snapshot` gives), or, with `extractor`, the typed
//! fields and records a declarative extractor (`crate::extractors`) reads.

use lumo_protocol::ErrorCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::extractors::{self, Extractor, url_matches};
use crate::helper::{frame_owner, reader};
use crate::page::child_frames;
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Hints, Tool, ToolOutput, ToolResult, fail};

/// Default byte budget: a long article fits, a whole site's furniture does not get in.
const DEFAULT_EXTRACT_BYTES: usize = 50_000;
const MAX_EXTRACT_BYTES: usize = 2_000_000;

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "page_extract",
            "Read the page's main content as compact Markdown (title, byline, language, published time; links and buttons carry refs like [e12] for other page_* tools); with extractor, the typed fields and records an extractor reads (mail thread, chat, issue, CRM record, table, search results, and site ones).",
            Hints::READ,
            extract,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExtractArgs {
    /// Read with this extractor instead (its name: e.g. mail-thread, chat-channel, issue, crm-record,
    /// data-table, search-results, gmail, slack, jira, salesforce, servicenow, hubspot, or one of yours).
    extractor: Option<String>,
    /// Byte budget of the answer (default 50000).
    #[schemars(range(min = 200, max = 2_000_000))]
    max_bytes: Option<usize>,
    /// Start at this block (Markdown) or record (extractor): the continuation of a cut answer (its marker gives the number).
    #[serde(default)]
    offset: usize,
}

async fn extract(session: Ctx, args: ExtractArgs) -> ToolResult {
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_EXTRACT_BYTES);
    if !(200..=MAX_EXTRACT_BYTES).contains(&max_bytes) {
        return Err(fail(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside 200–{MAX_EXTRACT_BYTES}"),
        )
        .into());
    }
    let all = extractors::load(&session.extractor_dirs)
        .map_err(|e| fail(ErrorCode::InvalidState, format!("{e}. Fix or remove that file.")))?;
    let chosen = match &args.extractor {
        Some(name) => Some(all.iter().find(|e| &e.def.name == name).cloned().ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|e| e.def.name.as_str()).collect();
            fail(ErrorCode::NotFound, format!("extractor: no extractor {name:?}; there are: {}", names.join(", ")))
        })?),
        None => None,
    };
    on_tab(&session, TabUse::PAGE, |on| extract_on(on, all, chosen, max_bytes, args.offset)).await
}

async fn extract_on(
    OnTab { live, tab }: OnTab,
    all: Vec<Extractor>,
    chosen: Option<Extractor>,
    max_bytes: usize,
    offset: usize,
) -> ToolResult {
    let url = tab.state().url.clone();
    match chosen {
        Some(ext) => with_extractor(&live, &tab, &url, &ext, max_bytes, offset).await,
        None => markdown(&live, &tab, &url, &all, max_bytes, offset).await,
    }
}

async fn markdown(live: &Live, tab: &Tab, url: &str, all: &[Extractor], max_bytes: usize, offset: usize) -> ToolResult {
    let result = reader(live, tab, None, "extract", &json!({"maxBytes": max_bytes, "offset": offset})).await?;
    let mut body = result["text"].as_str().unwrap_or_default().to_string();
    let mut truncated = result["truncated"].as_bool().unwrap_or(false);
    // Cross-origin frames run in other processes: read each whose <iframe> is in the content, in its place.
    for (n, _) in child_frames(tab) {
        let Ok(owner) = frame_owner(live, tab, n).await else { continue };
        let owner = owner.target;
        let marker = format!("[iframe][{owner}]");
        if !body.contains(&marker) {
            continue;
        }
        let left = max_bytes.saturating_sub(body.len());
        if left < 200 {
            truncated = true;
            continue;
        }
        let Ok(child) = reader(live, tab, Some(n), "extract", &json!({"maxBytes": left, "offset": 0})).await else {
            continue;
        };
        truncated |= child["truncated"].as_bool().unwrap_or(false);
        let inner = child["text"].as_str().unwrap_or_default();
        body = body.replacen(&marker, &format!("{marker}\n{inner}"), 1);
    }
    if body.is_empty() {
        body = if offset > 0 {
            format!("(nothing from block {offset}: the content has {} blocks)", result["blocks"].as_u64().unwrap_or(0))
        } else {
            "(no readable content: try page_snapshot)".to_string()
        };
    }
    let next = result["next"].as_u64().filter(|n| *n > 0);
    if truncated {
        let how = match next {
            Some(n) => format!("the rest starts at block {n}: page_extract with offset={n}"),
            None => "more in the frames: page_snapshot".to_string(),
        };
        body.push_str(&format!("\n[truncated at the {max_bytes}-byte budget; {how}, or a larger max_bytes]"));
    }
    let field = |k: &str| result[k].as_str().unwrap_or_default().to_string();
    let (title, byline, lang, published) = (field("title"), field("byline"), field("lang"), field("published"));
    let mut header = format!("url: {url}\n");
    for (k, v) in [("title", &title), ("byline", &byline), ("lang", &lang), ("published", &published)] {
        if !v.is_empty() {
            header.push_str(&format!("{k}: {v}\n"));
        }
    }
    let mut text = "Main content as Markdown:".to_string();
    let fitting = fitting_extractors(live, tab, url, all).await;
    if !fitting.is_empty() {
        text = format!(
            "Extractors that fit this page: {} (page_extract {{extractor: NAME}} for typed fields and records).\n{text}",
            fitting.join(", ")
        );
    }
    let structured = json!({
        "url": url, "title": title, "byline": byline, "lang": lang, "published": published,
        "truncated": truncated, "next": next,
    });
    Ok(ToolOutput::text(text).with_page_text(format!("{header}---\n{body}")).with_structured(structured))
}

/// The extractors whose URL patterns fit and whose required element is on the page; site ones first.
async fn fitting_extractors(live: &Live, tab: &Tab, url: &str, all: &[Extractor]) -> Vec<String> {
    let candidates: Vec<&Extractor> = all.iter().filter(|e| e.def.urls.iter().any(|p| url_matches(p, url))).collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let probes: Vec<Value> =
        candidates.iter().map(|e| json!({"within": e.def.within, "requires": e.def.requires})).collect();
    let Ok(fits) = reader(live, tab, None, "probeExtractors", &Value::Array(probes)).await else {
        return Vec::new();
    };
    let mut out: Vec<(bool, String)> = candidates
        .iter()
        .zip(fits.as_array().map(Vec::as_slice).unwrap_or_default())
        .filter(|(_, fit)| fit.as_bool() == Some(true))
        .map(|(e, _)| (e.def.urls.iter().all(|p| p == "*"), e.def.name.clone()))
        .collect();
    out.sort_by_key(|(generic, _)| *generic);
    out.into_iter().map(|(_, name)| name).collect()
}

async fn with_extractor(
    live: &Live,
    tab: &Tab,
    url: &str,
    ext: &Extractor,
    max_bytes: usize,
    offset: usize,
) -> ToolResult {
    let def = serde_json::to_value(&ext.def)
        .map_err(|e| fail(ErrorCode::OperationFailed, format!("extractor {}: {e}", ext.def.name)))?;
    let mut data = reader(live, tab, None, "records", &def).await?;
    if let Some(kind) = data["error"].as_str() {
        let message = data["message"].as_str().unwrap_or_default();
        let at = data["path"].as_str().map(|p| format!("{p}: ")).unwrap_or_default();
        let code = if kind == "within" { ErrorCode::NotFound } else { ErrorCode::InvalidState };
        return Err(fail(code, format!("extractor {} ({}): {at}{message}", ext.def.name, ext.source)).into());
    }
    let (shown, cut) = page_records(&mut data, offset, max_bytes);
    let mut note = format!("Extractor {} ({}", ext.def.name, ext.source);
    if let Some(status) = &ext.def.status {
        note.push_str(&format!("; {status}"));
    }
    note.push(')');
    if !ext.def.urls.iter().any(|p| url_matches(p, url)) {
        note.push_str(&format!("; note: it is meant for {}, not this URL", ext.def.urls.join(", ")));
    }
    note.push(':');
    if let Some(next) = cut {
        note.push_str(&format!(
            "\n[records cut at the {max_bytes}-byte budget: {shown} shown; page_extract with offset={next} (same extractor) for the rest]"
        ));
    }
    let text = serde_json::to_string_pretty(&data).unwrap_or_default();
    Ok(ToolOutput::text(note).with_page_text(format!("url: {url}\n{text}")).with_structured(data))
}

/// Skips the first `offset` records of every list and cuts the lists (longest
/// first) until the whole fits `max_bytes`. Returns how many records are shown
/// and, when some were cut, the offset that reads on.
fn page_records(data: &mut Value, offset: usize, max_bytes: usize) -> (usize, Option<usize>) {
    let Some(lists) = data.get_mut("records").and_then(Value::as_object_mut) else { return (0, None) };
    for list in lists.values_mut() {
        if let Some(items) = list.as_array_mut() {
            items.drain(..offset.min(items.len()));
        }
    }
    let mut cut = false;
    loop {
        let size = serde_json::to_string_pretty(&*lists).map(|s| s.len()).unwrap_or(0);
        if size <= max_bytes {
            break;
        }
        let longest = lists.values_mut().filter_map(Value::as_array_mut).max_by_key(|items| items.len());
        match longest {
            Some(items) if !items.is_empty() => {
                items.pop();
                cut = true;
            }
            _ => break,
        }
    }
    let shown: usize = lists.values().filter_map(Value::as_array).map(Vec::len).max().unwrap_or(0);
    (shown, cut.then_some(offset + shown))
}

#[cfg(test)]
mod tests {
    use super::page_records;
    use serde_json::json;

    #[test]
    fn records_are_paged_and_cut_to_the_budget() {
        let mut data = json!({"fields": {}, "records": {"m": (0..100).map(|i| json!({"n": i})).collect::<Vec<_>>()}});
        let (shown, next) = page_records(&mut data, 10, 400);
        assert!(shown > 0 && shown < 90, "{shown}");
        assert_eq!(next, Some(10 + shown));
        assert_eq!(data["records"]["m"][0]["n"], 10);
        let mut small = json!({"records": {"m": [{"n": 1}]}});
        assert_eq!(page_records(&mut small, 0, 400), (1, None));
    }
}

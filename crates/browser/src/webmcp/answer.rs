//! Shaping a page tool's answer: MCP-shaped results unwrapped, page-reported
//! failures made failures with the page's words fenced, a move of the page
//! while the tool ran noted, and what a form tool did read off the page.

use std::time::Duration;

use lumo_protocol::ErrorCode;
use lumo_protocol::text::clip_marked;
use serde_json::{Value, json};

use super::listing::PageTool;
use crate::error::BrowserError;
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Outcome, ToolOutput, fail};

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
pub(super) fn completed(bound: &PageTool, output: Value) -> Outcome {
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
        return Err(BrowserError::page(
            fail(
                ErrorCode::OperationFailed,
                format!(
                    "page tool {:?} from {} reported a failure; its code and message are in the page's answer below",
                    bound.name, bound.origin
                ),
            ),
            clip_marked(&compact, MAX_PAGE_TEXT),
        )
        .with_details(Some(json!({"pageError": page_error(&output), "output": output}))));
    }
    let structured = match &output {
        Value::Object(_) => output.clone(),
        _ => json!({"result": output}),
    };
    Ok(ToolOutput::text(format!("Page tool {:?} from {} answered:", bound.name, bound.origin))
        .with_page_text(clip_marked(&compact, MAX_PAGE_TEXT))
        .with_structured(structured))
}

/// `{code, message}` of a page-reported failure, from the usual places.
fn page_error(output: &Value) -> Value {
    let error = &output["error"];
    let code = error["code"].as_str().or(output["code"].as_str());
    let message = error["message"].as_str().or(error.as_str()).or(output["message"].as_str());
    json!({"code": code, "message": message.map(|m| clip_marked(m, 2000))})
}

/// Unwraps an answer in MCP's own result shape, or `None` when it is not one.
fn mcp_shaped(bound: &PageTool, output: &Value) -> Option<Outcome> {
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
    let mut page_text = clip_marked(&texts.join("\n"), MAX_PAGE_TEXT);
    if dropped > 0 {
        page_text.push_str(&format!("\n[{dropped} image block(s) dropped by lumo: not image/* base64, over {MAX_IMAGE_BASE64} characters, or over {MAX_IMAGES} images]"));
    }
    let structured = map.get("structuredContent").filter(|v| v.is_object()).cloned();
    if map.get("isError").and_then(Value::as_bool) == Some(true) {
        let failure = fail(
            ErrorCode::OperationFailed,
            format!(
                "page tool {:?} from {} reported a failure (isError); the page's words follow",
                bound.name, bound.origin
            ),
        );
        return Some(
            Err(BrowserError::page(failure, page_text).with_details(structured.map(|s| json!({"output": s})))),
        );
    }
    let mut out = ToolOutput::text(format!("Page tool {:?} from {} answered:", bound.name, bound.origin));
    if !page_text.is_empty() {
        out.page_text = Some(page_text);
    }
    out.structured = structured;
    out.images = images;
    Some(Ok(out))
}

/// Appends to an answer that the page moved while the tool ran (a navigation or a URL change).
pub(super) fn note_move(tab: &Tab, out: &mut Outcome, url_before: &str, navigations: u64) {
    let s = tab.state();
    let note = if s.navigations != navigations {
        "\nThe page navigated (URLs below); its page tools may have changed: list them again (tools/list or webmcp_list)."
    } else if s.url != url_before {
        "\nThe page's URL changed (URLs below)."
    } else {
        return;
    };
    // URLs are the page's (a URL can carry a token): they go with the fenced page text.
    let urls = format!("url before: {url_before}\nurl: {}", s.url);
    match out {
        Ok(out) => {
            out.text.push_str(note);
            out.page_text = Some(match out.page_text.take() {
                Some(page) => format!("{page}\n{urls}"),
                None => urls,
            });
        }
        Err(BrowserError::PageReported { failure, page_text, .. }) => {
            failure.message.push_str(note);
            page_text.push('\n');
            page_text.push_str(&urls);
        }
        Err(_) => {}
    }
}

/// The main frame's `document.title` (the target's title is a URL-shaped
/// placeholder until the page sets one, and for form tool results).
pub(super) async fn document_title(live: &Live, tab: &Tab) -> Option<String> {
    let result = live
        .call(tab, "Runtime.evaluate", json!({"expression": "document.title", "returnByValue": true}))
        .await
        .ok()?;
    result["result"]["value"].as_str().map(|t| clip_marked(t, 300))
}

/// What a declarative (form) tool did: Chromium sends no `toolResponded` for them.
pub(super) async fn declarative_report(
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

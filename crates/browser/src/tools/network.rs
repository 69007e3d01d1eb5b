//! The tab's network log: `network_requests` (a filtered list) and
//! `network_request` (one request in detail, with its body).

use base64::Engine;
use lumo_protocol::text::{clip, human_bytes};
use lumo_protocol::{ErrorCode, ToolFailure, redact};
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::refuse;
use crate::tab::Request;
use crate::tool::{Hints, Outcome, Tool, ToolOutput, fail};

const DEFAULT_BODY_BYTES: usize = 10_000;
const MAX_BODY_BYTES: usize = 1_000_000;
/// How much of a URL a list line shows.
const URL_BYTES: usize = 200;
/// How much of one header value is shown.
const HEADER_BYTES: usize = 300;
const POST_BYTES: usize = 2_000;
/// CDP's resource types, lower-cased.
const TYPES: &[&str] = &[
    "document",
    "stylesheet",
    "image",
    "media",
    "font",
    "script",
    "texttrack",
    "xhr",
    "fetch",
    "prefetch",
    "eventsource",
    "websocket",
    "manifest",
    "signedexchange",
    "ping",
    "cspviolationreport",
    "preflight",
    "other",
];

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "network_requests",
            "List the tab's requests since the page loaded: #id, method, status, type, URL, size.",
            Hints::READ,
            requests,
        )
        .untrusted(),
        Tool::new(
            "network_request",
            "One request in detail: headers, post data, and optionally the response body.",
            Hints::READ,
            request,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestsArgs {
    /// Regex the URL must match.
    url: Option<String>,
    /// Resource types, e.g. "fetch", "xhr,fetch", document, script, image, stylesheet.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Status: 404, "4xx", "5xx", "failed" or "pending".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "number_or_string")]
    status: Option<Value>,
    /// Most requests, newest last (default 50, at most 500).
    #[schemars(range(min = 1, max = 500))]
    limit: Option<usize>,
}

/// The schema of a field that takes a number or a string.
fn number_or_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["integer", "string"]})
}

enum StatusFilter {
    Code(i64),
    Class(i64),
    Failed,
    Pending,
}

impl StatusFilter {
    fn parse(status: &Value) -> Result<Self, ToolFailure> {
        let text = match status {
            Value::Number(n) => n.to_string(),
            Value::String(text) => text.trim().to_ascii_lowercase(),
            other => other.to_string(),
        };
        if let Ok(code) = text.parse::<i64>() {
            return Ok(Self::Code(code));
        }
        match text.as_bytes() {
            [d @ b'1'..=b'5', b'x', b'x'] => Ok(Self::Class(i64::from(d - b'0'))),
            _ if text == "failed" => Ok(Self::Failed),
            _ if text == "pending" => Ok(Self::Pending),
            _ => Err(fail(
                ErrorCode::InvalidArguments,
                format!(
                    "status: {text:?} is not a status; use a code like 404, a class like \"4xx\", \"failed\" or \"pending\""
                ),
            )),
        }
    }

    fn matches(&self, r: &Request) -> bool {
        match self {
            Self::Code(code) => r.status == Some(*code),
            Self::Class(class) => r.status.is_some_and(|s| s / 100 == *class),
            Self::Failed => r.failure.is_some(),
            Self::Pending => !r.finished,
        }
    }
}

/// One list line: `#12 GET 200 fetch https://… (1.2 KB)`.
fn line(r: &Request) -> String {
    let status = match (&r.failure, r.status, r.finished) {
        (Some(_), _, _) => "failed".to_string(),
        (None, Some(code), _) => code.to_string(),
        (None, None, true) => "-".to_string(),
        (None, None, false) => "pending".to_string(),
    };
    let kind = if r.resource_type.is_empty() { "other".to_string() } else { r.resource_type.to_ascii_lowercase() };
    let url_budget = if r.url.starts_with("data:") { 60 } else { URL_BYTES };
    let (url, cut) = clip(&r.url, url_budget);
    let mut line = format!("#{} {} {status} {kind} {url}{}", r.seq, r.method, if cut { "…" } else { "" });
    match (&r.failure, r.encoded_size) {
        (Some(error), _) => line.push_str(&format!(" ({error})")),
        (None, Some(size)) if r.finished => line.push_str(&format!(" ({})", human_bytes(size))),
        _ => {}
    }
    line
}

async fn requests(session: Ctx, args: RequestsArgs) -> Outcome {
    let limit = args.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(refuse(ErrorCode::InvalidArguments, format!("limit: {limit} is outside 1–500")));
    }
    let url = args
        .url
        .as_deref()
        .map(|re| {
            regex::RegexBuilder::new(re)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| fail(ErrorCode::InvalidArguments, format!("url: not a valid regex: {e}")))
        })
        .transpose()?;
    let kinds: Option<Vec<String>> = match &args.kind {
        None => None,
        Some(list) => {
            let kinds: Vec<String> =
                list.split([',', '|', ' ']).map(|k| k.trim().to_ascii_lowercase()).filter(|k| !k.is_empty()).collect();
            if let Some(bad) = kinds.iter().find(|k| !TYPES.contains(&k.as_str())) {
                return Err(refuse(
                    ErrorCode::InvalidArguments,
                    format!("type: {bad:?} is not a resource type; use {}", TYPES.join(", ")),
                ));
            }
            if kinds.is_empty() {
                return Err(refuse(ErrorCode::InvalidArguments, "type: give a resource type, e.g. fetch"));
            }
            Some(kinds)
        }
    };
    let status = args.status.as_ref().map(StatusFilter::parse).transpose()?;
    on_tab(&session, TabUse::UNLOCKED, |OnTab { tab, .. }| async move {
        let (all, lines) = {
            let s = tab.state();
            let matching: Vec<&Request> = s
                .requests
                .iter()
                .filter(|r| url.as_ref().is_none_or(|re: &Regex| re.is_match(&r.url)))
                .filter(|r| kinds.as_ref().is_none_or(|k| k.contains(&r.resource_type.to_ascii_lowercase())))
                .filter(|r| status.as_ref().is_none_or(|f| f.matches(r)))
                .collect();
            let lines: Vec<String> = matching[matching.len().saturating_sub(limit)..].iter().map(|r| line(r)).collect();
            (matching.len(), lines)
        };
        let filtered = args.url.is_some() || args.kind.is_some() || args.status.is_some();
        let what = if filtered { "matching request" } else { "request" };
        let text = match all {
            0 => format!("No {what}s since the page loaded."),
            1 => format!("1 {what} since the page loaded (details: network_request {{id}}):"),
            n if n > limit => {
                format!(
                    "Last {limit} of {n} {what}s since the page loaded (newest last; details: network_request {{id}}):"
                )
            }
            n => format!("{n} {what}s since the page loaded (newest last; details: network_request {{id}}):"),
        };
        let out = ToolOutput::text(text);
        Ok(if lines.is_empty() { out } else { out.with_page_text(lines.join("\n")) })
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestArgs {
    /// Request id from network_requests, e.g. 12 or "#12".
    #[schemars(schema_with = "number_or_string")]
    id: Value,
    /// Include the response body.
    #[serde(default)]
    body: bool,
    /// Byte budget of the body (default 10000).
    #[schemars(range(min = 100, max = 1_000_000))]
    max_bytes: Option<usize>,
    /// Show credential headers (Authorization, Cookie, API keys, tokens) instead of redacting them.
    #[serde(default)]
    show_secrets: bool,
}

/// Request headers every request of this browser carries: named, not shown.
const BORING: &[&str] = &["user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"];

/// Adds a header block; returns how many credential values it redacted.
fn headers(out: &mut Vec<String>, title: &str, headers: &Value, show_secrets: bool) -> usize {
    let mut redacted = 0;
    let Some(map) = headers.as_object().filter(|m| !m.is_empty()) else { return redacted };
    out.push(format!("{title}:"));
    let mut omitted = Vec::new();
    for (name, value) in map {
        if BORING.contains(&name.to_ascii_lowercase().as_str()) {
            omitted.push(name.as_str());
            continue;
        }
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
        // Several values of one header arrive joined by newlines.
        for v in value.lines() {
            let (shown, hidden) = redact::header_value(name, v, show_secrets);
            redacted += usize::from(hidden);
            let (v, cut) = clip(&shown, HEADER_BYTES);
            out.push(format!("  {name}: {v}{}", if cut { "…" } else { "" }));
        }
    }
    if !omitted.is_empty() {
        out.push(format!("  (not shown: {})", omitted.join(", ")));
    }
    redacted
}

fn text_like(mime: &str) -> bool {
    let mime = mime.to_ascii_lowercase();
    mime.starts_with("text/")
        || ["json", "javascript", "ecmascript", "xml", "svg", "x-www-form-urlencoded", "graphql", "csv", "yaml"]
            .iter()
            .any(|t| mime.contains(t))
}

async fn request(session: Ctx, args: RequestArgs) -> Outcome {
    let bad_id = |shown: &str| {
        fail(
            ErrorCode::InvalidArguments,
            format!("id: {shown:?} is not a request id; use the number after # in network_requests"),
        )
    };
    let seq = match &args.id {
        Value::Number(n) => n.as_u64().ok_or_else(|| bad_id(&n.to_string()))?,
        Value::String(t) => t.trim().trim_start_matches('#').parse::<u64>().map_err(|_| bad_id(t))?,
        other => return Err(bad_id(&other.to_string()).into()),
    };
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_BODY_BYTES);
    if !(100..=MAX_BODY_BYTES).contains(&max_bytes) {
        return Err(refuse(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside 100–{MAX_BODY_BYTES}"),
        ));
    }
    on_tab(&session, TabUse::UNLOCKED, |OnTab { live, tab }| async move {
        let found = tab.state().requests.iter().find(|r| r.seq == seq).cloned();
        let Some(r) = found else {
            return Err(refuse(
                ErrorCode::NotFound,
                format!("No request #{seq} (the list resets when the page loads). Get ids with network_requests."),
            ));
        };
        let mut lines = vec![format!("#{} {} {}", r.seq, r.method, r.url)];
        let mut summary = Vec::new();
        match (&r.failure, r.status) {
            (Some(error), _) => summary.push(format!("failed: {error}")),
            (None, Some(code)) => summary.push(format!("status: {code}")),
            (None, None) => summary.push(if r.finished { "status: none" } else { "status: pending" }.to_string()),
        }
        if !r.resource_type.is_empty() {
            summary.push(format!("type: {}", r.resource_type.to_ascii_lowercase()));
        }
        if !r.mime.is_empty() {
            summary.push(format!("mime: {}", r.mime));
        }
        if let Some(size) = r.encoded_size {
            summary.push(format!("transferred: {}", human_bytes(size)));
        }
        lines.push(summary.join(", "));
        let redacted = headers(&mut lines, "request headers", &r.request_headers, args.show_secrets)
            + headers(&mut lines, "response headers", &r.response_headers, args.show_secrets);
        if let Some(post) = &r.post_data {
            let (shown, cut) = clip(post, POST_BYTES.min(max_bytes));
            lines.push(format!("post data ({}):", human_bytes(post.len() as f64)));
            lines.push(format!("{shown}{}", if cut { "\n[cut]" } else { "" }));
        }
        if args.body {
            lines.push(body(&live, &tab, &r, max_bytes).await);
        }
        let mut text = format!("Request #{seq}:");
        if redacted > 0 {
            text = format!(
                "Request #{seq} ({redacted} credential header value(s) redacted; network_request {{id: {seq}, show_secrets: true}} shows them):"
            );
        }
        Ok(ToolOutput::text(text).with_page_text(lines.join("\n")).showing_secrets(args.show_secrets))
    })
    .await
}

/// The response body as text, or why it is not shown.
async fn body(live: &crate::session::Live, tab: &crate::tab::Tab, r: &Request, max_bytes: usize) -> String {
    if !r.finished {
        return "body: not loaded yet".to_string();
    }
    if r.failure.is_some() {
        return "body: none (the request failed)".to_string();
    }
    let got = match live.call(tab, "Network.getResponseBody", json!({"requestId": r.id})).await {
        Ok(got) => got,
        Err(e) => return format!("body: unavailable ({})", clip(&ToolFailure::from(e).message, 200).0),
    };
    let raw = got["body"].as_str().unwrap_or_default();
    let bytes = if got["base64Encoded"].as_bool() == Some(true) {
        match base64::engine::general_purpose::STANDARD.decode(raw) {
            Ok(bytes) => bytes,
            Err(_) => return "body: unavailable (the browser sent bad base64)".to_string(),
        }
    } else {
        raw.as_bytes().to_vec()
    };
    let mime = if r.mime.is_empty() { "unknown type" } else { r.mime.as_str() };
    let text = match String::from_utf8(bytes) {
        Ok(text) if text_like(&r.mime) || r.mime.is_empty() || got["base64Encoded"].as_bool() != Some(true) => text,
        Ok(text) => return format!("body: {} of {mime} (binary, not shown)", human_bytes(text.len() as f64)),
        Err(e) => return format!("body: {} of {mime} (binary, not shown)", human_bytes(e.as_bytes().len() as f64)),
    };
    if text.is_empty() {
        return "body: empty".to_string();
    }
    let (shown, cut) = clip(&text, max_bytes);
    let mut out = format!("body ({}):\n{shown}", human_bytes(text.len() as f64));
    if cut {
        out.push_str(&format!("\n[cut at {max_bytes} bytes; raise max_bytes for more]"));
    }
    out
}

//! DevTools: `devtools_console` (the tab's console log) and
//! `devtools_evaluate` (run JavaScript in the page's own context).

use std::future::Future;
use std::time::Duration;

use lumo_protocol::ErrorCode;
use lumo_protocol::text::{clip, human_bytes};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::{BrowserError, refuse};
use crate::helper::element;
use crate::page::{check_ref, wait_until};
use crate::session::Live;
use crate::tab::{ConsoleEntry, Tab};
use crate::tool::{Hints, Outcome, Tool, ToolOutput};

/// How much of one console message an answer shows.
const MESSAGE_BYTES: usize = 300;
const DEFAULT_RESULT_BYTES: usize = 20_000;
const MAX_RESULT_BYTES: usize = 1_000_000;
/// How long code may run before the browser stops it (an endless loop would hang the tab).
const RUN_TIMEOUT_MS: u64 = 15_000;
/// The object group of evaluation results, released after each call.
const GROUP: &str = "lumo-evaluate";

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "devtools_console",
            "Read the tab's console messages and uncaught errors, and the browser's own (failed loads, blocked requests, CSP; marked browser/…).",
            Hints::READ,
            console,
        )
            .untrusted(),
        Tool::new(
            "devtools_evaluate",
            "Run JavaScript in the page (an expression, or a function on a ref's element); returns the result as JSON.",
            Hints::DESTRUCTIVE,
            evaluate,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConsoleArgs {
    /// Minimum level (default: all).
    level: Option<Level>,
    /// Most messages, newest last (default 50, at most 1000).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<usize>,
    /// Empty the log after reading.
    #[serde(default)]
    clear: bool,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Level {
    Error,
    Warning,
    Info,
    Log,
    Debug,
}

/// Severity rank; `info` and `log` are one level, as in Chromium.
fn rank(level: &str) -> u8 {
    match level {
        "error" => 3,
        "warning" => 2,
        "info" | "log" => 1,
        _ => 0,
    }
}

/// `scheme://host[:port]` of a URL, when it has one.
fn origin(url: &str) -> Option<&str> {
    let rest = url.find("://").map(|i| i + 3)?;
    let end = url[rest..].find('/').map_or(url.len(), |i| rest + i);
    Some(&url[..end])
}

fn console_line(entry: &ConsoleEntry, page_origin: Option<&str>) -> String {
    // Multi-line messages (stack traces) stay on one line.
    let text: String = entry.text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ↵ ");
    let (shown, cut) = clip(&text, MESSAGE_BYTES);
    // The browser's own messages say so: they are not the page's console calls.
    let by = entry.browser_source.as_ref().map(|source| format!(" browser/{source}")).unwrap_or_default();
    let mut line = format!("[{}{by}] {shown}{}", entry.level, if cut { "…" } else { "" });
    if !entry.location.is_empty() && !entry.location.starts_with(':') {
        // Same-origin scripts are shown by path: the origin is the page's.
        let location = match page_origin {
            Some(o) if entry.location.starts_with(o) => &entry.location[o.len()..],
            _ => entry.location.as_str(),
        };
        if location.len() > 100 {
            let mut start = location.len() - 99;
            while !location.is_char_boundary(start) {
                start += 1;
            }
            line.push_str(&format!(" (…{})", &location[start..]));
        } else {
            line.push_str(&format!(" ({location})"));
        }
    }
    line
}

async fn console(session: Ctx, args: ConsoleArgs) -> Outcome {
    let limit = args.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(refuse(ErrorCode::InvalidArguments, format!("limit: {limit} is outside 1–1000")));
    }
    let min = args.level.map_or(0, |l| {
        rank(match l {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::Log => "log",
            Level::Debug => "debug",
        })
    });
    on_tab(&session, TabUse::UNLOCKED, |OnTab { tab, .. }| async move {
        let (total, lines) = {
            let mut s = tab.state();
            let page_origin = origin(&s.url).map(str::to_string);
            let matching: Vec<&ConsoleEntry> = s.console.iter().filter(|e| rank(&e.level) >= min).collect();
            let total = matching.len();
            // Newest last; identical neighbours fold into one line with a count.
            let mut lines: Vec<(String, usize)> = Vec::new();
            for entry in &matching[total.saturating_sub(limit)..] {
                let line = console_line(entry, page_origin.as_deref());
                match lines.last_mut() {
                    Some((last, n)) if *last == line => *n += 1,
                    _ => lines.push((line, 1)),
                }
            }
            if args.clear {
                s.console.clear();
            }
            (total, lines)
        };
        let filter = if min > 0 { " at that level or above" } else { "" };
        let mut text = match total {
            0 => format!("No console messages{filter}."),
            n if n > limit => format!("Last {limit} of {n} console messages{filter}, newest last:"),
            n => format!("{n} console message{}{filter}, newest last:", if n == 1 { "" } else { "s" }),
        };
        if args.clear {
            text.push_str(" (log cleared)");
        }
        let body: Vec<String> =
            lines.into_iter().map(|(line, n)| if n > 1 { format!("{line} ×{n}") } else { line }).collect();
        let out = ToolOutput::text(text);
        Ok(if body.is_empty() { out } else { out.with_page_text(body.join("\n")) })
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EvaluateArgs {
    /// JavaScript expression (await allowed).
    expression: Option<String>,
    /// Or a function declaration; with ref it gets the element as this and first argument.
    function: Option<String>,
    /// Element ref for function.
    #[serde(rename = "ref")]
    target: Option<String>,
    /// Byte budget of the result (default 20000).
    #[schemars(range(min = 100, max = 1_000_000))]
    max_bytes: Option<usize>,
}

/// Turns any value into bounded JSON in the page: cycles, DOM nodes, functions,
/// maps, sets and errors become readable placeholders.
const SERIALIZE: &str = r#"function(max) {
  const seen = new WeakSet();
  const node = (n) => {
    if (n.nodeType === 1) {
      let s = '<' + n.tagName.toLowerCase();
      if (n.id) s += '#' + n.id;
      if (typeof n.className === 'string' && n.className.trim()) s += '.' + n.className.trim().split(/\s+/).join('.');
      return s + '>';
    }
    if (n.nodeType === 3) return '#text ' + JSON.stringify(n.data.slice(0, 80));
    if (n.nodeType === 9) return '#document ' + n.URL;
    return n.nodeName;
  };
  const s = JSON.stringify(this, function (k, v) {
    if (typeof v === 'bigint') return v + 'n';
    if (typeof v === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
    if (typeof v === 'symbol') return v.toString();
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (v && typeof v === 'object') {
      if (typeof Node === 'function' && v instanceof Node) return node(v);
      if (typeof Window === 'function' && v instanceof Window) return '[Window]';
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
      if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack };
      if (v instanceof Map) return { '[Map]': Array.from(v) };
      if (v instanceof Set) return { '[Set]': Array.from(v) };
      if (typeof NodeList === 'function' && (v instanceof NodeList || v instanceof HTMLCollection)) return Array.from(v);
    }
    return v;
  });
  const out = s === undefined ? 'undefined' : s;
  // Never end on half a surrogate pair: it is not valid JSON text.
  const cut = out.length > max ? out.slice(0, max).replace(/[\uD800-\uDBFF]$/, '') : out;
  return { json: cut, total: out.length };
}"#;

/// Runs `call` unless a dialog opens first (it blocks the page, and the call with it).
async fn or_dialog(
    tab: &Tab,
    call: impl Future<Output = Result<Value, BrowserError>>,
) -> Result<Option<Value>, BrowserError> {
    tokio::select! {
        result = call => result.map(Some),
        _ = wait_until(tab, Duration::from_secs(3600), |s| s.dialog.is_some()) => Ok(None),
    }
}

async fn evaluate(session: Ctx, args: EvaluateArgs) -> Outcome {
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_RESULT_BYTES);
    if !(100..=MAX_RESULT_BYTES).contains(&max_bytes) {
        return Err(refuse(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside 100–{MAX_RESULT_BYTES}"),
        ));
    }
    match (&args.expression, &args.function, &args.target) {
        (Some(_), None, None) | (None, Some(_), _) => {}
        (Some(_), None, Some(_)) => {
            return Err(refuse(
                ErrorCode::InvalidArguments,
                "ref: goes with function, not expression; e.g. function: \"el => el.value\"",
            ));
        }
        _ => return Err(refuse(ErrorCode::InvalidArguments, "give exactly one of expression or function")),
    }
    if let Some(code) = args.expression.as_ref().or(args.function.as_ref()).filter(|c| c.trim().is_empty()) {
        let field = if args.expression.is_some() { "expression" } else { "function" };
        return Err(refuse(ErrorCode::InvalidArguments, format!("{field}: is empty ({code:?})")));
    }
    if let Some(r) = &args.target {
        check_ref(r)?;
    }
    on_tab(&session, TabUse::SCRIPT, |OnTab { live, tab }| async move {
        let result = run(&live, &tab, &args).await;
        let shown = match result {
            Ok(Some(result)) => present(&live, &tab, &result, max_bytes).await,
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        if tab.state().dialog.is_none() {
            // Best effort: the objects only live until the next navigation anyway.
            let _ = live.call(&tab, "Runtime.releaseObjectGroup", json!({"objectGroup": GROUP})).await;
        }
        let Some((kind, body)) = shown? else {
            let text = "The code opened a dialog, which blocks the page; its result is lost.".to_string();
            return Ok(ToolOutput::text(text));
        };
        let text = format!("Result ({kind}):");
        Ok(ToolOutput::text(text).with_page_text(body))
    })
    .await
}

/// Runs the code in the page's main world; `None` when a dialog interrupted it.
async fn run(live: &Live, tab: &Tab, args: &EvaluateArgs) -> Result<Option<Value>, BrowserError> {
    let evaluate = |expression: String| async move {
        let started = std::time::Instant::now();
        live.call(
            tab,
            "Runtime.evaluate",
            json!({"expression": expression, "objectGroup": GROUP, "awaitPromise": true, "userGesture": true,
                "replMode": true, "timeout": RUN_TIMEOUT_MS}),
        )
        .await
        .map_err(|e| {
            // The browser reports the stopped code only as an internal error.
            if started.elapsed() >= Duration::from_millis(RUN_TIMEOUT_MS) {
                refuse(ErrorCode::Timeout, format!("The code ran over {} s and was stopped.", RUN_TIMEOUT_MS / 1000))
            } else {
                e
            }
        })
    };
    let result = match (&args.expression, &args.function, &args.target) {
        (Some(expression), ..) => or_dialog(tab, evaluate(expression.clone())).await?,
        (None, Some(function), None) => or_dialog(tab, evaluate(format!("({function})()"))).await?,
        (None, Some(function), Some(r)) => {
            // The ref lives in lumo's world; the code runs in the page's, on the same node.
            let object = element(live, tab, r).await?;
            let node = live.call_in(&object.session, "DOM.describeNode", json!({"objectId": object.object})).await?;
            let backend = node["node"]["backendNodeId"].as_i64().ok_or_else(|| crate::page::stale_ref(r))?;
            // The frame's own session: a cross-origin frame's nodes live there.
            let resolved = live
                .call_in(&object.session, "DOM.resolveNode", json!({"backendNodeId": backend, "objectGroup": GROUP}))
                .await?;
            let Some(main) = resolved["object"]["objectId"].as_str() else {
                return Err(crate::page::stale_ref(r).into());
            };
            let call = live.call_in(
                &object.session,
                "Runtime.callFunctionOn",
                json!({"objectId": main, "functionDeclaration": function, "arguments": [{"objectId": main}],
                    "objectGroup": GROUP, "awaitPromise": true, "userGesture": true}),
            );
            or_dialog(tab, call).await?
        }
        (None, None, _) => {
            return Err(refuse(ErrorCode::InvalidArguments, "give exactly one of expression or function"));
        }
    };
    let Some(mut result) = result else { return Ok(None) };
    // REPL mode hands back a returned promise as is: wait for what it settles to.
    if result.get("exceptionDetails").is_none()
        && result["result"]["subtype"] == "promise"
        && let Some(promise) = result["result"]["objectId"].as_str()
    {
        let settled = live.call(tab, "Runtime.awaitPromise", json!({"promiseObjectId": promise}));
        let Some(settled) = or_dialog(tab, settled).await? else { return Ok(None) };
        result = settled;
    }
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"]
            .as_str()
            .or(details["exception"]["value"].as_str())
            .or(details["text"].as_str())
            .unwrap_or("the code threw");
        let (text, cut) = clip(text, 1000);
        return Err(refuse(
            ErrorCode::OperationFailed,
            format!("The code threw: {text}{}", if cut { "…" } else { "" }),
        ));
    }
    Ok(Some(result["result"].clone()))
}

/// The result as (kind and size, bounded text).
async fn present(
    live: &Live,
    tab: &Tab,
    object: &Value,
    max_bytes: usize,
) -> Result<Option<(String, String)>, BrowserError> {
    let kind =
        object["subtype"].as_str().filter(|s| *s != "null").or(object["type"].as_str()).unwrap_or("value").to_string();
    let (text, total) = if let Some(raw) = object["unserializableValue"].as_str() {
        (raw.to_string(), raw.len())
    } else {
        match (object["type"].as_str(), &object["value"]) {
            (Some("undefined"), _) => ("undefined".to_string(), 9),
            (Some("string"), Value::String(s)) if s.is_empty() => ("\"\"".to_string(), 0),
            (Some("string"), Value::String(s)) => (s.clone(), s.len()),
            (Some("object"), _) if object["subtype"] == "null" => ("null".to_string(), 4),
            (_, value) if !value.is_null() => {
                let s = value.to_string();
                let n = s.len();
                (s, n)
            }
            _ => match object["objectId"].as_str() {
                Some(id) => {
                    let call = live.call(
                        tab,
                        "Runtime.callFunctionOn",
                        json!({"objectId": id, "functionDeclaration": SERIALIZE, "arguments": [{"value": max_bytes}], "returnByValue": true}),
                    );
                    let Some(done) = or_dialog(tab, call).await? else { return Ok(None) };
                    let value = &done["result"]["value"];
                    match value["json"].as_str() {
                        Some(json) if done.get("exceptionDetails").is_none() => {
                            let total =
                                value["total"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(json.len());
                            (json.to_string(), total.max(json.len()))
                        }
                        // Not serialisable (a getter threw, a proxy…): its description.
                        _ => {
                            let d = object["description"].as_str().unwrap_or("(no description)").to_string();
                            let n = d.len();
                            (d, n)
                        }
                    }
                }
                None => {
                    let d = object["description"].as_str().unwrap_or("(no value)").to_string();
                    let n = d.len();
                    (d, n)
                }
            },
        }
    };
    let (shown, cut) = clip(&text, max_bytes);
    let mut body = shown.to_string();
    if cut || total > text.len() {
        body.push_str(&format!(
            "\n[cut at {max_bytes} bytes of about {}; narrow the code or raise max_bytes]",
            human_bytes(total as f64)
        ));
    }
    let kind = if total >= 1000 { format!("{kind}, {}", human_bytes(total as f64)) } else { kind };
    Ok(Some((kind, body)))
}

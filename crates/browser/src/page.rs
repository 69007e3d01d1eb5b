//! Talking to lumo's in-page helper (`js/page.js`) in the isolated world
//! "lumo", where the page's scripts can neither see nor change it.

use std::time::{Duration, Instant};

use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::{Value, json};

use crate::session::Live;
use crate::tab::{Tab, TabState};
use crate::tool::fail;

const PAGE_JS: &str = include_str!("js/page.js");
const WORLD: &str = "lumo";

/// The execution context of the "lumo" world in the tab's main frame, with the helper installed.
async fn world(live: &Live, tab: &Tab) -> Result<i64, ToolFailure> {
    let frame = tab.state().main_frame.clone();
    let created = live.call(tab, "Page.createIsolatedWorld", json!({"frameId": frame, "worldName": WORLD})).await?;
    let id = created["executionContextId"]
        .as_i64()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, "the browser gave no execution context"))?;
    // Chromium reuses the world of a given name in a document, so the helper
    // (and its refs) persist until the next navigation gives a new context.
    if tab.state().world != Some(id) {
        evaluate(live, tab, id, PAGE_JS).await?;
        tab.state().world = Some(id);
    }
    Ok(id)
}

async fn evaluate(live: &Live, tab: &Tab, context: i64, expression: &str) -> Result<Value, ToolFailure> {
    let result = live
        .call(
            tab,
            "Runtime.evaluate",
            json!({"expression": expression, "contextId": context, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("script error");
        return Err(fail(ErrorCode::OperationFailed, format!("lumo's page helper failed: {text}")));
    }
    Ok(result["result"]["value"].clone())
}

/// Refuses page access while a dialog blocks the page's scripts.
pub(crate) fn ensure_no_dialog(tab: &Tab) -> Result<(), ToolFailure> {
    match &tab.state().dialog {
        Some(d) => Err(fail(
            ErrorCode::InvalidState,
            format!(
                "A {} dialog is open ({:?}); the page is blocked. Answer it with page_dialog first.",
                d.kind, d.message
            ),
        )),
        None => Ok(()),
    }
}

/// Calls `__lumo.<method>(arg)` in the tab and returns its value. Keeps the
/// tab's ref counter in step so refs never repeat across documents.
pub(crate) async fn lumo_call(live: &Live, tab: &Tab, method: &str, arg: Value) -> Result<Value, ToolFailure> {
    ensure_no_dialog(tab)?;
    let mut last_error = None;
    // One retry: a navigation can destroy the context between the two calls.
    for _ in 0..2 {
        let context = world(live, tab).await?;
        let next = tab.state().next_ref;
        let expression = format!(
            "(() => {{ const L = globalThis.__lumo; L.setPrefix('e', {next}); const r = L.{method}({arg}); return {{ r, next: L.nextRef() }}; }})()"
        );
        match evaluate(live, tab, context, &expression).await {
            Ok(value) => {
                if let Some(n) = value["next"].as_u64() {
                    let mut s = tab.state();
                    s.next_ref = s.next_ref.max(n);
                }
                return Ok(value["r"].clone());
            }
            Err(e) => {
                tab.state().world = None;
                last_error = Some(e);
            }
        }
    }
    Err(last_error.unwrap_or_else(|| fail(ErrorCode::OperationFailed, "page helper unavailable")))
}

/// Checks a ref's form before asking the page.
pub(crate) fn check_ref(r: &str) -> Result<(), ToolFailure> {
    let ok = r.len() > 1 && r.starts_with('e') && r[1..].bytes().all(|b| b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(fail(
            ErrorCode::InvalidArguments,
            format!("ref: {r:?} is not a ref; refs look like \"e12\" and come from page_snapshot or page_find"),
        ))
    }
}

/// The error for a ref whose element is gone.
pub(crate) fn stale_ref(r: &str) -> ToolFailure {
    fail(
        ErrorCode::StaleRef,
        format!(
            "Ref {r} no longer exists (the element was removed or the page changed). Take a new page_snapshot or page_find and use the new ref."
        ),
    )
}

/// A remote object id for the element behind `r`, in the lumo world.
pub(crate) async fn element(live: &Live, tab: &Tab, r: &str) -> Result<String, ToolFailure> {
    check_ref(r)?;
    ensure_no_dialog(tab)?;
    let context = world(live, tab).await?;
    let result = live
        .call(
            tab,
            "Runtime.evaluate",
            json!({"expression": format!("globalThis.__lumo.resolve({})", json!(r)), "contextId": context}),
        )
        .await?;
    result["result"]["objectId"].as_str().map(str::to_string).ok_or_else(|| stale_ref(r))
}

/// Runs `function` with `this` = the element and returns its value.
pub(crate) async fn call_on(
    live: &Live,
    tab: &Tab,
    object_id: &str,
    function: &str,
    args: &[Value],
) -> Result<Value, ToolFailure> {
    let arguments: Vec<Value> = args.iter().map(|a| json!({"value": a})).collect();
    let result = live
        .call(
            tab,
            "Runtime.callFunctionOn",
            json!({"objectId": object_id, "functionDeclaration": function, "arguments": arguments, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("script error");
        return Err(fail(ErrorCode::OperationFailed, text.to_string()));
    }
    Ok(result["result"]["value"].clone())
}

/// Waits until `cond` holds on the tab's state, or `timeout` passes; returns whether it held.
pub(crate) async fn wait_until(tab: &Tab, timeout: Duration, mut cond: impl FnMut(&TabState) -> bool) -> bool {
    let deadline = tokio::time::Instant::from_std(Instant::now() + timeout);
    loop {
        let notified = tab.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if cond(&tab.state()) {
            return true;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return cond(&tab.state());
        }
    }
}

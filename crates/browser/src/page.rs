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

/// A frame lumo runs its helper in: the tab's main frame (with the same-origin
/// frames it reaches), or an out-of-process (cross-origin) frame with a CDP
/// session of its own. Refs carry the frame: `e12` in the main frame,
/// `f2e7` in child frame 2.
#[derive(Debug, Clone)]
struct FrameRt {
    session: String,
    frame_id: String,
    child: Option<u32>,
}

impl FrameRt {
    fn prefix(&self) -> String {
        match self.child {
            None => "e".to_string(),
            Some(n) => format!("f{n}e"),
        }
    }
}

fn frame_rt(tab: &Tab, child: Option<u32>) -> Result<FrameRt, ToolFailure> {
    let s = tab.state();
    match child {
        None => Ok(FrameRt { session: tab.session_id.clone(), frame_id: s.main_frame.clone(), child: None }),
        Some(n) => s
            .children
            .iter()
            .find(|c| c.index == n)
            .map(|c| FrameRt { session: c.session_id.clone(), frame_id: c.frame_id.clone(), child: Some(n) })
            .ok_or_else(|| {
                fail(
                    ErrorCode::StaleRef,
                    format!("Frame f{n} is gone (it navigated or was removed). Take a new page_snapshot."),
                )
            }),
    }
}

/// The frame's cached world id and ref counter, read or written.
fn with_frame_state<T>(tab: &Tab, child: Option<u32>, f: impl FnOnce(&mut Option<i64>, &mut u64) -> T) -> Option<T> {
    let mut s = tab.state();
    match child {
        None => {
            let s = &mut *s;
            Some(f(&mut s.world, &mut s.next_ref))
        }
        Some(n) => s.children.iter_mut().find(|c| c.index == n).map(|c| f(&mut c.world, &mut c.next_ref)),
    }
}

/// The execution context of the "lumo" world in a frame, with the helper installed.
async fn world(live: &Live, frame: &FrameRt, tab: &Tab) -> Result<i64, ToolFailure> {
    let created = live
        .call_in(&frame.session, "Page.createIsolatedWorld", json!({"frameId": frame.frame_id, "worldName": WORLD}))
        .await?;
    let id = created["executionContextId"]
        .as_i64()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, "the browser gave no execution context"))?;
    // Chromium reuses the world of a given name in a document, so the helper
    // (and its refs) persist until the next navigation gives a new context.
    if with_frame_state(tab, frame.child, |world, _| *world) != Some(Some(id)) {
        evaluate(live, &frame.session, id, PAGE_JS).await?;
        with_frame_state(tab, frame.child, |world, _| *world = Some(id));
    }
    Ok(id)
}

async fn evaluate(live: &Live, session: &str, context: i64, expression: &str) -> Result<Value, ToolFailure> {
    let result = live
        .call_in(
            session,
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

/// Calls `__lumo.<method>(arg)` in the tab's main frame and returns its value.
pub(crate) async fn lumo_call(live: &Live, tab: &Tab, method: &str, arg: Value) -> Result<Value, ToolFailure> {
    lumo_call_in(live, tab, None, method, arg).await
}

/// Calls `__lumo.<method>(arg)` in a frame (`None`: the main frame). Keeps the
/// frame's ref counter in step so refs never repeat across documents.
pub(crate) async fn lumo_call_in(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    method: &str,
    arg: Value,
) -> Result<Value, ToolFailure> {
    ensure_no_dialog(tab)?;
    let frame = frame_rt(tab, child)?;
    let mut last_error = None;
    // One retry: a navigation can destroy the context between the two calls.
    for _ in 0..2 {
        let context = world(live, &frame, tab).await?;
        let next = with_frame_state(tab, child, |_, next| *next).unwrap_or(1);
        let prefix = frame.prefix();
        let expression = format!(
            "(() => {{ const L = globalThis.__lumo; L.setPrefix('{prefix}', {next}); const r = L.{method}({arg}); return {{ r, next: L.nextRef() }}; }})()"
        );
        match evaluate(live, &frame.session, context, &expression).await {
            Ok(value) => {
                if let Some(n) = value["next"].as_u64() {
                    with_frame_state(tab, child, |_, next| *next = (*next).max(n));
                }
                return Ok(value["r"].clone());
            }
            Err(e) => {
                with_frame_state(tab, child, |world, _| *world = None);
                last_error = Some(e);
            }
        }
    }
    Err(last_error.unwrap_or_else(|| fail(ErrorCode::OperationFailed, "page helper unavailable")))
}

/// The child frames of a tab, by index.
pub(crate) fn child_frames(tab: &Tab) -> Vec<(u32, String)> {
    tab.state().children.iter().map(|c| (c.index, c.frame_id.clone())).collect()
}

/// The frame a ref lives in: `e12` → main, `f2e7` → child 2.
pub(crate) fn frame_of_ref(r: &str) -> Option<u32> {
    ref_frame(r).flatten()
}

fn ref_frame(r: &str) -> Option<Option<u32>> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = r.strip_prefix('e') {
        return digits(rest).then_some(None);
    }
    let (frame, element) = r.strip_prefix('f')?.split_once('e')?;
    (digits(frame) && digits(element)).then(|| frame.parse().ok()).flatten().map(Some)
}

/// Checks a ref's form before asking the page.
pub(crate) fn check_ref(r: &str) -> Result<(), ToolFailure> {
    if ref_frame(r).is_some() {
        Ok(())
    } else {
        Err(fail(
            ErrorCode::InvalidArguments,
            format!(
                "ref: {r:?} is not a ref; refs look like \"e12\" (or \"f1e3\" inside a cross-origin frame) and come from page_snapshot or page_find"
            ),
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

/// An element in the lumo world of its frame.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    /// The CDP session of the element's frame.
    pub(crate) session: String,
    /// Its remote object id (valid in that session).
    pub(crate) object: String,
    /// The child frame it lives in (`None`: the main frame).
    pub(crate) child: Option<u32>,
}

/// The element behind `r`, or `stale_ref` when it is gone.
pub(crate) async fn element(live: &Live, tab: &Tab, r: &str) -> Result<Element, ToolFailure> {
    check_ref(r)?;
    ensure_no_dialog(tab)?;
    let child = ref_frame(r).flatten();
    let frame = frame_rt(tab, child).map_err(|_| stale_ref(r))?;
    let context = world(live, &frame, tab).await?;
    let result = live
        .call_in(
            &frame.session,
            "Runtime.evaluate",
            json!({"expression": format!("globalThis.__lumo.resolve({})", json!(r)), "contextId": context}),
        )
        .await?;
    let object = result["result"]["objectId"].as_str().map(str::to_string).ok_or_else(|| stale_ref(r))?;
    Ok(Element { session: frame.session, object, child })
}

/// Runs `function` with `this` = the element and returns its value.
pub(crate) async fn call_on(
    live: &Live,
    _tab: &Tab,
    element: &Element,
    function: &str,
    args: &[Value],
) -> Result<Value, ToolFailure> {
    let arguments: Vec<Value> = args.iter().map(|a| json!({"value": a})).collect();
    let result = live
        .call_in(
            &element.session,
            "Runtime.callFunctionOn",
            json!({"objectId": element.object, "functionDeclaration": function, "arguments": arguments, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("script error");
        return Err(fail(ErrorCode::OperationFailed, text.to_string()));
    }
    Ok(result["result"]["value"].clone())
}

/// Where the element's frame starts in the tab's viewport: (0, 0) for the
/// main frame; the `<iframe>`'s content box for a cross-origin frame.
pub(crate) async fn viewport_offset(live: &Live, tab: &Tab, element: &Element) -> Result<(f64, f64), ToolFailure> {
    match element.child {
        None => Ok((0.0, 0.0)),
        Some(n) => frame_owner(live, tab, n).await.map(|(_, x, y)| (x, y)),
    }
}

/// The `<iframe>` element of child frame `n` in the main frame, scrolled into
/// view: its ref there and where its content box starts in the viewport.
pub(crate) async fn frame_owner(live: &Live, tab: &Tab, n: u32) -> Result<(String, f64, f64), ToolFailure> {
    let frame = frame_rt(tab, Some(n))?;
    let owner = live.call(tab, "DOM.getFrameOwner", json!({"frameId": frame.frame_id})).await?;
    let main = frame_rt(tab, None)?;
    let context = world(live, &main, tab).await?;
    let resolved = live
        .call(tab, "DOM.resolveNode", json!({"backendNodeId": owner["backendNodeId"], "executionContextId": context}))
        .await?;
    let object = resolved["object"]["objectId"]
        .as_str()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, format!("the element of frame f{n} is not reachable")))?;
    let owner = Element { session: tab.session_id.clone(), object: object.to_string(), child: None };
    // Refs handed out here must advance the main frame's counter too.
    let found = call_on(
        live,
        tab,
        &owner,
        "function() { this.scrollIntoView({ block: 'nearest', behavior: 'instant' }); const r = this.getBoundingClientRect(); return { ref: globalThis.__lumo.refOf(this), x: r.left + this.clientLeft, y: r.top + this.clientTop, next: globalThis.__lumo.nextRef() }; }",
        &[],
    )
    .await?;
    if let Some(n) = found["next"].as_u64() {
        with_frame_state(tab, None, |_, next| *next = (*next).max(n));
    }
    Ok((
        found["ref"].as_str().unwrap_or_default().to_string(),
        found["x"].as_f64().unwrap_or(0.0),
        found["y"].as_f64().unwrap_or(0.0),
    ))
}

/// Waits until `cond` holds on the tab's state, or `timeout` passes; returns whether it held.
/// Re-checks on every event of the tab, and at least every 25 ms for conditions on time.
pub(crate) async fn wait_until(tab: &Tab, timeout: Duration, mut cond: impl FnMut(&TabState) -> bool) -> bool {
    const TICK: Duration = Duration::from_millis(25);
    let deadline = Instant::now() + timeout;
    loop {
        let notified = tab.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if cond(&tab.state()) {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let _ = tokio::time::timeout(TICK.min(deadline - now), notified).await;
    }
}

//! Talking to lumo's in-page helper (`js/page.js`) in the isolated world
//! "lumo", where the page's scripts can neither see nor change it.

use std::time::{Duration, Instant};

use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::{Value, json};

use crate::refs::{self, Owner};
use crate::session::Live;
use crate::tab::{Tab, TabState};
use crate::tool::fail;

// The reader (`js/extract.js`) extends the helper in the same world, so it hands out the same refs.
const PAGE_JS: &str = concat!(include_str!("js/page.js"), "\n", include_str!("js/extract.js"));
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

/// The frame's cached world id, read or written.
fn with_frame_state<T>(tab: &Tab, child: Option<u32>, f: impl FnOnce(&mut Option<i64>) -> T) -> Option<T> {
    let mut s = tab.state();
    match child {
        None => Some(f(&mut s.world)),
        Some(n) => s.children.iter_mut().find(|c| c.index == n).map(|c| f(&mut c.world)),
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
    if with_frame_state(tab, frame.child, |world| *world) != Some(Some(id)) {
        evaluate(live, &frame.session, id, PAGE_JS).await?;
        with_frame_state(tab, frame.child, |world| *world = Some(id));
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

/// Calls `__lumo.<method>(arg)` in a frame (`None`: the main frame). The refs
/// it makes are numbered from the session's counter and booked to this tab.
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
        let _issuing = live.refs.issuing.lock().await;
        let next = live.refs.next();
        let prefix = frame.prefix();
        let expression = format!(
            "(() => {{ const L = globalThis.__lumo; const s = L.setPrefix('{prefix}', {next}); const r = L.{method}({arg}); return {{ r, s, e: L.nextRef() }}; }})()"
        );
        match evaluate(live, &frame.session, context, &expression).await {
            Ok(value) => {
                book_refs(live, tab, child, &value);
                return Ok(value["r"].clone());
            }
            Err(e) => {
                with_frame_state(tab, child, |world| *world = None);
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

/// Books the refs a helper call made (its answer carries `s`, where it
/// started numbering, and `e`, where it stopped) to the tab's frame.
fn book_refs(live: &Live, tab: &Tab, child: Option<u32>, value: &Value) {
    if let (Some(start), Some(end)) = (value["s"].as_u64(), value["e"].as_u64()) {
        live.refs.record(&tab.target_id, child, start, end);
    }
}

/// Checks a ref's form before asking the page.
pub(crate) fn check_ref(r: &str) -> Result<(), ToolFailure> {
    refs::check(r).map(|_| ())
}

/// The frame of `tab` where `r` may be looked up (`None`: the main frame), or
/// why it may not: malformed, never given out, or given out in another tab.
/// A ref must never reach an element of a tab other than the one acted on.
pub(crate) fn ref_frame(live: &Live, tab: &Tab, r: &str) -> Result<Option<u32>, ToolFailure> {
    let parsed = refs::check(r)?;
    enum Verdict {
        Here,
        Never,
        Elsewhere(String),
    }
    let verdict = live.refs.owner(parsed, |owner| match owner {
        Owner::Tab { target } if target == tab.target_id => Verdict::Here,
        // Too old for the book: numbers never repeat, so another tab's finds nothing here.
        Owner::Forgotten => Verdict::Here,
        Owner::Tab { target } => Verdict::Elsewhere(target.to_string()),
        Owner::Never => Verdict::Never,
    });
    match verdict {
        Verdict::Here => Ok(parsed.child),
        Verdict::Never => Err(fail(
            ErrorCode::NotFound,
            format!("{r} was never given out in this tab; take a page_snapshot (or page_find) and use a ref from it."),
        )),
        Verdict::Elsewhere(target) => {
            // Only the tabs of the acting tab's own browser context count: a ref of
            // another client's context reads as never given out here, naming nothing of it.
            let all = live.tabs().list.clone();
            let closed = !all.iter().any(|t| t.target_id == target);
            let ours = |context: &str| context == tab.browser_context;
            let tabs: Vec<_> = all.into_iter().filter(|t| ours(&t.browser_context)).collect();
            let index_of = |id: &str| tabs.iter().position(|t| t.target_id == id);
            let elsewhere = if closed {
                live.closed_context(&target).is_some_and(|context| !ours(&context))
            } else {
                index_of(&target).is_none()
            };
            if elsewhere {
                return Err(fail(
                    ErrorCode::NotFound,
                    format!(
                        "{r} was never given out in this tab; take a page_snapshot (or page_find) and use a ref from it."
                    ),
                ));
            }
            match (index_of(&target), index_of(&tab.target_id)) {
                (Some(theirs), Some(ours)) => Err(fail(
                    ErrorCode::InvalidState,
                    format!(
                        "{r} belongs to tab {theirs}, not the current tab {ours}; select it with browser_tabs {{action: \"select\", index: {theirs}}} to act there, or take a page_snapshot of this tab."
                    ),
                )),
                _ => Err(fail(
                    ErrorCode::StaleRef,
                    format!(
                        "{r} belonged to a tab that is closed now; take a page_snapshot of this tab and use its refs."
                    ),
                )),
            }
        }
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
    let child = ref_frame(live, tab, r)?;
    ensure_no_dialog(tab)?;
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

/// Runs `function` with `this` = the element and returns its value. Refs it
/// makes (`describe` of a covering element) are numbered and booked like
/// those of [`lumo_call_in`].
pub(crate) async fn call_on(
    live: &Live,
    tab: &Tab,
    element: &Element,
    function: &str,
    args: &[Value],
) -> Result<Value, ToolFailure> {
    let _issuing = live.refs.issuing.lock().await;
    let prefix = match element.child {
        None => "e".to_string(),
        Some(n) => format!("f{n}e"),
    };
    let mut arguments = vec![json!({"value": prefix}), json!({"value": live.refs.next()})];
    arguments.extend(args.iter().map(|a| json!({"value": a})));
    let wrapped = format!(
        "async function(p, n, ...a) {{ const L = globalThis.__lumo; const s = L.setPrefix(p, n); const r = await ({function}).apply(this, a); return {{ r, s, e: L.nextRef() }}; }}"
    );
    let result = live
        .call_in(
            &element.session,
            "Runtime.callFunctionOn",
            json!({"objectId": element.object, "functionDeclaration": wrapped, "arguments": arguments, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("script error");
        return Err(fail(ErrorCode::OperationFailed, text.to_string()));
    }
    let value = &result["result"]["value"];
    book_refs(live, tab, element.child, value);
    Ok(value["r"].clone())
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
    let found = call_on(
        live,
        tab,
        &owner,
        "function() { this.scrollIntoView({ block: 'nearest', behavior: 'instant' }); const r = this.getBoundingClientRect(); return { ref: globalThis.__lumo.refOf(this), x: r.left + this.clientLeft, y: r.top + this.clientTop }; }",
        &[],
    )
    .await?;
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

//! How the helper is reached: installed once per document in the isolated
//! world "lumo" of a frame, called with `Runtime.callFunctionOn` (arguments as
//! JSON values, never spliced into source), its refs numbered from the
//! session's [`RefBook`](crate::refs::RefBook) and booked to the tab and frame.
//! page_extract's reader joins the helper with the first call that needs it.

use std::sync::LazyLock;

use lumo_protocol::ErrorCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::script::{HELPER_JS, WORLD};
use crate::error::{BrowserError, refuse};
use crate::session::Live;
use crate::tab::{Tab, Worlds};
use crate::tool::fail;

/// The two entries of the contract (`js/api.js`): a method of the frame's
/// document, a method of one element (`this`).
const ON_PAGE: &str = "function(p, n, method, arg) { return globalThis.__lumo.page(p, n, method, arg); }";
const ON_ELEMENT: &str = "function(p, n, method, arg) { return globalThis.__lumo.element(p, n, method, arg, this); }";
const RESOLVE: &str = "function(r) { return globalThis.__lumo.resolve(r); }";

/// page_extract's reader (`js/extract.js`, wrapped by `build.rs`): not part of
/// the helper every document gets, so the first call that reads a document
/// installs it, in the same call (a navigation between two calls cannot leave
/// a world without it).
const READER_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/reader.js"));
static ON_PAGE_READING: LazyLock<String> = LazyLock::new(|| {
    format!(
        "function(p, n, method, arg) {{ if (!globalThis.__lumo.hasReader()) {{ {READER_JS} }} \
         return globalThis.__lumo.page(p, n, method, arg); }}"
    )
});

/// Which entry of the contract a call on the page's document goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// A method of the helper.
    Helper,
    /// A method of page_extract's reader (installed by the call when missing).
    Reader,
}

/// A frame lumo runs its helper in: the tab's main frame (with the same-origin
/// frames it reaches), or an out-of-process (cross-origin) frame with a CDP
/// session of its own. Refs carry the frame: `e12` in the main frame,
/// `f2e7` in child frame 2.
#[derive(Debug, Clone)]
pub(super) struct FrameRt {
    pub(super) session: String,
    pub(super) frame_id: String,
    pub(super) child: Option<u32>,
}

/// The ref prefix of a frame.
fn prefix(child: Option<u32>) -> String {
    match child {
        None => "e".to_string(),
        Some(n) => format!("f{n}e"),
    }
}

pub(super) fn frame_rt(tab: &Tab, child: Option<u32>) -> Result<FrameRt, BrowserError> {
    let s = tab.state();
    match child {
        None => Ok(FrameRt { session: tab.session_id.clone(), frame_id: s.main_frame.clone(), child: None }),
        Some(n) => s
            .children
            .iter()
            .find(|c| c.index == n)
            .map(|c| FrameRt { session: c.session_id.clone(), frame_id: c.frame_id.clone(), child: Some(n) })
            .ok_or_else(|| {
                refuse(
                    ErrorCode::StaleRef,
                    format!("Frame f{n} is gone (it navigated or was removed). Take a new page_snapshot."),
                )
            }),
    }
}

/// The frame's worlds, read or written (`None`: the child frame is gone).
fn with_worlds<T>(tab: &Tab, child: Option<u32>, f: impl FnOnce(&mut Worlds) -> T) -> Option<T> {
    let mut s = tab.state();
    match child {
        None => Some(f(&mut s.worlds)),
        Some(n) => s.children.iter_mut().find(|c| c.index == n).map(|c| f(&mut c.worlds)),
    }
}

/// Where a call runs: the world's context, by the unique id Chromium
/// announced when it made the world, or by the id `Page.createIsolatedWorld` gave.
#[derive(Debug, Clone)]
pub(super) struct Context {
    pub(super) id: i64,
    unique: Option<String>,
}

impl Context {
    /// The context's key in `Runtime.callFunctionOn`'s parameters, added to `params`.
    fn target(&self, mut params: Value) -> Value {
        match &self.unique {
            Some(unique) => params["uniqueContextId"] = json!(unique),
            None => params["executionContextId"] = json!(self.id),
        }
        params
    }
}

/// The execution context of the "lumo" world in a frame, with the helper installed.
pub(super) async fn world(live: &Live, frame: &FrameRt, tab: &Tab) -> Result<Context, BrowserError> {
    if let Some((id, unique)) = with_worlds(tab, frame.child, |w| w.preloaded.clone()).flatten() {
        return Ok(Context { id, unique: Some(unique) });
    }
    let created = live
        .call_in(&frame.session, "Page.createIsolatedWorld", json!({"frameId": frame.frame_id, "worldName": WORLD}))
        .await?;
    let id = created["executionContextId"]
        .as_i64()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, "the browser gave no execution context"))?;
    // Chromium reuses the world of a given name in a document, so the helper
    // (and its refs) persist until the next navigation gives a new context.
    if with_worlds(tab, frame.child, |w| w.installed) != Some(Some(id)) {
        let result = live
            .call_in(
                &frame.session,
                "Runtime.evaluate",
                json!({"expression": HELPER_JS, "contextId": id, "returnByValue": true}),
            )
            .await?;
        thrown(&result)?;
    }
    with_worlds(tab, frame.child, |w| w.installed_in(id));
    Ok(Context { id, unique: None })
}

/// The error for a call that threw in the page.
fn thrown(result: &Value) -> Result<(), BrowserError> {
    match result.get("exceptionDetails") {
        Some(details) => {
            let text =
                details["exception"]["description"].as_str().or(details["text"].as_str()).unwrap_or("script error");
            Err(refuse(ErrorCode::OperationFailed, format!("lumo's page helper failed: {text}")))
        }
        None => Ok(()),
    }
}

/// What every call answers: its method's reply and the run of ref numbers it used.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    value: Value,
    refs: (u64, u64),
}

/// Runs `f` with the next ref number, under the book's issuing lock, and books
/// the run of numbers the call reports to the tab's frame. The book is the
/// counter's one owner: the page numbers from what it is handed.
async fn numbered<F, Fut>(live: &Live, tab: &Tab, child: Option<u32>, f: F) -> Result<Value, BrowserError>
where
    F: FnOnce(Vec<Value>) -> Fut,
    Fut: Future<Output = Result<Value, BrowserError>>,
{
    let _issuing = live.refs.issuing.lock().await;
    let ticket = vec![json!({"value": prefix(child)}), json!({"value": live.refs.next()})];
    let result = f(ticket).await?;
    thrown(&result)?;
    let envelope: Envelope = serde_json::from_value(result["result"]["value"].clone()).map_err(|e| {
        fail(ErrorCode::OperationFailed, format!("lumo's page helper gave an answer lumo cannot read ({e})"))
    })?;
    let (first, end) = envelope.refs;
    live.refs.record(&tab.target_id, child, first, end);
    Ok(envelope.value)
}

/// Calls a method of the helper on a frame's document (`None`: the main frame).
pub(super) async fn call_page(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    entry: Entry,
    method: &str,
    arg: Value,
) -> Result<Value, BrowserError> {
    let declaration = match entry {
        Entry::Helper => ON_PAGE,
        Entry::Reader => ON_PAGE_READING.as_str(),
    };
    crate::page::ensure_no_dialog(tab)?;
    let frame = frame_rt(tab, child)?;
    let mut last_error = None;
    let mut failures = 0;
    // A navigation can destroy the context between the two calls; the bridge's worker
    // may stop during the call, and again during the retry. Failures of the bridge
    // (it could not say whether the command ran) are tried again up to ATTEMPTS times,
    // others three times.
    for _ in 0..ATTEMPTS {
        // The install is safe to run again: a world that has the helper keeps it.
        let e = match world(live, &frame, tab).await {
            Err(e) => e,
            Ok(context) => {
                let called = numbered(live, tab, child, |ticket| {
                    let arguments = [ticket, vec![json!({"value": method}), json!({"value": arg})]].concat();
                    live.call_in(
                        &frame.session,
                        "Runtime.callFunctionOn",
                        context.target(json!({"functionDeclaration": declaration, "arguments": arguments,
                            "returnByValue": true, "awaitPromise": true})),
                    )
                });
                match called.await {
                    Ok(value) => return Ok(value),
                    Err(e) if e.unsure() && !SAFE_TO_REPEAT.contains(&method) => return Err(e),
                    Err(e) => e,
                }
            }
        };
        if e.code() == ErrorCode::Unavailable {
            return Err(e);
        }
        if !e.unsure() {
            // The helper may be missing from a world Chromium made: install it the old way.
            with_worlds(tab, child, Worlds::distrust);
            failures += 1;
        }
        last_error = Some(e);
        if failures == 3 {
            break;
        }
    }
    Err(last_error.unwrap_or_else(|| refuse(ErrorCode::OperationFailed, "page helper unavailable")))
}

/// How many times a call on a page's document is tried when the bridge's worker keeps stopping under it.
const ATTEMPTS: usize = 8;

/// The helper's methods on a document (`js/api.js`, PAGE) that change nothing but
/// refs, so running one twice ends the same as once: one the bridge could not
/// vouch for (its worker stopped under it) is run again. The others (`scroll`,
/// `findPick`, `changes`) fail instead of running twice.
const SAFE_TO_REPEAT: &[&str] =
    &["snapshot", "find", "findCandidates", "hasText", "refState", "watch", "extract", "records", "probeExtractors"];

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

/// Calls a method of the helper on one element.
pub(super) async fn call_element(
    live: &Live,
    tab: &Tab,
    element: &Element,
    method: &str,
    arg: Value,
) -> Result<Value, BrowserError> {
    numbered(live, tab, element.child, |ticket| {
        let arguments = [ticket, vec![json!({"value": method}), json!({"value": arg})]].concat();
        live.call_in(
            &element.session,
            "Runtime.callFunctionOn",
            json!({"objectId": element.object, "functionDeclaration": ON_ELEMENT, "arguments": arguments,
                "returnByValue": true, "awaitPromise": true}),
        )
    })
    .await
}

/// The element behind `r` in `child`'s world, or `None` when the page no longer has it.
pub(super) async fn resolve(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    r: &str,
) -> Result<Option<Element>, BrowserError> {
    let Ok(frame) = frame_rt(tab, child) else { return Ok(None) };
    let context = world(live, &frame, tab).await?;
    let result = live
        .call_in(
            &frame.session,
            "Runtime.callFunctionOn",
            context.target(json!({"functionDeclaration": RESOLVE, "arguments": [{"value": r}]})),
        )
        .await?;
    Ok(result["result"]["objectId"].as_str().map(|object| Element {
        session: frame.session,
        object: object.to_string(),
        child,
    }))
}

/// An element the browser names by its backend node id (the `<iframe>` of a
/// frame), as a remote object in lumo's world of the main frame.
pub(super) async fn adopt(live: &Live, tab: &Tab, backend_node_id: &Value) -> Result<Option<Element>, BrowserError> {
    let main = frame_rt(tab, None)?;
    let context = world(live, &main, tab).await?;
    let resolved = live
        .call(tab, "DOM.resolveNode", json!({"backendNodeId": backend_node_id, "executionContextId": context.id}))
        .await?;
    Ok(resolved["object"]["objectId"].as_str().map(|object| Element {
        session: tab.session_id.clone(),
        object: object.to_string(),
        child: None,
    }))
}

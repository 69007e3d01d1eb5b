//! Invoking a page tool: the MCP tool made from a listed registration
//! ([`page_tool`]), the call over `WebMCP.invokeTool`, the wait for its
//! `toolResponded` (cancelled in the page when the call is dropped), and what
//! a form tool did, which Chromium does not report.

use std::sync::Arc;
use std::time::Duration;

use lumo_cdp::{CdpError, INVALID_PARAMS};
use lumo_protocol::text::clip_marked;
use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::{Value, json};

use super::answer::{completed, declarative_report, document_title, note_move};
use super::binding::stale;
use super::listing::PageTool;
use crate::error::{BrowserError, refuse};
use crate::page::wait_until;
use crate::session::{Live, Session};

use crate::tool::{Hints, Outcome, Tool, ToolOutput, fail};

/// How long an invocation may run by default.
pub(crate) const INVOKE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long to wait for what a declarative (form) tool did.
const DECLARATIVE_SETTLE: Duration = Duration::from_millis(1500);

/// The MCP tool for a page tool: its spec is the page's, its handler invokes
/// exactly this registration.
pub fn page_tool(tool: &PageTool) -> Tool<Arc<Session>> {
    let bound = tool.clone();
    let mut t = Tool::new(
        tool.exposed.as_deref().unwrap_or(&tool.name),
        &tool.description,
        tool.hints(),
        move |session: Arc<Session>, input: Value| {
            let bound = bound.clone();
            async move { invoke(&session, &bound, input).await }
        },
    )
    .untrusted();
    t.spec.input_schema = tool.input_schema.clone();
    let mut notes = Vec::new();
    if tool.consequential {
        notes.push("consequential: asks for confirmation");
    }
    if tool.declarative {
        notes.push("a form on the page");
    }
    t.spec.description = format!(
        "[page tool {:?} from {}{}] {}",
        tool.name,
        tool.origin,
        if notes.is_empty() { String::new() } else { format!("; {}", notes.join("; ")) },
        tool.description
    );
    t
}

/// A tool for a `webmcp_*` name that no longer matches: it fails with `stale_context` (or why).
pub fn unavailable_page_tool(name: &str, failure: ToolFailure) -> Tool<Arc<Session>> {
    let mut t = Tool::new(name, "A page tool that is gone.", Hints::ACT, move |_: Arc<Session>, _: Value| {
        let failure = failure.clone();
        async move { Err::<ToolOutput, _>(failure) }
    });
    t.spec.input_schema = json!({"type": "object"});
    t
}

/// Cancels a pending invocation when the call is dropped (MCP cancellation, timeout).
struct CancelOnDrop {
    live: Arc<Live>,
    /// The session of the tool's frame (a cross-origin frame has its own).
    session: String,
    invocation: String,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (live, session, id) = (self.live.clone(), self.session.clone(), std::mem::take(&mut self.invocation));
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Err(e) = live.call_in(&session, "WebMCP.cancelInvocation", json!({"invocationId": id})).await {
                    tracing::debug!(error = %e, "could not cancel a page tool invocation");
                }
            });
        }
    }
}

/// Invokes a bound registration and waits for its answer.
pub(crate) async fn invoke(session: &Session, bound: &PageTool, input: Value) -> Outcome {
    invoke_with_timeout(session, bound, input, INVOKE_TIMEOUT).await
}

async fn invoke_with_timeout(session: &Session, bound: &PageTool, input: Value, timeout: Duration) -> Outcome {
    let live = session.live().await?;
    // Only a tab of the caller's own browser context.
    let tab = live
        .tabs_in(session.scope)
        .into_iter()
        .find(|t| t.target_id == bound.target_id)
        .ok_or_else(|| stale(bound.exposed.as_deref().unwrap_or(&bound.name), "its tab was closed"))?;
    session.check_readable(&live, &tab).await?;
    if !tab.state().webmcp.holds(&tab.target_id, bound.generation) {
        return Err(stale(bound.exposed.as_deref().unwrap_or(&bound.name), "the registration is gone").into());
    }
    crate::page::ensure_no_dialog(&tab)?;
    let input = if input.is_object() { input } else { json!({}) };
    let (url_before, title_before, navigations_before, marks_before) = {
        let s = tab.state();
        (s.url.clone(), s.title.clone(), s.navigations, s.marks())
    };
    let title_before =
        if bound.declarative { document_title(&live, &tab).await.unwrap_or(title_before) } else { title_before };
    let frame_session = tab.session_for_frame(&bound.frame_id);
    let started = live
        .call_in(
            &frame_session,
            "WebMCP.invokeTool",
            json!({"frameId": bound.frame_id, "toolName": bound.name, "input": input}),
        )
        .await
        .map_err(|e| match e {
            // The frame no longer has a tool of that name.
            BrowserError::Cdp(CdpError::Protocol { code: INVALID_PARAMS, .. }) => {
                stale(bound.exposed.as_deref().unwrap_or(&bound.name), "the page no longer has it").into()
            }
            e => e,
        })?;
    let id = started["invocationId"]
        .as_str()
        .ok_or_else(|| fail(ErrorCode::OperationFailed, "the browser gave no invocation id"))?
        .to_string();
    let mut guard = CancelOnDrop { live: live.clone(), session: frame_session, invocation: id.clone(), armed: true };
    let wait = if bound.declarative { DECLARATIVE_SETTLE } else { timeout };
    let target = tab.target_id.clone();
    let still_there = |s: &crate::tab::TabState| s.webmcp.holds(&target, bound.generation);
    let answered_or_gone = |s: &crate::tab::TabState| s.webmcp.response(&id).is_some() || !still_there(s);
    let started_at = tokio::time::Instant::now();
    wait_until(&tab, wait, answered_or_gone).await;
    let mut response = tab.state().webmcp.response(&id);
    if response.is_none() && !still_there(&tab.state()) && !bound.declarative {
        // Give a response that raced the removal a moment to arrive.
        let left = wait.saturating_sub(started_at.elapsed());
        let grace = Duration::from_millis(300);
        if wait_until(&tab, grace.min(left), |s| s.webmcp.response(&id).is_some()).await {
            response = tab.state().webmcp.response(&id);
        } else if left > grace {
            guard.armed = false;
            let s = tab.state();
            let why = if s.navigations != navigations_before {
                format!("the page navigated to {} during the call", s.url)
            } else {
                "the page removed the tool during the call".to_string()
            };
            return Err(refuse(
                ErrorCode::StaleContext,
                format!(
                    "{}: {why}; the tool gave no answer. Its effect is unknown: check the page (page_snapshot) before calling again.",
                    bound.name
                ),
            ));
        }
    }
    let Some(response) = response else {
        if bound.declarative {
            guard.armed = false;
            return Ok(declarative_report(&live, &tab, bound, &url_before, &title_before, navigations_before).await);
        }
        // The guard cancels the invocation in the page.
        return Err(refuse(
            ErrorCode::Timeout,
            format!("page tool {:?} gave no answer within {}s; lumo cancelled it", bound.name, timeout.as_secs()),
        ));
    };
    guard.armed = false;
    match response.status.as_str() {
        "Completed" => {
            let output = response.output.unwrap_or(Value::Null);
            // Chromium 156 ends an invocation whose page unloads as Completed with `[]`:
            // tell a navigation apart from a tool that answered nothing.
            let empty = output.is_null() || output.as_array().is_some_and(Vec::is_empty);
            if empty && wait_until(&tab, Duration::from_millis(1500), |s| s.navigations != navigations_before).await {
                let (url, title) = {
                    let s = tab.state();
                    (s.url.clone(), s.title.clone())
                };
                // URLs and titles are the page's (a URL can carry a token): fenced.
                return Ok(ToolOutput::text(format!(
                    "Page tool {:?} navigated the page before it answered (no output). The page tools changed: list them again (tools/list or webmcp_list).",
                    bound.name
                ))
                .with_page_text(format!("url before: {url_before}\nurl: {url}\ntitle: {title}"))
                .with_structured(json!({"ok": true, "navigated": true, "urlBefore": url_before, "url": url, "title": title})));
            }
            let mut out = completed(bound, output);
            // A tool may move the page as it answers: say so, as actions do.
            crate::action::settle(&tab, marks_before, crate::action::Reach::MayNavigate).await;
            note_move(&tab, &mut out, &url_before, navigations_before);
            out
        }
        "Canceled" => Err(refuse(ErrorCode::Cancelled, format!("page tool {:?} was cancelled", bound.name))),
        _ => {
            let text = response
                .error_text
                .filter(|t| !t.is_empty())
                .or(response.exception)
                .unwrap_or_else(|| "the page tool failed without saying why".to_string());
            // The page's error text is the page's words: fenced, never lumo's own message.
            Err(BrowserError::page(
                fail(
                    ErrorCode::OperationFailed,
                    format!("page tool {:?} failed; the page's error text follows", bound.name),
                ),
                format!("error: {}", clip_marked(&text, 2000)),
            ))
        }
    }
}

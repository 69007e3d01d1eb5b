//! What every page tool checks before it reaches the page: no dialog blocks
//! it, a ref is well formed and belongs to the tab acted on; and waiting on
//! the tab's state. The page itself is reached through [`crate::helper`].

use std::time::{Duration, Instant};

use lumo_protocol::{ErrorCode, ToolFailure};

use crate::error::{BrowserError, refuse};
use crate::refs::{self, Owner};
use crate::session::Live;
use crate::tab::{Tab, TabState};
use crate::tool::fail;

/// Refuses page access while a dialog blocks the page's scripts.
pub(crate) fn ensure_no_dialog(tab: &Tab) -> Result<(), BrowserError> {
    match &tab.state().dialog {
        Some(d) => Err(refuse(
            ErrorCode::InvalidState,
            format!(
                "A {} dialog is open ({:?}); the page is blocked. Answer it with page_dialog first.",
                d.kind, d.message
            ),
        )),
        None => Ok(()),
    }
}

/// The child frames of a tab, by index.
pub(crate) fn child_frames(tab: &Tab) -> Vec<(u32, String)> {
    tab.state().children.iter().map(|c| (c.index, c.frame_id.clone())).collect()
}

/// Checks a ref's form before asking the page.
pub(crate) fn check_ref(r: &str) -> Result<(), ToolFailure> {
    refs::check(r).map(|_| ())
}

/// The frame of `tab` where `r` may be looked up (`None`: the main frame), or
/// why it may not: malformed, never given out, or given out in another tab.
/// A ref must never reach an element of a tab other than the one acted on.
pub(crate) fn ref_frame(live: &Live, tab: &Tab, r: &str) -> Result<Option<u32>, BrowserError> {
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
        Verdict::Never => Err(refuse(
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
                return Err(refuse(
                    ErrorCode::NotFound,
                    format!(
                        "{r} was never given out in this tab; take a page_snapshot (or page_find) and use a ref from it."
                    ),
                ));
            }
            match (index_of(&target), index_of(&tab.target_id)) {
                (Some(theirs), Some(ours)) => Err(refuse(
                    ErrorCode::InvalidState,
                    format!(
                        "{r} belongs to tab {theirs}, not the current tab {ours}; select it with browser_tabs {{action: \"select\", index: {theirs}}} to act there, or take a page_snapshot of this tab."
                    ),
                )),
                _ => Err(refuse(
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

//! The shape of every action's answer: what happened, where the page is now
//! when that changed, what changed on the page, and anything now waiting on
//! the agent (a dialog, a file chooser). Never the whole snapshot again.

use std::future::Future;
use std::time::Duration;

use serde_json::json;

use crate::error::BrowserError;
use crate::helper;
use crate::page::wait_until;
use crate::session::Live;
use crate::tab::{Marks, Tab};
use crate::tool::{Outcome, ToolOutput};

/// How many change lines an answer carries at most.
const CHANGE_LINES: u64 = 12;
/// How long after an action a navigation it set off shows up (`frameStartedLoading`
/// follows a link click within a few ms).
const NAVIGATION_START: Duration = Duration::from_millis(60);
/// How long after an action's last fetch a navigation may still start and count
/// as the action's (a click that fetches, then sets `location`). Only actions
/// that fetched wait for it, and the wait for the network to calm down already
/// covers the first 100 ms of it.
const LATE_NAVIGATION: Duration = Duration::from_millis(300);
/// How long a navigation started by an action may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(15);
/// How long an answer waits at most for the requests an action started.
const QUIET_TIMEOUT: Duration = Duration::from_millis(1500);

/// What an action may set off, which decides how long its answer waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A click or a key may start a navigation: give it a moment to show.
    MayNavigate,
    /// Typing, filling, scrolling: changes stay in the page.
    InPlace,
}

/// Runs `action` on the tab and builds the answer around the sentence it returns.
pub(crate) async fn act<F>(live: &Live, tab: &Tab, reach: Reach, action: F) -> Outcome
where
    F: Future<Output = Result<String, BrowserError>>,
{
    let (before, url, title) = {
        let s = tab.state();
        (s.marks(), s.url.clone(), s.title.clone())
    };
    let watching = helper::watch(live, tab).await.is_ok();
    let said = action.await?;
    settle(tab, before, reach).await;
    Ok(describe_outcome(live, tab, said, before, &url, &title, watching).await)
}

/// Waits for what an action set off: a navigation to load (a new document or a
/// same-document change), or the network to calm down.
pub(crate) async fn settle(tab: &Tab, before: Marks, reach: Reach) {
    let window = if reach == Reach::MayNavigate { NAVIGATION_START } else { Duration::ZERO };
    let started = wait_until(tab, window, |s| s.loading || s.moved_since(&before) || s.dialog.is_some()).await;
    let landed = !started || finish_loading(tab, before).await;
    quiet(tab).await;
    if reach != Reach::MayNavigate || !landed {
        return;
    }
    let now = tab.state().marks();
    // A navigation that began while the action's requests settled: let it land.
    if tab.state().loading {
        finish_loading(tab, now).await;
        quiet(tab).await;
        return;
    }
    // The action fetched and has not moved the page: a script may move it once the
    // answer is in (issue 8, item 18). Clicks that fetch nothing skip this.
    let grace = {
        let s = tab.state();
        let fetched = s
            .requests
            .iter()
            .any(|r| r.seq > before.request_seq && matches!(r.resource_type.as_str(), "Fetch" | "XHR"));
        let since = s.last_network_activity.map_or(LATE_NAVIGATION, |t| t.elapsed());
        if fetched && !s.moved_since(&before) { LATE_NAVIGATION.saturating_sub(since) } else { Duration::ZERO }
    };
    if !grace.is_zero() {
        let late = wait_until(tab, grace, |s| s.loading || s.moved_since(&now) || s.dialog.is_some()).await;
        if late {
            finish_loading(tab, now).await;
            quiet(tab).await;
        }
    }
}

/// Waits until a load that started after `before` is over: the main frame stopped
/// loading after moving (new document or not), or a dialog blocks the page.
/// Same-document changes stop loading without a new document, and a load that
/// came to nothing (a 204, a download) stops without moving: both end the wait.
/// Returns whether it ended in time.
async fn finish_loading(tab: &Tab, before: Marks) -> bool {
    wait_until(tab, LOAD_TIMEOUT, |s| {
        s.dialog.is_some() || (!s.loading && (s.moved_since(&before) || s.stopped_loading != before.stopped_loading))
    })
    .await
}

/// Lets requests an action started finish (bounded): answers read the settled page.
async fn quiet(tab: &Tab) {
    wait_until(tab, QUIET_TIMEOUT, |s| {
        s.dialog.is_some()
            || (s.inflight() == 0 && s.last_network_activity.is_none_or(|t| t.elapsed() > Duration::from_millis(100)))
    })
    .await;
}

/// The answer: lumo's sentence, then where the page is now when that changed,
/// the title and a few lines of what changed. URLs and titles are the page's
/// (a URL can carry a token in its fragment): they go in the fenced page part.
pub(crate) async fn describe_outcome(
    live: &Live,
    tab: &Tab,
    said: String,
    before: Marks,
    url: &str,
    title: &str,
    watching: bool,
) -> ToolOutput {
    let mut text = said;
    let (navigated, now_url, now_title, dialog) = {
        let s = tab.state();
        (s.navigations != before.navigations, s.url.clone(), s.title.clone(), s.dialog.is_some())
    };
    let mut page_lines = Vec::new();
    if navigated {
        text.push_str("\nThe page navigated to a new document (url below).");
        page_lines.push(format!("url: {now_url}"));
    } else if now_url != url {
        text.push_str("\nThe URL changed within the page (url below).");
        page_lines.push(format!("url: {now_url}"));
    }
    // After a navigation the target's title can still be Chromium's placeholder (the URL): ask the page.
    let title = match (navigated, now_title != title) {
        (true, _) => title_of(live, tab, String::new()).await,
        (false, true) => title_of(live, tab, now_title).await,
        (false, false) => String::new(),
    };
    let mut output = ToolOutput::default();
    if !title.is_empty() {
        page_lines.push(format!("title: {title}"));
    }
    if watching
        && !dialog
        && !navigated
        && let Ok(lines) = helper::changes(live, tab, CHANGE_LINES).await
        && !lines.is_empty()
    {
        page_lines.push("changes:".to_string());
        page_lines.extend(lines);
    }
    output.text = text;
    if !page_lines.is_empty() {
        output.page_text = Some(page_lines.join("\n"));
    }
    output
}

/// The document title (asked of the page when the event has not told us yet).
async fn title_of(live: &Live, tab: &Tab, known: String) -> String {
    if !known.is_empty() || tab.state().dialog.is_some() {
        return known;
    }
    let result =
        live.call(tab, "Runtime.evaluate", json!({"expression": "document.title", "returnByValue": true})).await;
    result.ok().and_then(|r| r["result"]["value"].as_str().map(str::to_string)).unwrap_or_default()
}

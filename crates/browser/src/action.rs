//! What an action leaves behind and how its answer reads: waiting for what it
//! set off (a navigation, its requests), then what happened, where the page is
//! now when that changed and what changed on the page. Never the whole
//! snapshot again. Tab tools reach it only through `tools::tab_tool::on_tab`;
//! [`open`] is the load a navigation waits for.

use std::future::Future;
use std::time::Duration;

use serde_json::json;

use lumo_protocol::ErrorCode;

use crate::error::{BrowserError, refuse};
use crate::helper;
use crate::page::wait_until;
use crate::session::Live;
use crate::tab::{Marks, Tab};
use crate::tool::ToolOutput;

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
/// How long a navigation lumo started ([`open`]) may take to load.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
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

/// Runs `action` on the tab and builds the answer around what it answered (its
/// sentence; `page_dialog` adds the dialog's message as page text).
pub(crate) async fn act<E, F>(live: &Live, tab: &Tab, reach: Reach, action: F) -> Result<ToolOutput, E>
where
    F: Future<Output = Result<ToolOutput, E>>,
{
    let (before, url, title, blocked) = {
        let s = tab.state();
        (s.marks(), s.url.clone(), s.title.clone(), s.dialog.is_some())
    };
    // A dialog blocks page script: there is nothing to watch (the helper would refuse).
    let watching = !blocked && helper::watch(live, tab).await.is_ok();
    let said = action.await?;
    settle(tab, before, reach).await;
    Ok(describe_outcome(live, tab, said, before, &url, &title, watching).await)
}

/// Opens `url` in the tab and waits for it to load and settle.
pub(crate) async fn open(live: &Live, tab: &Tab, url: &str) -> Result<(), BrowserError> {
    let navigations = {
        let mut s = tab.state();
        s.blocked = None;
        s.navigations
    };
    let result = live.call(tab, "Page.navigate", json!({"url": url})).await?;
    if let Some(error) = result["errorText"].as_str().filter(|e| !e.is_empty()) {
        // A redirect hop the origin lists refused: say which origin and why.
        if let Some(why) = tab.state().blocked.take() {
            return Err(refuse(ErrorCode::Forbidden, format!("Refused: {url} redirected to a refused origin: {why}.")));
        }
        return Err(refuse(ErrorCode::OperationFailed, format!("Could not open {url}: {error}")));
    }
    // Same-document (fragment) navigations have no loaderId and no load event.
    if result.get("loaderId").is_some() {
        wait_until(tab, OPEN_TIMEOUT, |s| (s.navigations != navigations && !s.loading) || s.dialog.is_some()).await;
    }
    let now = tab.state().marks();
    settle(tab, now, Reach::InPlace).await;
    Ok(())
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
/// the title and a few lines of what changed, after any page text the action
/// gave. URLs and titles are the page's (a URL can carry a token in its
/// fragment): they go in the fenced page part.
async fn describe_outcome(
    live: &Live,
    tab: &Tab,
    mut output: ToolOutput,
    before: Marks,
    url: &str,
    title: &str,
    watching: bool,
) -> ToolOutput {
    let mut text = std::mem::take(&mut output.text);
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
        let lines = page_lines.join("\n");
        output.page_text = Some(match output.page_text.take() {
            Some(said) => format!("{said}\n{lines}"),
            None => lines,
        });
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

//! The shape of every action's answer: what happened, where the page is now
//! when that changed, what changed on the page, and anything now waiting on
//! the agent (a dialog, a file chooser). Never the whole snapshot again.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::page::{lumo_call, wait_until};
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{ToolOutput, ToolResult};

/// How many change lines an answer carries at most.
const CHANGE_LINES: u64 = 12;
/// How long after an action a navigation it set off shows up (`frameStartedLoading`
/// follows a link click within a few ms; later script navigations are not waited for).
const NAVIGATION_START: Duration = Duration::from_millis(60);
/// How long a navigation started by an action may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(15);

/// What an action may set off, which decides how long its answer waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A click or a key may start a navigation: give it a moment to show.
    MayNavigate,
    /// Typing, filling, scrolling: changes stay in the page.
    InPlace,
}

/// Runs `action` on the tab and builds the answer around the sentence it returns.
pub(crate) async fn act<F>(live: &Live, tab: &Tab, reach: Reach, action: F) -> ToolResult
where
    F: Future<Output = Result<String, lumo_protocol::ToolFailure>>,
{
    let (navigations, url, title) = {
        let s = tab.state();
        (s.navigations, s.url.clone(), s.title.clone())
    };
    let watching = lumo_call(live, tab, "watch", Value::Null).await.is_ok();
    let said = action.await?;
    settle(tab, navigations, reach).await;
    Ok(describe_outcome(live, tab, said, navigations, &url, &title, watching).await)
}

/// Waits for what an action set off: a navigation to load, or the network to calm down.
pub(crate) async fn settle(tab: &Tab, navigations: u64, reach: Reach) {
    let window = if reach == Reach::MayNavigate { NAVIGATION_START } else { Duration::ZERO };
    let started = wait_until(tab, window, |s| s.loading || s.navigations != navigations || s.dialog.is_some()).await;
    if started {
        wait_until(tab, LOAD_TIMEOUT, |s| (!s.loading && s.navigations != navigations) || s.dialog.is_some()).await;
    }
    // Let requests the action started finish (bounded): answers read the settled page.
    let quiet_since = Instant::now();
    wait_until(tab, Duration::from_millis(1500), |s| {
        s.dialog.is_some()
            || (s.inflight() == 0 && s.last_network_activity.is_none_or(|t| t.elapsed() > Duration::from_millis(100)))
            || quiet_since.elapsed() > Duration::from_millis(1500)
    })
    .await;
}

pub(crate) async fn describe_outcome(
    live: &Live,
    tab: &Tab,
    said: String,
    navigations: u64,
    url: &str,
    title: &str,
    watching: bool,
) -> ToolOutput {
    let mut text = said;
    let (now_navigations, now_url, now_title, dialog) = {
        let s = tab.state();
        (s.navigations, s.url.clone(), s.title.clone(), s.dialog.is_some())
    };
    if now_navigations != navigations {
        text.push_str(&format!("\nNavigated to {now_url}"));
    } else if now_url != url {
        text.push_str(&format!("\nURL is now {now_url}"));
    }
    let title = if now_navigations != navigations || now_title != title {
        title_of(live, tab, now_title).await
    } else {
        String::new()
    };
    let mut output = ToolOutput::default();
    let mut page_lines = Vec::new();
    if !title.is_empty() {
        page_lines.push(format!("title: {title}"));
    }
    if watching
        && !dialog
        && now_navigations == navigations
        && let Ok(changes) = lumo_call(live, tab, "collectChanges", json!(CHANGE_LINES)).await
    {
        let lines: Vec<String> =
            changes.as_array().into_iter().flatten().filter_map(|l| l.as_str().map(str::to_string)).collect();
        if !lines.is_empty() {
            page_lines.push("changes:".to_string());
            page_lines.extend(lines);
        }
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

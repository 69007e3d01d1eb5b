//! Waiting for the page: `page_wait` (text, a ref, network quiet, or time).

use std::time::{Duration, Instant};

use lumo_protocol::{ErrorCode, ToolFailure};
use schemars::JsonSchema;
use serde::Deserialize;

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::{BrowserError, refuse};
use crate::helper::{self, RefState};
use crate::page::{check_ref, ref_frame, wait_until};
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Hints, Outcome, Tool, ToolOutput, fail};

const POLL: Duration = Duration::from_millis(100);
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const MAX_TIMEOUT_MS: u64 = 60_000;
const MAX_TIME_MS: u64 = 30_000;
/// How long the network must stay quiet to count as idle.
const IDLE: Duration = Duration::from_millis(500);

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![Tool::new(
        "page_wait",
        "Wait until text appears or disappears, a ref shows or goes, the network is idle, or a time passes.",
        Hints::READ,
        wait,
    )]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    /// Text to appear (case-insensitive).
    text: Option<String>,
    /// Text to disappear.
    text_gone: Option<String>,
    /// Ref to be shown.
    #[serde(rename = "ref")]
    target: Option<String>,
    /// Ref to be removed or hidden.
    ref_gone: Option<String>,
    /// No request in flight for 500 ms.
    #[serde(default)]
    network_idle: bool,
    /// Just wait this long (ms, at most 30000).
    #[schemars(range(max = 30_000))]
    time_ms: Option<u64>,
    /// Give up after (ms, default 10000, at most 60000).
    #[schemars(range(min = 1, max = 60_000))]
    timeout_ms: Option<u64>,
}

enum Condition {
    Text(String),
    TextGone(String),
    Ref(String),
    RefGone(String),
    NetworkIdle,
    Time(u64),
}

impl Condition {
    fn from_args(args: WaitArgs) -> Result<Self, ToolFailure> {
        let mut found = Vec::new();
        if let Some(t) = args.text {
            found.push(("text", Condition::Text(t)));
        }
        if let Some(t) = args.text_gone {
            found.push(("text_gone", Condition::TextGone(t)));
        }
        if let Some(r) = args.target {
            found.push(("ref", Condition::Ref(r)));
        }
        if let Some(r) = args.ref_gone {
            found.push(("ref_gone", Condition::RefGone(r)));
        }
        if args.network_idle {
            found.push(("network_idle", Condition::NetworkIdle));
        }
        if let Some(ms) = args.time_ms {
            found.push(("time_ms", Condition::Time(ms)));
        }
        let (field, condition) = match found.pop() {
            Some(one) if found.is_empty() => one,
            other => {
                let mut named: Vec<&str> = found.iter().map(|(name, _)| *name).collect();
                named.extend(other.map(|(name, _)| name));
                return Err(fail(
                    ErrorCode::InvalidArguments,
                    format!(
                        "give exactly one of text, text_gone, ref, ref_gone, network_idle or time_ms (got {})",
                        if named.is_empty() { "none".to_string() } else { named.join(", ") }
                    ),
                ));
            }
        };
        match &condition {
            Condition::Text(t) | Condition::TextGone(t) if t.trim().is_empty() => {
                Err(fail(ErrorCode::InvalidArguments, format!("{field}: give some text to look for")))
            }
            Condition::Ref(r) | Condition::RefGone(r) => check_ref(r)
                .map(|()| condition)
                .map_err(|e| ToolFailure::new(e.code, e.message.replacen("ref:", &format!("{field}:"), 1))),
            Condition::Time(ms) if *ms > MAX_TIME_MS => Err(fail(
                ErrorCode::InvalidArguments,
                format!("time_ms: {ms} is over {MAX_TIME_MS}; wait for a condition instead"),
            )),
            _ => Ok(condition),
        }
    }

    /// What the agent waited for, in words (when it held).
    fn met(&self) -> String {
        match self {
            Condition::Text(t) => format!("Text {:?} is on the page", clip(t)),
            Condition::TextGone(t) => format!("Text {:?} is gone", clip(t)),
            Condition::Ref(r) => format!("{r} is shown"),
            Condition::RefGone(r) => format!("{r} is gone"),
            Condition::NetworkIdle => "The network is idle".to_string(),
            Condition::Time(ms) => format!("Waited {ms} ms"),
        }
    }

    /// What still did not hold at the timeout.
    fn unmet(&self) -> String {
        match self {
            Condition::Text(t) => format!("text {:?} is still not on the page", clip(t)),
            Condition::TextGone(t) => format!("text {:?} is still on the page", clip(t)),
            Condition::Ref(r) => format!("{r} is still not shown"),
            Condition::RefGone(r) => format!("{r} is still there"),
            Condition::NetworkIdle => "the network is still busy".to_string(),
            Condition::Time(ms) => format!("{ms} ms did not pass"),
        }
    }
}

fn clip(t: &str) -> String {
    lumo_protocol::text::clip(t, 100).0.to_string()
}

async fn wait(session: Ctx, args: WaitArgs) -> Outcome {
    let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if !(1..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
        return Err(refuse(
            ErrorCode::InvalidArguments,
            format!("timeout_ms: {timeout_ms} is outside 1–{MAX_TIMEOUT_MS}"),
        ));
    }
    let condition = Condition::from_args(args)?;
    on_tab(&session, TabUse::UNLOCKED, |OnTab { live, tab }| async move {
        let started = Instant::now();
        let deadline = started + Duration::from_millis(timeout_ms);
        let held = match &condition {
            Condition::Time(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                true
            }
            Condition::NetworkIdle => network_idle(&tab, deadline).await,
            _ => poll(&live, &tab, &condition, deadline).await?,
        };
        if !held {
            let message = format!("Timed out after {timeout_ms} ms: {}.", condition.unmet());
            if matches!(condition, Condition::NetworkIdle) {
                let s = tab.state();
                let pending: Vec<String> = s
                    .requests
                    .iter()
                    .filter(|r| !r.finished)
                    .take(5)
                    .map(|r| format!("#{} {}", r.seq, lumo_protocol::text::clip(&r.url, 100).0))
                    .collect();
                if !pending.is_empty() {
                    // Request URLs are the page's (a query can hold a token): fenced page data.
                    let failure = fail(ErrorCode::Timeout, format!("{message} Requests in flight are listed below."));
                    return Err(BrowserError::page(failure, format!("in flight:\n{}", pending.join("\n"))));
                }
            }
            return Err(refuse(ErrorCode::Timeout, message));
        }
        let mut text = condition.met();
        if !matches!(condition, Condition::Time(_)) {
            text.push_str(&format!(" (after {:.1} s)", started.elapsed().as_secs_f64()));
        }
        text.push('.');
        Ok(ToolOutput::text(text))
    })
    .await
}

/// Asks the page every [`POLL`] until the condition holds or the deadline passes.
async fn poll(live: &Live, tab: &Tab, condition: &Condition, deadline: Instant) -> Result<bool, BrowserError> {
    // A ref of another tab (or never given out) is refused, not waited on; a frame's ref is asked there.
    let frame = match condition {
        Condition::Ref(r) | Condition::RefGone(r) => ref_frame(live, tab, r)?,
        _ => None,
    };
    loop {
        let probe = {
            // Serialise each probe with other tools, not the whole wait.
            let _busy = tab.busy.lock().await;
            match condition {
                Condition::Text(t) => helper::has_text(live, tab, t).await,
                Condition::TextGone(t) => helper::has_text(live, tab, t).await.map(|shown| !shown),
                Condition::Ref(r) => helper::ref_state(live, tab, frame, r).await.map(|s| s == RefState::Shown),
                Condition::RefGone(r) => helper::ref_state(live, tab, frame, r).await.map(|s| s != RefState::Shown),
                Condition::NetworkIdle | Condition::Time(_) => Ok(true),
            }
        };
        match probe {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            // A dialog blocks the page: nothing will change until the agent answers it.
            Err(e) if matches!(e.code(), ErrorCode::InvalidState | ErrorCode::Unavailable) => return Err(e),
            // A navigation can swap the document under the probe: ask again.
            Err(e) => tracing::debug!(error = %e, "page_wait probe failed"),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(POLL.min(deadline - now)).await;
    }
}

/// Waits until no request has been in flight for [`IDLE`].
async fn network_idle(tab: &Tab, deadline: Instant) -> bool {
    loop {
        let quiet_for = {
            let s = tab.state();
            (s.inflight() == 0).then(|| s.last_network_activity.map_or(IDLE, |t| t.elapsed()))
        };
        let now = Instant::now();
        match quiet_for {
            Some(quiet) if quiet >= IDLE => return true,
            _ if now >= deadline => return false,
            // Quiet but not for long enough: check again when it would be.
            Some(quiet) => tokio::time::sleep((IDLE - quiet).min(deadline - now)).await,
            None => {
                wait_until(tab, POLL.min(deadline - now), |s| s.inflight() == 0).await;
            }
        }
    }
}

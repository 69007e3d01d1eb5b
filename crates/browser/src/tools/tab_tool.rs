//! What every built-in tool runs in ([`Ctx`]), the one entry every tab tool
//! goes through ([`on_tab`]), and the way out of every answer ([`off_tab`] for
//! the tools that prepare no tab): refused when the tab ended up on a page lumo
//! does not read, and told what waits on the agent (an open dialog or file
//! chooser).
//!
//! A tab tool declares how it uses the tab ([`TabUse`], after Playwright
//! MCP's `defineTabTool` with `clearsModalState`): whether it may take a tab
//! whose page lumo does not read (to leave it), whether it holds the tab's busy
//! lock, what it does about a pending dialog, and whether it acts (then its
//! answer waits for what the action set off and says what changed). [`on_tab`]
//! carries all of that out around the tool's run, so no handler fetches the
//! tab, locks it, checks for a dialog, settles or adds notices itself.

use std::future::Future;
use std::sync::Arc;

use lumo_protocol::ErrorCode;

use crate::action::{Reach, act};
use crate::error::{BrowserError, refuse};
use crate::session::{Live, Session};
use crate::tab::Tab;
use crate::tool::{Outcome, ToolOutput};

/// The context every built-in tool runs in.
pub(crate) type Ctx = Arc<Session>;

/// What a tab tool does about a pending JavaScript dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialog {
    /// Refuses to run while one is open (it would run page script, which the dialog blocks).
    Refuses,
    /// Answers it (`page_dialog`): there must be one.
    Clears,
    /// Runs either way: it reads lumo's own records, or it touches the page only
    /// through the page helper, which refuses then by itself.
    Ignores,
}

/// Whether a tab tool acts on the page, and so what its answer waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settle {
    /// It reads, or waits for what it needs itself (a navigation waits for its load).
    No,
    /// It acts: the answer waits for what the action set off (a navigation, the
    /// requests it started) and says where the page is now and what changed,
    /// after the tool's own sentence.
    AfterAction(Reach),
}

/// How a tab tool uses the selected tab.
#[derive(Debug, Clone, Copy)]
pub(super) struct TabUse {
    /// It may take a tab whose page lumo does not read (it takes the tab elsewhere).
    pub(super) leaves_page: bool,
    /// It holds the tab's busy lock for its whole run (actions and reads of the page).
    pub(super) locks: bool,
    /// What it does about a pending dialog.
    pub(super) dialog: Dialog,
    /// Whether it acts.
    pub(super) settle: Settle,
}

impl TabUse {
    /// Works beside other tools: reads lumo's own records of the tab (console,
    /// network, page tools), sets the viewport, or locks each step itself (waits).
    pub(super) const UNLOCKED: TabUse =
        TabUse { leaves_page: false, locks: false, dialog: Dialog::Ignores, settle: Settle::No };
    /// Reads the page through the helper, one tool at a time.
    pub(super) const PAGE: TabUse =
        TabUse { leaves_page: false, locks: true, dialog: Dialog::Ignores, settle: Settle::No };
    /// Runs page script or captures the page: refused while a dialog is open.
    pub(super) const SCRIPT: TabUse =
        TabUse { leaves_page: false, locks: true, dialog: Dialog::Refuses, settle: Settle::No };
    /// Answers the open dialog; closing it may let the page move on, so it settles.
    pub(super) const DIALOG: TabUse = TabUse {
        leaves_page: false,
        locks: true,
        dialog: Dialog::Clears,
        settle: Settle::AfterAction(Reach::MayNavigate),
    };
    /// Takes the tab to another page, whatever it shows now.
    pub(super) const NAVIGATE: TabUse =
        TabUse { leaves_page: true, locks: true, dialog: Dialog::Ignores, settle: Settle::No };
    /// The same use, acting: `PAGE.settling(…)` for input, `NAVIGATE.settling(…)` for history.
    pub(super) const fn settling(self, reach: Reach) -> TabUse {
        TabUse { settle: Settle::AfterAction(reach), ..self }
    }
}

/// The selected tab as a tool's run gets it: the browser and the tab.
pub(super) struct OnTab {
    pub(super) live: Arc<Live>,
    pub(super) tab: Arc<Tab>,
}

/// Whether an answer is dropped when the selected tab ended up on a page lumo does not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Page {
    /// Dropped for the refusal: the tool may have read that page.
    Checked,
    /// Kept: the tool lists tabs (`browser_tabs`, the way out of such a page).
    Any,
}

/// The one entry for tab tools: gets the selected tab (refused when its page is
/// one lumo does not read, unless the tool leaves it), takes its busy lock and
/// checks the pending dialog, all as `how` declares; runs `run`; when the tool
/// acts, waits for what the action set off and describes it after the sentence
/// `run` answered; releases the lock; then takes the answer out ([`off_tab`]).
pub(super) async fn on_tab<R, E, F, Fut>(session: &Session, how: TabUse, run: F) -> Result<ToolOutput, E>
where
    F: FnOnce(OnTab) -> Fut,
    Fut: Future<Output = Result<R, E>>,
    R: Into<ToolOutput>,
    E: From<BrowserError>,
{
    let output = {
        let (live, tab) = if how.leaves_page { session.tab_to_navigate().await? } else { session.tab().await? };
        let _busy = if how.locks { Some(tab.busy.lock().await) } else { None };
        match how.dialog {
            Dialog::Refuses => crate::page::ensure_no_dialog(&tab)?,
            Dialog::Clears if tab.state().dialog.is_none() => {
                return Err(refuse(ErrorCode::InvalidState, "No dialog is open.").into());
            }
            Dialog::Clears | Dialog::Ignores => {}
        }
        let ran = run(OnTab { live: live.clone(), tab: tab.clone() });
        match how.settle {
            Settle::No => ran.await?.into(),
            Settle::AfterAction(reach) => act(&live, &tab, reach, async { ran.await.map(Into::into) }).await?,
        }
    };
    Ok(leave(session, Page::Checked, output).await?)
}

/// The way out for tools that prepare no selected tab (`browser_tabs`, stopping
/// a recording, `webmcp_call` by name): runs `run`, then, as for tab tools,
/// refuses the answer when `page` says so and adds what waits on the agent.
pub(super) async fn off_tab<E, Fut>(session: &Session, page: Page, run: Fut) -> Result<ToolOutput, E>
where
    Fut: Future<Output = Result<ToolOutput, E>>,
    E: From<BrowserError>,
{
    let output = run.await?;
    Ok(leave(session, page, output).await?)
}

/// The steps every successful answer takes on its way out.
async fn leave(session: &Session, page: Page, output: ToolOutput) -> Outcome {
    if page == Page::Checked {
        refuse_unreadable(session).await?;
    }
    Ok(with_notices(session, output).await)
}

/// A tool may have read a page lumo does not read: the tab got there while the
/// tool ran (a user of an attached browser, a navigation lumo saw late). Its
/// answer is dropped for the refusal. `Session::tab` checks before; this after.
async fn refuse_unreadable(session: &Session) -> Result<(), BrowserError> {
    let Some((live, tab)) = session.tab_if_running().await else { return Ok(()) };
    session.check_readable(&live, &tab).await
}

/// Every answer tells the agent what waits on it (an open dialog or file
/// chooser), so it is never stuck; the page's own words stay fenced.
async fn with_notices(session: &Session, mut output: ToolOutput) -> ToolOutput {
    let Some(tab) = session.selected_if_running().await else { return output };
    let (ours, page) = tab.pending_notices();
    for notice in ours {
        output.text.push('\n');
        output.text.push_str(&notice);
    }
    if !page.is_empty() {
        let text = output.page_text.get_or_insert_with(String::new);
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&page.join("\n"));
    }
    output
}

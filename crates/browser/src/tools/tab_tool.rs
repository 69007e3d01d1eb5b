//! What every built-in tool runs in ([`Ctx`]), the one entry every tab tool
//! goes through ([`on_tab`]), and the steps every answer takes on its way out:
//! refused when the tab ended up on a page lumo does not read, and told what
//! waits on the agent (an open dialog or file chooser).
//!
//! A tab tool declares how it uses the tab ([`TabUse`], after Playwright
//! MCP's `defineTabTool` with `clearsModalState`): whether it may take a tab
//! whose page lumo does not read (to leave it), whether it holds the tab's busy
//! lock, and what it does about a pending dialog. [`on_tab`] carries that out,
//! so no handler fetches the tab, locks it or checks for a dialog itself.

use std::sync::Arc;

use lumo_protocol::ErrorCode;
use tokio::sync::OwnedMutexGuard;

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

/// How a tab tool uses the selected tab.
#[derive(Debug, Clone, Copy)]
pub(super) struct TabUse {
    /// It may take a tab whose page lumo does not read (it takes the tab elsewhere).
    pub(super) leaves_page: bool,
    /// It holds the tab's busy lock for its whole run (actions and reads of the page).
    pub(super) locks: bool,
    /// What it does about a pending dialog.
    pub(super) dialog: Dialog,
}

impl TabUse {
    /// Works beside other tools: reads lumo's own records of the tab (console,
    /// network, page tools), sets the viewport, or locks each step itself (waits).
    pub(super) const UNLOCKED: TabUse = TabUse { leaves_page: false, locks: false, dialog: Dialog::Ignores };
    /// Reads or acts on the page through the helper, one at a time.
    pub(super) const PAGE: TabUse = TabUse { leaves_page: false, locks: true, dialog: Dialog::Ignores };
    /// Runs page script or captures the page: refused while a dialog is open.
    pub(super) const SCRIPT: TabUse = TabUse { leaves_page: false, locks: true, dialog: Dialog::Refuses };
    /// Answers the open dialog.
    pub(super) const DIALOG: TabUse = TabUse { leaves_page: false, locks: true, dialog: Dialog::Clears };
    /// Takes the tab to another page, whatever it shows now.
    pub(super) const NAVIGATE: TabUse = TabUse { leaves_page: true, locks: true, dialog: Dialog::Ignores };
}

/// The selected tab, prepared as the tool declared: the browser, the tab and,
/// while the tool runs, its busy lock.
pub(super) struct OnTab {
    pub(super) live: Arc<Live>,
    pub(super) tab: Arc<Tab>,
    /// Held until the binding goes out of scope (bind it as `busy: _busy`).
    pub(super) busy: Option<OwnedMutexGuard<()>>,
}

/// The one entry for tab tools: gets the selected tab (refused when its page is
/// one lumo does not read, unless the tool leaves it), takes its busy lock, and
/// checks the pending dialog, all as `how` declares.
pub(super) async fn on_tab(session: &Session, how: TabUse) -> Result<OnTab, BrowserError> {
    let (live, tab) = if how.leaves_page { session.tab_to_navigate().await? } else { session.tab().await? };
    let busy = if how.locks { Some(tab.busy.clone().lock_owned().await) } else { None };
    match how.dialog {
        Dialog::Refuses => crate::page::ensure_no_dialog(&tab)?,
        Dialog::Clears if tab.state().dialog.is_none() => {
            return Err(refuse(ErrorCode::InvalidState, "No dialog is open."));
        }
        Dialog::Clears | Dialog::Ignores => {}
    }
    Ok(OnTab { live, tab, busy })
}

/// A tool may have read a page lumo does not read: the tab got there while the
/// tool ran (a user of an attached browser, a navigation lumo saw late). Its
/// answer is dropped for the refusal. `Session::tab` checks before; this after.
pub(super) async fn refuse_unreadable(session: Ctx, output: ToolOutput) -> Outcome {
    let Some((live, tab)) = session.tab_if_running().await else { return Ok(output) };
    session.check_readable(&live, &tab).await?;
    Ok(output)
}

/// Every answer tells the agent what waits on it (an open dialog or file
/// chooser), so it is never stuck; the page's own words stay fenced.
pub(super) async fn with_notices(session: Ctx, mut output: ToolOutput) -> Outcome {
    let Some(tab) = session.selected_if_running().await else { return Ok(output) };
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
    Ok(output)
}

//! What every built-in tool runs in ([`Ctx`]) and the steps every answer
//! takes on its way out: refused when the tab ended up on a page lumo does not
//! read, and told what waits on the agent (an open dialog or file chooser).

use std::sync::Arc;

use crate::session::Session;
use crate::tool::ToolOutput;

/// The context every built-in tool runs in.
pub(crate) type Ctx = Arc<Session>;

/// A tool may have read a page lumo does not read: the tab got there while the
/// tool ran (a user of an attached browser, a navigation lumo saw late). Its
/// answer is dropped for the refusal. `Session::tab` checks before; this after.
pub(super) async fn refuse_unreadable(session: Ctx, output: ToolOutput) -> ToolOutput {
    let Some((live, tab)) = session.tab_if_running().await else { return output };
    match session.check_readable(&live, &tab).await {
        Ok(()) => output,
        Err(refused) => ToolOutput { failure: Some(refused), ..ToolOutput::default() },
    }
}

/// Every answer tells the agent what waits on it (an open dialog or file
/// chooser), so it is never stuck; the page's own words stay fenced.
pub(super) async fn with_notices(session: Ctx, mut output: ToolOutput) -> ToolOutput {
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

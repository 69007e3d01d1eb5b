//! The built-in tools, one file per family; [`builtin_tools`] gathers them.

use std::sync::Arc;

use crate::session::Session;
use crate::tool::{Tool, ToolOutput};

mod devtools;
mod dialogs;
mod extract;
mod files;
mod input;
mod navigate;
mod network;
mod screenshot;
mod snapshot;
mod wait;
mod webmcp;

pub use webmcp::{list_bound as webmcp_list_bound, not_listed as page_tool_not_listed};

/// The context every built-in tool runs in.
pub(crate) type Ctx = Arc<Session>;

/// Every built-in tool, in a deterministic order (families, then as listed).
pub fn builtin_tools() -> Vec<Tool<Ctx>> {
    [
        navigate::tools(),
        snapshot::tools(),
        extract::tools(),
        input::tools(),
        wait::tools(),
        screenshot::tools(),
        dialogs::tools(),
        files::tools(),
        devtools::tools(),
        network::tools(),
        webmcp::tools(),
    ]
    .into_iter()
    .flatten()
    .map(|tool| if tool.spec.name == "browser_tabs" { tool } else { tool.after(refuse_unreadable) })
    .map(|tool| tool.after(with_notices))
    .collect()
}

/// A tool may have read a page lumo does not read: the tab got there while the
/// tool ran (a user of an attached browser, a navigation lumo saw late). Its
/// answer is dropped for the refusal. `Session::tab` checks before; this after.
async fn refuse_unreadable(session: Ctx, output: ToolOutput) -> ToolOutput {
    let Some((live, tab)) = session.tab_if_running().await else { return output };
    match session.check_readable(&live, &tab).await {
        Ok(()) => output,
        Err(refused) => ToolOutput { failure: Some(refused), ..ToolOutput::default() },
    }
}

/// Every answer tells the agent what waits on it (an open dialog or file
/// chooser), so it is never stuck; the page's own words stay fenced.
async fn with_notices(session: Ctx, mut output: ToolOutput) -> ToolOutput {
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

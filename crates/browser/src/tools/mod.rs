//! The built-in tools, one file per family; [`builtin_tools`] gathers them.

use crate::tool::Tool;

mod devtools;
mod dialogs;
mod extract;
mod files;
mod input;
mod navigate;
mod network;
mod record;
mod screenshot;
mod snapshot;
mod tab_tool;
mod wait;
mod webmcp;

pub use webmcp::{Routed, is_page_tool_call, route};

use tab_tool::Ctx;

/// Every built-in tool, in a deterministic order (families, then as listed).
pub fn builtin_tools() -> Vec<Tool<Ctx>> {
    [
        navigate::tools(),
        snapshot::tools(),
        extract::tools(),
        input::tools(),
        wait::tools(),
        screenshot::tools(),
        record::tools(),
        dialogs::tools(),
        files::tools(),
        devtools::tools(),
        network::tools(),
        webmcp::tools(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

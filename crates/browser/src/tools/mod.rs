//! The built-in tools, one file per family; [`builtin_tools`] gathers them.

use std::sync::Arc;

use crate::session::Session;
use crate::tool::Tool;

mod devtools;
mod dialogs;
mod files;
mod input;
mod navigate;
mod network;
mod screenshot;
mod snapshot;
mod wait;
mod webmcp;

/// The context every built-in tool runs in.
pub(crate) type Ctx = Arc<Session>;

/// Every built-in tool, in a deterministic order (families, then as listed).
pub fn builtin_tools() -> Vec<Tool<Ctx>> {
    [
        navigate::tools(),
        snapshot::tools(),
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
    .collect()
}

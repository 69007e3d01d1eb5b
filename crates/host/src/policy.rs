//! Tool groups that policy can turn off (`lumo.toml` `[tools] disable`, or
//! `--disable`): a group names tools by what they can do, so turning off
//! `evaluate` removes every way to run script, whatever it is called.

use std::fmt;

/// A group of tools policy can turn off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ToolGroup {
    /// Running JavaScript in the page (`devtools_evaluate`).
    Evaluate,
    /// Handing local files to the page (`file_upload`).
    Uploads,
    /// Reading request and response bodies (`network_request`).
    NetworkBodies,
    /// WebMCP page tools (`webmcp_call` and every `webmcp_*` page tool; `webmcp_list` stays).
    PageTools,
}

impl ToolGroup {
    /// Every group.
    pub const ALL: [ToolGroup; 4] = [Self::Evaluate, Self::Uploads, Self::NetworkBodies, Self::PageTools];

    /// The name used in `lumo.toml` and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Evaluate => "evaluate",
            Self::Uploads => "uploads",
            Self::NetworkBodies => "network_bodies",
            Self::PageTools => "page_tools",
        }
    }

    /// A group by name.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|g| g.name() == name.trim()).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|g| g.name()).collect();
            format!("{name:?} is not a tool group; the groups are {}", names.join(", "))
        })
    }

    /// Whether the tool exposed as `tool` belongs to this group.
    pub fn contains(self, tool: &str) -> bool {
        match self {
            Self::Evaluate => tool == "devtools_evaluate",
            Self::Uploads => tool == "file_upload",
            Self::NetworkBodies => tool == "network_request",
            Self::PageTools => lumo_browser::is_page_tool_call(tool),
        }
    }
}

impl fmt::Display for ToolGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_name_their_tools() {
        assert!(ToolGroup::Evaluate.contains("devtools_evaluate"));
        assert!(ToolGroup::PageTools.contains("webmcp_buy") && ToolGroup::PageTools.contains("webmcp_call"));
        assert!(!ToolGroup::PageTools.contains("webmcp_list"));
        assert_eq!(ToolGroup::parse("uploads"), Ok(ToolGroup::Uploads));
        assert!(ToolGroup::parse("everything").expect_err("unknown").contains("evaluate, uploads"));
    }
}

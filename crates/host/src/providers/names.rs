//! Which of a provider's tools lumo exposes, under `lumo-protocol`'s name
//! rules: `<namespace>_<tool>`, lengths, characters, no duplicates, at most
//! 64 a provider (the first 64 in its order; the rest refused). Nothing is
//! dropped silently: every refused tool comes back with its reason.

use lumo_protocol::{MAX_TOOLS_PER_PROVIDER, NameError, validate_tool_list};
use rmcp::model::Tool;
use serde::Serialize;

/// A provider tool lumo does not expose, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RefusedTool {
    /// The name the provider gave.
    pub name: String,
    /// Why it is refused.
    pub reason: String,
}

/// A tool of a provider that lumo exposes.
#[derive(Debug, Clone)]
pub(crate) struct Exposed {
    /// `<namespace>_<tool>`.
    pub(crate) qualified: String,
    /// The provider's own name for it.
    pub(crate) tool: Tool,
}

/// Splits `tools` into the exposed and the refused.
pub(crate) fn expose(namespace: &str, tools: Vec<Tool>) -> (Vec<Exposed>, Vec<RefusedTool>) {
    let count = tools.len();
    let kept = count.min(MAX_TOOLS_PER_PROVIDER);
    let names: Vec<String> = tools.iter().take(kept).map(|t| t.name.to_string()).collect();
    let mut refused: Vec<RefusedTool> = Vec::new();
    let mut exposed = Vec::new();
    match validate_tool_list(namespace, &names) {
        Err(e) => refused.extend(names.iter().map(|name| RefusedTool { name: name.clone(), reason: e.to_string() })),
        Ok(list) => {
            let mut tools: Vec<Option<Tool>> = tools.iter().take(kept).cloned().map(Some).collect();
            for issue in list.rejected {
                tools[issue.index] = None;
                refused.push(RefusedTool { name: issue.name, reason: issue.error.to_string() });
            }
            for (qualified, tool) in list.accepted.into_iter().zip(tools.into_iter().flatten()) {
                exposed.push(Exposed { qualified: qualified.to_string(), tool });
            }
        }
    }
    let over = NameError::TooManyTools { count, max: MAX_TOOLS_PER_PROVIDER };
    refused.extend(tools.iter().skip(kept).map(|t| RefusedTool {
        name: t.name.to_string(),
        reason: format!("{over}; only the first {MAX_TOOLS_PER_PROVIDER} are exposed"),
    }));
    (exposed, refused)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn tool(name: &str) -> Tool {
        Tool::new(name.to_string(), "d", Arc::new(serde_json::Map::new()))
    }

    #[test]
    fn the_first_64_are_exposed_and_the_rest_refused_by_name() {
        let tools: Vec<Tool> = (0..70).map(|i| tool(&format!("t{i}"))).collect();
        let (exposed, refused) = expose("ns", tools);
        assert_eq!(exposed.len(), 64);
        assert_eq!(exposed[0].qualified, "ns_t0");
        assert_eq!(refused.len(), 6);
        assert_eq!(refused[0].name, "t64");
        assert!(refused[0].reason.contains("at most 64 tools, got 70"), "{}", refused[0].reason);
    }

    #[test]
    fn bad_names_are_refused_with_the_rule_and_the_rest_keep_their_tools() {
        let long = "x".repeat(41);
        let (exposed, refused) =
            expose("ns", vec![tool("ok"), tool("bad name"), tool(&long), tool("ok"), tool("fine")]);
        let names: Vec<_> = exposed.iter().map(|e| (e.qualified.as_str(), e.tool.name.as_ref())).collect();
        assert_eq!(names, [("ns_ok", "ok"), ("ns_fine", "fine")]);
        let reasons: Vec<_> = refused.iter().map(|r| r.reason.as_str()).collect();
        assert_eq!(refused.len(), 3, "{reasons:?}");
        assert!(reasons[1].contains("1 to 40 characters"), "{reasons:?}");
        assert!(reasons[2].contains("more than once"), "{reasons:?}");
    }
}

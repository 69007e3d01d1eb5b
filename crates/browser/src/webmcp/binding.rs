//! Binding page tool names per MCP session: every registration gets a
//! generation that never repeats; each MCP session keeps its own
//! [`PageBindings`], filled only by listing. A `webmcp_*` name that session was
//! shown is bound to that registration; when the page has since navigated or
//! registered the tool again, the call fails with `stale_context` instead of
//! running a different tool of the same name. A name the session never listed
//! is unknown ([`Unresolved::NotListed`]).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use lumo_protocol::text::clip_marked;
use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::json;

use super::listing::{PageTool, tab_tools};
use super::registry::PREFIX;
use crate::error::BrowserError;
use crate::session::Session;
use crate::tool::fail;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The page tools one MCP session was shown, by exposed name.
///
/// Each session (each stdio connection, each Streamable HTTP session) has its
/// own: a call binds only to what *that* session listed, and only listing
/// (`tools/list`, `webmcp_list`) fills it; looking a tool up never does.
#[derive(Debug, Default)]
pub struct PageBindings {
    shown: Mutex<HashMap<String, PageTool>>,
}

impl PageBindings {
    /// An empty table: nothing listed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that the session was shown `tools`: later calls of these names
    /// bind to exactly these registrations. Replaces what was shown before.
    pub fn bind(&self, tools: &[PageTool]) {
        let mut shown = lock(&self.shown);
        shown.clear();
        for t in tools {
            if let Ok(exposed) = &t.exposed {
                shown.insert(exposed.clone(), t.clone());
            }
        }
    }

    /// The registration an exposed name was bound to when the session listed it.
    pub fn get(&self, exposed: &str) -> Option<PageTool> {
        lock(&self.shown).get(exposed).cloned()
    }
}

/// Why a page tool name does not resolve for a session.
#[derive(Debug, Clone)]
pub enum Unresolved {
    /// The session was never shown a page tool of that name: an unknown tool.
    NotListed,
    /// It was shown, but that registration is gone or was replaced (`stale_context`),
    /// or the tool is refused (`forbidden`).
    Failed(ToolFailure),
}

impl Session {
    /// The page tools of the selected tab (exposed or refused), in registration
    /// order. Empty when no browser runs yet.
    pub fn page_tools(&self) -> Vec<PageTool> {
        let Some(tab) = self.running().and_then(|l| l.selected(self.scope)) else { return Vec::new() };
        // A page the URL policy keeps closed (a file: page without --allow-file-urls) offers no tools.
        if self.policy.check_page(&tab.state().url).is_err() {
            return Vec::new();
        }
        tab_tools(&tab)
    }

    /// The page tools of the selected tab of every handle on this browser: what
    /// a watcher of list changes fingerprints (any handle's change may be news to its client).
    pub fn page_tools_everywhere(&self) -> Vec<PageTool> {
        let Some(live) = self.running() else { return Vec::new() };
        live.all_selected().iter().flat_map(|tab| tab_tools(tab)).collect()
    }

    /// The page tool a name refers to for a session that was shown `bindings`.
    ///
    /// `name` is an exposed name (`webmcp_…`) or the name the page registered.
    /// A name the session never listed is [`Unresolved::NotListed`]; one it
    /// listed whose registration is gone or was replaced (navigation,
    /// re-registration, another tab selected) fails with `stale_context`.
    pub fn resolve_page_tool(&self, name: &str, bindings: &PageBindings) -> Result<PageTool, Unresolved> {
        let exposed =
            if name.starts_with(PREFIX) { name.to_string() } else { format!("{PREFIX}{}", name.replace('.', "_")) };
        let tools = self.page_tools();
        let Some(bound) = bindings.get(&exposed) else {
            // Refused tools are never listed as callable: say why rather than "unknown".
            let exposed_now = tools.iter().any(|t| t.exposed.as_deref() == Ok(exposed.as_str()));
            if !exposed_now
                && let Some(refused) = tools
                    .iter()
                    .find(|t| t.exposed.is_err() && (t.name == name || format!("{PREFIX}{}", t.name) == name))
            {
                let reason = refused.exposed.clone().err().unwrap_or_default();
                return Err(Unresolved::Failed(fail(
                    ErrorCode::Forbidden,
                    format!("page tool {:?} is not exposed: {reason}", clip_marked(&refused.name, 80)),
                )));
            }
            return Err(Unresolved::NotListed);
        };
        let current = tools.iter().find(|t| t.exposed.as_deref() == Ok(exposed.as_str()));
        match current {
            Some(t) if t.target_id == bound.target_id && t.generation == bound.generation => Ok(t.clone()),
            Some(_) => Err(Unresolved::Failed(stale(
                &exposed,
                "the page registered it again, navigated or another tab is selected",
            ))),
            None => Err(Unresolved::Failed(stale(
                &exposed,
                "the page no longer offers it (it navigated or unregistered it)",
            ))),
        }
    }

    /// Whether the selected tab's main world has `document.modelContext`
    /// (WebMCP needs the feature flag and a secure context).
    pub async fn webmcp_available(&self) -> Result<bool, BrowserError> {
        let (live, tab) = self.tab().await?;
        let result = live
            .call(
                &tab,
                "Runtime.evaluate",
                json!({"expression": "typeof document.modelContext === 'object' && document.modelContext !== null && typeof document.modelContext.registerTool === 'function'", "returnByValue": true}),
            )
            .await?;
        Ok(result["result"]["value"].as_bool().unwrap_or(false))
    }

    /// Waits until the selected tab has at least `count` page tools, or `timeout` passes.
    pub async fn wait_for_page_tools(&self, count: usize, timeout: Duration) -> Result<usize, BrowserError> {
        let (_, tab) = self.tab().await?;
        crate::page::wait_until(&tab, timeout, |s| s.webmcp.tools.len() >= count).await;
        Ok(tab.state().webmcp.tools.len())
    }
}

pub(crate) fn stale(exposed: &str, why: &str) -> ToolFailure {
    fail(
        ErrorCode::StaleContext,
        format!(
            "{exposed}: the page tools changed ({why}). List them again (tools/list or webmcp_list) and call the new name."
        ),
    )
}

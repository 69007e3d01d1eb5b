//! Every tool lumo exposes, from every source, by name, in one deterministic order.
//!
//! The set is dynamic: the built-in tools, then the WebMCP page tools of the
//! selected tab (`webmcp_*`, by name). A watcher announces changes of the page
//! tools, debounced, so the front can send `notifications/tools/list_changed`.
//!
//! Page tool names are bound per MCP session ([`PageBindings`]): only listing
//! ([`Catalog::list`], `webmcp_list`) binds; looking a tool up ([`Catalog::spec`])
//! never does, and a call resolves only a name that session listed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use lumo_browser::{PageBindings, PageTool, Routed, Session, Tool, ToolSpec};
use serde_json::Value;
use tokio::sync::watch;

use crate::providers::Providers;

/// How often the watcher looks at the page tools.
const WATCH_TICK: Duration = Duration::from_millis(100);
/// How long a changed set must hold before it is announced (apps add, remove, re-add after load).
const DEBOUNCE: Duration = Duration::from_millis(300);

/// The tools lumo exposes.
pub struct Catalog {
    session: Arc<Session>,
    builtin: Vec<Tool<Arc<Session>>>,
    index: HashMap<String, usize>,
    /// Bumped whenever the listed set changes.
    changes: Arc<watch::Sender<u64>>,
    watching: AtomicBool,
    /// Provider extensions (`<namespace>_<tool>` tools), when lumo has any.
    providers: Option<Arc<Providers>>,
}

/// A call routed to its tool.
pub(crate) struct Resolved {
    pub(crate) tool: Tool<Arc<Session>>,
    pub(crate) args: Value,
    /// The page tool it runs, if it is one.
    pub(crate) page: Option<PageTool>,
    /// The provider extension it runs in, if it is a provider tool.
    pub(crate) provider: Option<String>,
    /// The tool the call named and its arguments, when the browser routed it
    /// elsewhere: checked against that tool's schema first.
    pub(crate) addressed: Option<(ToolSpec, Value)>,
}

impl Resolved {
    fn to(tool: Tool<Arc<Session>>, args: Value) -> Self {
        Self { tool, args, page: None, provider: None, addressed: None }
    }
}

impl From<Routed> for Resolved {
    fn from(r: Routed) -> Self {
        Self { tool: r.tool, args: r.args, page: r.page, provider: None, addressed: r.addressed }
    }
}

impl Catalog {
    /// The built-in browser tools over `session`, plus its page tools.
    pub fn builtin(session: Arc<Session>) -> Self {
        let builtin = lumo_browser::builtin_tools();
        let index = builtin.iter().enumerate().map(|(i, t)| (t.spec.name.clone(), i)).collect();
        Self {
            session,
            builtin,
            index,
            changes: Arc::new(watch::channel(0).0),
            watching: AtomicBool::new(false),
            providers: None,
        }
    }

    /// Adds the provider extensions' tools and lumo's `ext_*` tools about them.
    pub fn with_providers(mut self, providers: Arc<Providers>) -> Self {
        providers.set_changes(self.changes.clone());
        for tool in crate::providers::tools::ext_tools(&providers) {
            self.index.insert(tool.spec.name.clone(), self.builtin.len());
            self.builtin.push(tool);
        }
        self.providers = Some(providers);
        self
    }

    /// The provider extensions, when lumo has any.
    pub fn providers(&self) -> Option<&Arc<Providers>> {
        self.providers.as_ref()
    }

    /// Every tool's spec, in listing order: built-ins, then page tools by name.
    /// Binds nothing (`lumo tools`, introspection); see [`Catalog::list`].
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.specs_of(&self.session.page_tools())
    }

    /// Lists the tools for one MCP session: the page tools listed are bound in
    /// `bindings`, so that session's later calls of these names run exactly these
    /// registrations (or fail as stale).
    pub fn list(&self, bindings: &PageBindings) -> Vec<ToolSpec> {
        self.list_in(&self.session, bindings)
    }

    /// [`Catalog::list`] for the browser handle `browser` (an isolated MCP
    /// session's own context): the page tools of *its* selected tab.
    pub fn list_in(&self, browser: &Session, bindings: &PageBindings) -> Vec<ToolSpec> {
        let page = browser.page_tools();
        bindings.bind(&page);
        self.specs_of(&page)
    }

    fn specs_of(&self, page: &[PageTool]) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.builtin.iter().map(|t| t.spec.clone()).collect();
        let mut page: Vec<ToolSpec> =
            page.iter().filter(|t| t.exposed.is_ok()).map(|t| lumo_browser::page_tool(t).spec).collect();
        page.sort_by(|a, b| a.name.cmp(&b.name));
        specs.extend(page);
        if let Some(providers) = &self.providers {
            let mut tools: Vec<ToolSpec> = providers
                .exposed()
                .into_iter()
                .filter(|(_, e)| !self.index.contains_key(&e.qualified))
                .map(|(p, e)| crate::providers::tools::provider_tool(p, &e).spec)
                .collect();
            tools.sort_by(|a, b| a.name.cmp(&b.name));
            specs.extend(tools);
        }
        specs
    }

    /// A provider tool by its exposed name.
    fn provider(&self, name: &str) -> Option<(Tool<Arc<Session>>, String)> {
        let (provider, exposed) = self.providers.as_ref()?.lookup(name)?;
        let id = provider.id.as_str().to_string();
        Some((crate::providers::tools::provider_tool(provider, &exposed), id))
    }

    /// A tool's spec by name, as `bindings`' session was shown it; binds nothing.
    /// A page tool name that session never listed is `None` (unknown).
    pub fn spec(&self, name: &str, bindings: &PageBindings) -> Option<ToolSpec> {
        if let Some(spec) = self.builtin_spec(name) {
            return Some(spec.clone());
        }
        if let Some((tool, _)) = self.provider(name) {
            return Some(tool.spec);
        }
        bindings.get(name).map(|t| lumo_browser::page_tool(&t).spec)
    }

    /// The page tools of the selected tab, exposed or refused.
    pub fn page_tools(&self) -> Vec<PageTool> {
        self.session.page_tools()
    }

    /// A tool by name, with the arguments it runs with, for the session that
    /// was shown `bindings`. The browser routes the names it must (tools that
    /// act per session or route to a page tool, [`lumo_browser::route`]); the
    /// rest are built-ins. `None`: no such tool (a page tool name this session
    /// never listed included).
    pub(crate) fn resolve(
        &self,
        browser: &Session,
        name: &str,
        args: Value,
        bindings: &Arc<PageBindings>,
    ) -> Option<Resolved> {
        let args = match lumo_browser::route(browser, name, args, bindings) {
            Ok(routed) => return Some(routed.into()),
            Err(args) => args,
        };
        if let Some(&i) = self.index.get(name) {
            return Some(Resolved::to(self.builtin[i].clone(), args));
        }
        self.provider(name).map(|(tool, id)| Resolved { provider: Some(id), ..Resolved::to(tool, args) })
    }

    /// A built-in tool's spec.
    fn builtin_spec(&self, name: &str) -> Option<&ToolSpec> {
        self.index.get(name).map(|&i| &self.builtin[i].spec)
    }

    /// The browser session the built-in tools drive.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Tells subscribers the listed tools changed for another reason than the page
    /// (policy turned a tool group on or off).
    pub(crate) fn announce_change(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that changes (debounced) whenever the listed tools change.
    /// The first subscription starts the watcher.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        if !self.watching.swap(true, Ordering::SeqCst) {
            tokio::spawn(watch_page_tools(Arc::downgrade(&self.session), self.changes.clone()));
        }
        self.changes.subscribe()
    }
}

type Fingerprint = Vec<(String, u64)>;

fn fingerprint(tools: &[PageTool]) -> Fingerprint {
    let mut f: Fingerprint =
        tools.iter().filter_map(|t| t.exposed.as_ref().ok().map(|n| (n.clone(), t.generation))).collect();
    f.sort();
    f
}

async fn watch_page_tools(session: Weak<Session>, changes: Arc<watch::Sender<u64>>) {
    // Every handle's page tools (isolated MCP sessions have their own tabs): a change
    // in any of them is announced to every client, who lists again.
    let mut announced: Fingerprint =
        session.upgrade().map(|s| fingerprint(&s.page_tools_everywhere())).unwrap_or_default();
    let mut candidate: Option<(Fingerprint, tokio::time::Instant)> = None;
    let mut tick = tokio::time::interval(WATCH_TICK);
    loop {
        tick.tick().await;
        let Some(session) = session.upgrade() else { return };
        let now = fingerprint(&session.page_tools_everywhere());
        drop(session);
        if now == announced {
            candidate = None;
            continue;
        }
        match &candidate {
            Some((c, since)) if *c == now => {
                if since.elapsed() >= DEBOUNCE {
                    announced = now;
                    candidate = None;
                    changes.send_modify(|n| *n += 1);
                }
            }
            _ => candidate = Some((now, tokio::time::Instant::now())),
        }
    }
}

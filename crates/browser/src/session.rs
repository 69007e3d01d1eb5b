//! The browser lumo drives: started (or attached) on first use, its tabs
//! attached and kept current by one event pump, restarted after a crash.
//!
//! One browser process serves every client. A [`Session`] is one client's
//! handle on it: the default one (stdio, `lumo call`, stateless HTTP requests)
//! works in the browser's default context, and each handle made with
//! [`Session::isolated`] (one per Streamable HTTP session) gets its own browser
//! context (`Target.createBrowserContext`: own tabs, cookies, storage), created
//! on its first call and disposed when the handle is dropped. Tools see only
//! their handle's tabs: listing, selecting, reading and acting are all scoped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use lumo_cdp::{Browser, CdpError, Connection, LaunchOptions};
use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::refs::RefBook;
use crate::tab::Tab;
use crate::tool::fail;
use crate::url_policy::UrlPolicy;

/// Where the browser comes from.
#[derive(Debug, Clone)]
pub enum BrowserSource {
    /// lumo starts Chromium itself.
    Launch(LaunchOptions),
    /// lumo attaches to a running browser (`ws://…` or `http://host:port`).
    Attach(String),
    /// The user's own browser, through the bridge extension: a CDP connection
    /// over the relay (see `lumo_host::bridge`), which outlives the extension's sockets.
    Bridge(Connection),
}

/// One client's handle on the browser lumo drives (started on first use):
/// the browser is shared, the tabs are the handle's own (see the module docs).
#[derive(Debug)]
pub struct Session {
    browser: Arc<BrowserShared>,
    /// Which browser context this handle works in: 0 is the default context.
    pub(crate) scope: Scope,
    /// Which URLs lumo opens and which pages its tools read.
    pub(crate) policy: UrlPolicy,
    /// Folders of user extractor definitions (`page_extract {extractor}`), read on each use.
    pub(crate) extractor_dirs: Vec<std::path::PathBuf>,
}

/// A handle's browser context, by lumo's own number (stable across browser
/// restarts; the CDP `browserContextId` behind it is not). 0: the default context.
pub(crate) type Scope = u64;

/// What every handle on one browser shares: the browser itself.
#[derive(Debug)]
pub struct BrowserShared {
    source: BrowserSource,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
    /// Set by [`Session::shutdown`]: no browser starts after it (a call still
    /// in flight while lumo stops must not leave a new browser behind).
    stopped: std::sync::atomic::AtomicBool,
    /// WebMCP page tools: a synchronous view of the browser and what the agent was shown.
    pub(crate) webmcp: crate::webmcp::Shared,
    /// Element refs of every tab; kept across browser restarts so old refs never name new elements.
    refs: Arc<RefBook>,
    /// The last scope number given out.
    scopes: std::sync::atomic::AtomicU64,
}

impl std::ops::Deref for Session {
    type Target = BrowserShared;
    fn deref(&self) -> &BrowserShared {
        &self.browser
    }
}

impl Session {
    /// A session that starts or attaches to its browser on the first tool call.
    pub fn new(source: BrowserSource) -> Self {
        let browser = BrowserShared {
            source,
            live: tokio::sync::Mutex::new(None),
            stopped: Default::default(),
            webmcp: Default::default(),
            refs: Default::default(),
            scopes: Default::default(),
        };
        Self { browser: Arc::new(browser), scope: 0, policy: UrlPolicy::default(), extractor_dirs: Vec::new() }
    }

    /// A handle on the same browser with a browser context of its own (own tabs,
    /// cookies, storage), created on its first call and disposed when the
    /// handle is dropped. Costs nothing until used.
    // `clone`: the policy may grow lists (origin allow/block) and stop being `Copy`.
    #[allow(clippy::clone_on_copy)]
    pub fn isolated(&self) -> Self {
        let scope = self.browser.scopes.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Self {
            browser: self.browser.clone(),
            scope,
            policy: self.policy.clone(),
            extractor_dirs: self.extractor_dirs.clone(),
        }
    }

    /// Whether this handle has a browser context of its own (see [`Session::isolated`]).
    pub fn is_isolated(&self) -> bool {
        self.scope != 0
    }

    /// The same session with a URL policy other than the default (web pages only).
    pub fn with_url_policy(mut self, policy: UrlPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same session reading user extractor definitions from `dirs` (see `extractors`).
    pub fn with_extractor_dirs(mut self, dirs: Vec<std::path::PathBuf>) -> Self {
        self.extractor_dirs = dirs;
        self
    }

    /// The running browser, started now if needed. After a crash the first
    /// call reports it and the next one starts a new browser.
    pub(crate) async fn live(&self) -> Result<Arc<Live>, ToolFailure> {
        let live = self.browser_live().await?;
        if self.scope != 0 {
            live.ensure_context(self.scope).await.map_err(cdp_failure)?;
        }
        Ok(live)
    }

    /// The running browser, started now if needed (no context of this handle's made).
    async fn browser_live(&self) -> Result<Arc<Live>, ToolFailure> {
        let mut guard = self.live.lock().await;
        if self.stopped.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(fail(ErrorCode::Unavailable, "lumo is shutting down; the browser is closed."));
        }
        if let Some(live) = guard.as_ref() {
            if !live.cdp.is_closed() {
                return Ok(live.clone());
            }
            *guard = None;
            return Err(fail(
                ErrorCode::Unavailable,
                "The browser closed or crashed; its tabs and refs are gone. Call again: lumo starts a new browser.",
            ));
        }
        let live = Live::start(&self.source, self.refs.clone(), self.policy.clone())
            .await
            .map_err(|e| fail(ErrorCode::Unavailable, e.to_string()))?;
        *guard = Some(live.clone());
        self.webmcp.set_live(&live);
        Ok(live)
    }

    /// The selected tab of the running browser, refused when it shows a page
    /// the URL policy does not let tools read (a page can get there by redirect
    /// or script, and an attached browser's user anywhere).
    pub(crate) async fn tab(&self) -> Result<(Arc<Live>, Arc<Tab>), ToolFailure> {
        let (live, tab) = self.tab_to_navigate().await?;
        self.check_readable(&live, &tab).await?;
        Ok((live, tab))
    }

    /// Refuses a tab whose page the URL policy does not let tools read.
    pub(crate) async fn check_readable(&self, live: &Live, tab: &Tab) -> Result<(), ToolFailure> {
        let mut url = tab.state().url.clone();
        if url.is_empty() {
            // lumo has not seen this tab commit a page (attached mid-load): ask the browser.
            let info = live.cdp.call("Target.getTargetInfo", json!({"targetId": tab.target_id}), None).await;
            url = info.ok().and_then(|i| i["targetInfo"]["url"].as_str().map(str::to_string)).unwrap_or_default();
        }
        self.policy.check_page(&url).map_err(|mut refused| {
            refused.message.push_str(" Leave it with browser_navigate or close it with browser_tabs.");
            refused
        })
    }

    /// The selected tab whatever it shows: for the tools that take it somewhere else.
    pub(crate) async fn tab_to_navigate(&self) -> Result<(Arc<Live>, Arc<Tab>), ToolFailure> {
        let live = self.live().await?;
        let tab = live.selected(self.scope).ok_or_else(|| {
            fail(ErrorCode::InvalidState, "No tab is open. Open one with browser_tabs {action: \"new\"}.")
        })?;
        Ok((live, tab))
    }

    /// The selected tab, if a browser is running (never starts one).
    pub(crate) async fn selected_if_running(&self) -> Option<Arc<Tab>> {
        self.tab_if_running().await.map(|(_, tab)| tab)
    }

    /// The browser and its selected tab, if a browser is running (never starts one).
    pub(crate) async fn tab_if_running(&self) -> Option<(Arc<Live>, Arc<Tab>)> {
        let live = self.live.lock().await.as_ref().filter(|l| !l.cdp.is_closed()).cloned()?;
        let tab = live.selected(self.scope)?;
        Some((live, tab))
    }

    /// The URL of the selected tab, if a browser is running (never starts one).
    pub async fn selected_url(&self) -> Option<String> {
        self.selected_if_running().await.map(|tab| tab.state().url.clone())
    }

    /// The browser's process id, when lumo started it.
    pub async fn browser_pid(&self) -> Option<u32> {
        self.live.lock().await.as_ref().and_then(|l| l.browser.as_ref()).and_then(Browser::pid)
    }

    /// Closes the browser if lumo started it (and waits for it to exit and
    /// its temporary profile to be removed); leaves an attached one running.
    /// Calls still in flight fail with a lost connection.
    pub async fn shutdown(&self) {
        let live = {
            let mut guard = self.live.lock().await;
            self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
            guard.take()
        };
        if let Some(live) = live {
            live.pump.abort();
            if let Some(browser) = &live.browser {
                browser.close().await;
            }
        }
    }
}

impl Drop for Session {
    /// An isolated handle's browser context goes with it (its tabs close, its
    /// cookies and storage are dropped); the default context stays.
    fn drop(&mut self) {
        if self.scope == 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (browser, scope) = (self.browser.clone(), self.scope);
        runtime.spawn(async move {
            let live = browser.live.lock().await.as_ref().filter(|l| !l.cdp.is_closed()).cloned();
            if let Some(live) = live {
                live.dispose_context(scope).await;
            }
        });
    }
}

#[derive(Debug, Default)]
pub(crate) struct Tabs {
    /// Every tab lumo is attached to, of every browser context.
    pub(crate) list: Vec<Arc<Tab>>,
    /// The selected tab of each handle's context.
    selected: HashMap<Scope, String>,
}

/// A connected browser and its tabs.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) cdp: Connection,
    browser: Option<Browser>,
    /// Which tab and frame each element ref was given out in.
    pub(crate) refs: Arc<RefBook>,
    tabs: Mutex<Tabs>,
    /// Session id → tab, for routing events.
    sessions: Mutex<HashMap<String, Arc<Tab>>>,
    /// One attach at a time: `new_tab` and the pump's `targetCreated` race for the same target.
    attaching: tokio::sync::Mutex<()>,
    pump: JoinHandle<()>,
    /// Decides every document request while origin lists are set (see `on_request_paused`).
    policy: UrlPolicy,
    /// The browser context (CDP `browserContextId`) of each isolated handle that has one.
    contexts: Mutex<HashMap<Scope, String>>,
    /// One context creation at a time.
    creating: tokio::sync::Mutex<()>,
    /// The browser context of recently closed tabs (target id, context), newest last:
    /// a ref of another client's closed tab must not be told apart from one never given out.
    closed: Mutex<std::collections::VecDeque<(String, String)>>,
}

/// How many closed tabs [`Live`] remembers the browser context of.
const CLOSED_KEPT: usize = 1000;

impl Live {
    async fn start(source: &BrowserSource, refs: Arc<RefBook>, policy: UrlPolicy) -> Result<Arc<Self>, CdpError> {
        let (cdp, browser) = match source {
            BrowserSource::Launch(options) => {
                let browser = Browser::launch(options.clone()).await?;
                (browser.connection().clone(), Some(browser))
            }
            BrowserSource::Attach(endpoint) => (lumo_cdp::connect_endpoint(endpoint).await?, None),
            BrowserSource::Bridge(connection) => (connection.clone(), None),
        };
        let events = cdp.subscribe();
        let live = Arc::new_cyclic(|weak: &Weak<Live>| {
            let pump = tokio::spawn(pump(weak.clone(), events));
            Live {
                cdp: cdp.clone(),
                browser,
                refs,
                tabs: Mutex::default(),
                sessions: Mutex::default(),
                attaching: Default::default(),
                pump,
                policy,
                contexts: Mutex::default(),
                creating: Default::default(),
                closed: Mutex::default(),
            }
        });
        cdp.call("Target.setDiscoverTargets", json!({"discover": true}), None).await?;
        let targets = cdp.call("Target.getTargets", json!({}), None).await?;
        let pages: Vec<(String, String)> = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| {
                t["type"] == "page" && !t["url"].as_str().unwrap_or_default().starts_with("chrome-extension://")
            })
            .filter_map(|t| {
                let context = t["browserContextId"].as_str().unwrap_or_default().to_string();
                t["targetId"].as_str().map(|id| (id.to_string(), context))
            })
            .collect();
        for (target, context) in &pages {
            live.attach(target, context).await?;
        }
        if pages.is_empty() {
            live.new_tab(0, "about:blank").await?;
        }
        Ok(live)
    }

    pub(crate) fn tabs(&self) -> MutexGuard<'_, Tabs> {
        self.tabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Tab>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn contexts(&self) -> MutexGuard<'_, HashMap<Scope, String>> {
        self.contexts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Which handle's context a browser context id belongs to: an isolated
    /// handle's own, else the default (0), which also holds contexts lumo did
    /// not make (an attached browser's).
    fn scope_of(&self, browser_context: &str) -> Scope {
        self.contexts().iter().find(|(_, id)| id.as_str() == browser_context).map_or(0, |(scope, _)| *scope)
    }

    /// The tabs of one handle's context, in the order they were opened.
    pub(crate) fn tabs_in(&self, scope: Scope) -> Vec<Arc<Tab>> {
        let list = self.tabs().list.clone();
        list.into_iter().filter(|t| self.scope_of(&t.browser_context) == scope).collect()
    }

    /// The selected tab of one handle's context.
    pub(crate) fn selected(&self, scope: Scope) -> Option<Arc<Tab>> {
        let id = self.tabs().selected.get(&scope).cloned()?;
        self.tabs_in(scope).into_iter().find(|t| t.target_id == id)
    }

    /// Selects a tab of one handle's context.
    pub(crate) fn select(&self, scope: Scope, target_id: &str) {
        self.tabs().selected.insert(scope, target_id.to_string());
    }

    /// The selected tab of every handle's context.
    pub(crate) fn all_selected(&self) -> Vec<Arc<Tab>> {
        let scopes: Vec<Scope> = self.tabs().selected.keys().copied().collect();
        scopes.into_iter().filter_map(|scope| self.selected(scope)).collect()
    }

    /// Opens a tab in one handle's context and selects it.
    pub(crate) async fn new_tab(&self, scope: Scope, url: &str) -> Result<Arc<Tab>, CdpError> {
        let context = if scope == 0 { None } else { self.contexts().get(&scope).cloned() };
        let params = match &context {
            Some(context) => json!({"url": url, "browserContextId": context}),
            None => json!({"url": url}),
        };
        let created = self.cdp.call("Target.createTarget", params, None).await?;
        let target = created["targetId"].as_str().unwrap_or_default().to_string();
        let tab = self.attach(&target, context.as_deref().unwrap_or_default()).await?;
        self.select(scope, &tab.target_id);
        Ok(tab)
    }

    /// Makes an isolated handle's browser context, with one blank tab, unless it has one.
    async fn ensure_context(&self, scope: Scope) -> Result<(), CdpError> {
        if self.contexts().contains_key(&scope) {
            return Ok(());
        }
        let _one_at_a_time = self.creating.lock().await;
        if self.contexts().contains_key(&scope) {
            return Ok(());
        }
        let created = self.cdp.call("Target.createBrowserContext", json!({"disposeOnDetach": true}), None).await?;
        let Some(context) = created["browserContextId"].as_str() else {
            return Err(CdpError::Protocol {
                method: "Target.createBrowserContext".into(),
                code: -32000,
                message: "Target.createBrowserContext gave no browserContextId".into(),
            });
        };
        self.contexts().insert(scope, context.to_string());
        tracing::debug!(scope, "made a browser context for an MCP session");
        self.new_tab(scope, "about:blank").await?;
        Ok(())
    }

    /// Closes an isolated handle's browser context: its tabs, cookies and storage go.
    async fn dispose_context(&self, scope: Scope) {
        let Some(context) = self.contexts().get(&scope).cloned() else { return };
        if let Err(e) = self.cdp.call("Target.disposeBrowserContext", json!({"browserContextId": context}), None).await
        {
            tracing::debug!(scope, error = %e, "could not dispose of a browser context");
        }
        // Its tabs are gone: forget them before the scope, so that no other handle sees them.
        let gone: Vec<String> = self.tabs_in(scope).iter().map(|t| t.target_id.clone()).collect();
        for target in gone {
            self.forget(&target);
        }
        self.contexts().remove(&scope);
        self.tabs().selected.remove(&scope);
        tracing::info!(scope, "disposed of the browser context of a closed MCP session");
    }

    /// Attaches to a page target (of the browser context `browser_context`) once;
    /// enables the domains tools rely on.
    async fn attach(&self, target_id: &str, browser_context: &str) -> Result<Arc<Tab>, CdpError> {
        let _one_at_a_time = self.attaching.lock().await;
        if let Some(tab) = self.tabs().list.iter().find(|t| t.target_id == target_id) {
            return Ok(tab.clone());
        }
        let attached =
            self.cdp.call("Target.attachToTarget", json!({"targetId": target_id, "flatten": true}), None).await?;
        let session = attached["sessionId"].as_str().unwrap_or_default().to_string();
        let s = Some(session.as_str());
        let tree = self.cdp.call("Page.getFrameTree", json!({}), s).await?;
        let frame = &tree["frameTree"]["frame"];
        let tab = Arc::new(Tab::new(
            target_id.to_string(),
            session.clone(),
            frame["id"].as_str().unwrap_or_default().to_string(),
            browser_context.to_string(),
        ));
        tab.state().url = frame["url"].as_str().unwrap_or_default().to_string();
        tab.state().webmcp.record_tree(&tree["frameTree"]);
        self.sessions().insert(session.clone(), tab.clone());
        let enables = [
            ("Page.enable", json!({})),
            ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
            ("Page.setInterceptFileChooserDialog", json!({"enabled": true})),
            ("Runtime.enable", json!({})),
            // The browser's own console messages (failed loads, blocked ports, CSP).
            ("Log.enable", json!({})),
            ("Network.enable", json!({"maxTotalBufferSize": 50_000_000, "maxResourceBufferSize": 10_000_000})),
            // Again, now that Page events flow: a page that committed between the first
            // read and Page.enable sent its frameNavigated to no one (a tab the user of an
            // attached browser just opened), and lumo must know where every tab is.
            ("Page.getFrameTree", json!({})),
        ];
        let mut enables = enables.to_vec();
        if let Some(fetch) = self.fetch_enable() {
            // Before the first navigation lumo asks for: no document request goes unchecked.
            enables.insert(0, fetch);
        }
        // Sent together (the browser still runs them in order): two round trips instead of nine.
        let calls = enables.into_iter().map(|(method, params)| self.cdp.call(method, params, s));
        let results = futures_util::future::join_all(calls).await;
        let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
        if let Some(tree) = results.last() {
            let frame = &tree["frameTree"]["frame"];
            let mut state = tab.state();
            // A navigation seen since is newer than this answer.
            if state.navigations == 0 && frame["id"].as_str() == Some(state.main_frame.as_str()) {
                state.url = frame["url"].as_str().unwrap_or_default().to_string();
            }
        }
        // Cross-origin iframes run in their own process: attach to them too (see the pump).
        let auto_attach = self.cdp.call(
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
            s,
        );
        // Page tools: replays the registered ones as toolsAdded. Older browsers lack the domain.
        let (attached, webmcp) = tokio::join!(auto_attach, self.cdp.call("WebMCP.enable", json!({}), s));
        attached?;
        if let Err(e) = webmcp {
            tracing::debug!(target = %target_id, error = %e, "WebMCP is not available in this tab");
        }
        let scope = self.scope_of(browser_context);
        {
            let mut tabs = self.tabs();
            if !tabs.list.iter().any(|t| t.target_id == target_id) {
                tabs.list.push(tab.clone());
            }
            tabs.selected.entry(scope).or_insert_with(|| target_id.to_string());
        }
        Ok(tab)
    }

    /// Records a cross-origin frame of `tab` that got its own session, and
    /// routes that session's events (console) to the tab.
    fn adopt_frame(&self, tab: &Arc<Tab>, frame_id: &str, session: &str) {
        {
            let mut s = tab.state();
            let index = s.next_child;
            s.next_child += 1;
            // The frame's document request ends in the frame's own process, before we
            // listen there: its frame exists, so count the request as done.
            for r in s.requests.iter_mut().filter(|r| r.frame_id == frame_id && r.resource_type == "Document") {
                r.finished = true;
            }
            s.children.push(crate::tab::ChildFrame {
                index,
                frame_id: frame_id.to_string(),
                session_id: session.to_string(),
                world: None,
            });
        }
        self.sessions().insert(session.to_string(), tab.clone());
        let cdp = self.cdp.clone();
        let session = session.to_string();
        let fetch = self.fetch_enable();
        tokio::spawn(async move {
            // Console, network, page tools and dialogs of the frame are the tab's too.
            for (method, params) in fetch.into_iter().chain(
                ["Page.enable", "Runtime.enable", "Log.enable", "Network.enable", "WebMCP.enable"]
                    .map(|m| (m, json!({}))),
            ) {
                if let Err(e) = cdp.call(method, params, Some(&session)).await {
                    tracing::debug!(%session, error = %e, method, "could not enable a domain in a frame");
                }
            }
        });
    }

    /// `Fetch.enable` for document requests, when origin lists are set: every
    /// navigation, redirect hop and frame load then waits for `on_request_paused`.
    fn fetch_enable(&self) -> Option<(&'static str, Value)> {
        self.policy.intercepts().then(|| {
            (
                "Fetch.enable",
                json!({"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]}),
            )
        })
    }

    /// A paused document request: continue it, or fail it when its origin is
    /// refused, so a blocked origin is never loaded (a redirect to one included:
    /// each hop pauses again).
    fn on_request_paused(&self, session: &str, params: &Value) {
        let url = params["request"]["url"].as_str().unwrap_or_default().to_string();
        let request = params["requestId"].clone();
        let (method, args) = match self.policy.check_request(&url) {
            Ok(()) => ("Fetch.continueRequest", json!({"requestId": request})),
            Err(why) => {
                if let Some(tab) = self.sessions().get(session) {
                    tab.state().blocked = Some(why.clone());
                }
                tracing::debug!(%url, %why, "blocked a document request");
                ("Fetch.failRequest", json!({"requestId": request, "errorReason": "BlockedByClient"}))
            }
        };
        let (cdp, session) = (self.cdp.clone(), session.to_string());
        tokio::spawn(async move {
            if let Err(e) = cdp.call(method, args, Some(&session)).await {
                tracing::debug!(%session, error = %e, method, "could not answer a paused request");
            }
        });
    }

    fn forget(&self, target_id: &str) {
        let gone = {
            let mut tabs = self.tabs();
            let gone = tabs.list.iter().find(|t| t.target_id == target_id).cloned();
            tabs.list.retain(|t| t.target_id != target_id);
            gone
        };
        if let Some(gone) = gone {
            {
                let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
                if closed.len() >= CLOSED_KEPT {
                    closed.pop_front();
                }
                closed.push_back((gone.target_id.clone(), gone.browser_context.clone()));
            }
            // The last tab of the same context becomes the selected one.
            let scope = self.scope_of(&gone.browser_context);
            let next = self.tabs_in(scope).last().map(|t| t.target_id.clone());
            let mut tabs = self.tabs();
            if tabs.selected.get(&scope).map(String::as_str) == Some(target_id) {
                match next {
                    Some(next) => tabs.selected.insert(scope, next),
                    None => tabs.selected.remove(&scope),
                };
            }
        }
        self.sessions().retain(|_, t| t.target_id != target_id);
    }

    /// The browser context a closed tab was in, if lumo still remembers it.
    pub(crate) fn closed_context(&self, target_id: &str) -> Option<String> {
        let closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        closed.iter().rev().find(|(t, _)| t == target_id).map(|(_, c)| c.clone())
    }

    /// Sends a command to a session by id (a tab's, or one of its frames').
    pub(crate) async fn call_in(&self, session: &str, method: &str, params: Value) -> Result<Value, ToolFailure> {
        self.cdp.call(method, params, Some(session)).await.map_err(cdp_failure)
    }

    /// Sends a command to a tab's session.
    pub(crate) async fn call(&self, tab: &Tab, method: &str, params: Value) -> Result<Value, ToolFailure> {
        self.cdp.call(method, params, Some(&tab.session_id)).await.map_err(cdp_failure)
    }
}

/// Maps a CDP error to what the agent reads.
pub(crate) fn cdp_failure(e: CdpError) -> ToolFailure {
    let code = match &e {
        CdpError::ConnectionLost => ErrorCode::Unavailable,
        // The bridge relay could not reach the user's browser in time (the extension is away).
        CdpError::Protocol { code, .. } if *code == lumo_cdp::CARRIER_UNAVAILABLE => ErrorCode::Unavailable,
        CdpError::Timeout { .. } => ErrorCode::Timeout,
        _ => ErrorCode::OperationFailed,
    };
    let message = match &e {
        CdpError::ConnectionLost => "The browser closed or crashed. Call again: lumo starts a new browser.".to_string(),
        _ => e.to_string(),
    };
    fail(code, message)
}

async fn pump(live: Weak<Live>, mut events: tokio::sync::mpsc::UnboundedReceiver<Arc<lumo_cdp::Event>>) {
    while let Some(event) = events.recv().await {
        let Some(live) = live.upgrade() else { return };
        match event.method.as_str() {
            "Target.targetCreated" => {
                let info = &event.params["targetInfo"];
                if info["type"] == "page"
                    && !info["url"].as_str().unwrap_or_default().starts_with("chrome-extension://")
                {
                    let target = info["targetId"].as_str().unwrap_or_default().to_string();
                    let context = info["browserContextId"].as_str().unwrap_or_default().to_string();
                    let live = live.clone();
                    // Pages opened by the page (window.open, target=_blank) become tabs too,
                    // in the opener's browser context.
                    tokio::spawn(async move {
                        if let Err(e) = live.attach(&target, &context).await {
                            tracing::debug!(%target, error = %e, "could not attach to a new tab");
                        }
                    });
                }
            }
            "Target.targetDestroyed" => {
                if let Some(target) = event.params["targetId"].as_str() {
                    live.forget(target);
                }
            }
            "Target.targetInfoChanged" => {
                let info = &event.params["targetInfo"];
                if info["type"] == "iframe" {
                    // A cross-origin frame learnt its URL: page tools name their origin.
                    let frame = info["targetId"].as_str().unwrap_or_default();
                    let owner = live
                        .tabs()
                        .list
                        .iter()
                        .find(|t| t.state().children.iter().any(|c| c.frame_id == frame))
                        .cloned();
                    if let Some(tab) = owner {
                        tab.state().webmcp.record_tree(&json!({"frame": {"id": frame, "url": info["url"]}}));
                    }
                    continue;
                }
                let tab = live.tabs().list.iter().find(|t| info["targetId"].as_str() == Some(&t.target_id)).cloned();
                if let Some(tab) = tab {
                    let mut s = tab.state();
                    s.title = info["title"].as_str().unwrap_or_default().to_string();
                    if let Some(url) = info["url"].as_str() {
                        s.url = url.to_string();
                    }
                }
            }
            "Target.attachedToTarget" => {
                let parent = event.session_id.as_ref().and_then(|s| live.sessions().get(s).cloned());
                let info = &event.params["targetInfo"];
                if let (Some(tab), Some(child)) = (parent, event.params["sessionId"].as_str())
                    && info["type"] == "iframe"
                {
                    let frame = info["targetId"].as_str().unwrap_or_default();
                    tab.state().webmcp.record_tree(&json!({"frame": {"id": frame, "url": info["url"]}}));
                    live.adopt_frame(&tab, frame, child);
                }
            }
            "Target.detachedFromTarget" => {
                if let Some(child) = event.params["sessionId"].as_str() {
                    let tab = live.sessions().remove(child);
                    if let Some(tab) = tab {
                        let gone: Vec<String> = {
                            let mut s = tab.state();
                            let gone = s
                                .children
                                .iter()
                                .filter(|c| c.session_id == child)
                                .map(|c| c.frame_id.clone())
                                .collect();
                            s.children.retain(|c| c.session_id != child);
                            gone
                        };
                        // The frame's page tools go with it.
                        for frame in gone {
                            tab.on_event("Page.frameDetached", &json!({"frameId": frame}));
                        }
                    }
                }
            }
            "Fetch.requestPaused" => {
                if let Some(session) = event.session_id.as_deref() {
                    live.on_request_paused(session, &event.params);
                }
            }
            _ => {
                let Some(session) = event.session_id.as_deref() else { continue };
                let tab = live.sessions().get(session).cloned();
                match tab {
                    Some(tab) if tab.session_id == session => tab.on_event(&event.method, &event.params),
                    Some(tab) => tab.on_frame_event(session, &event.method, &event.params),
                    None => {}
                }
            }
        }
    }
}

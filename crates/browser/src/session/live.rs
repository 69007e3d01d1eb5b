//! The running browser: its CDP connection, the tabs lumo is attached to (of
//! every browser context), which tab each handle has selected, the browser
//! contexts of isolated handles, and attaching to a page target with the
//! domains the tools rely on. Events reach it through the pump (`pump.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::error::BrowserError;
use lumo_cdp::{Browser, CdpError, Connection, LaunchOptions};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::refs::RefBook;
use crate::tab::Tab;
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

/// A handle's browser context, by lumo's own number (stable across browser
/// restarts; the CDP `browserContextId` behind it is not). 0: the default context.
pub(crate) type Scope = u64;

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
    /// The event pump's task (see `pump.rs`), stopped with the browser.
    pump: Mutex<Option<JoinHandle<()>>>,
    /// Decides every document request while origin lists are set (see `on_request_paused`).
    pub(super) policy: UrlPolicy,
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
    /// Connects to the browser, starts its event pump with `pump` (given the
    /// browser and its events, before any target is discovered) and attaches
    /// to its pages (opening a blank one when it has none).
    pub(super) async fn start(
        source: &BrowserSource,
        refs: Arc<RefBook>,
        policy: UrlPolicy,
        pump: impl FnOnce(Weak<Live>, Events) -> JoinHandle<()>,
    ) -> Result<Arc<Self>, CdpError> {
        let (cdp, browser) = match source {
            BrowserSource::Launch(options) => {
                let browser = Browser::launch(options.clone()).await?;
                (browser.connection().clone(), Some(browser))
            }
            BrowserSource::Attach(endpoint) => (lumo_cdp::connect_endpoint(endpoint).await?, None),
            BrowserSource::Bridge(connection) => (connection.clone(), None),
        };
        let events = cdp.subscribe();
        let live = Arc::new(Live {
            cdp: cdp.clone(),
            browser,
            refs,
            tabs: Mutex::default(),
            sessions: Mutex::default(),
            attaching: Default::default(),
            pump: Mutex::default(),
            policy,
            contexts: Mutex::default(),
            creating: Default::default(),
            closed: Mutex::default(),
        });
        *lock(&live.pump) = Some(pump(Arc::downgrade(&live), events));
        cdp.call("Target.setDiscoverTargets", json!({"discover": true}), None).await?;
        let targets = cdp.call("Target.getTargets", json!({}), None).await?;
        let pages = page_targets(&targets);
        for (target, context) in &pages {
            live.attach(target, context).await?;
        }
        if pages.is_empty() {
            live.new_tab(0, "about:blank").await?;
        }
        Ok(live)
    }

    /// Stops the event pump (the browser is being closed).
    pub(super) fn stop_pump(&self) {
        if let Some(pump) = lock(&self.pump).take() {
            pump.abort();
        }
    }

    /// The browser process, when lumo started it.
    pub(super) fn browser(&self) -> Option<&Browser> {
        self.browser.as_ref()
    }

    pub(crate) fn tabs(&self) -> MutexGuard<'_, Tabs> {
        self.tabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Tab>>> {
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
        // The default context has an id too, and the event pump may attach this tab
        // first under it: both must book the tab to the same context.
        let context = match context {
            Some(context) => context,
            None => {
                let info = self.cdp.call("Target.getTargetInfo", json!({"targetId": target}), None).await?;
                info["targetInfo"]["browserContextId"].as_str().unwrap_or_default().to_string()
            }
        };
        let tab = self.attach(&target, &context).await?;
        self.select(scope, &tab.target_id);
        Ok(tab)
    }

    /// Makes an isolated handle's browser context, with one blank tab, unless it has one.
    pub(super) async fn ensure_context(&self, scope: Scope) -> Result<(), CdpError> {
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
    pub(super) async fn dispose_context(&self, scope: Scope) {
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
    pub(super) async fn attach(&self, target_id: &str, browser_context: &str) -> Result<Arc<Tab>, CdpError> {
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
            if state.navigations == 0
                && frame["id"].as_str() == Some(state.main_frame.as_str())
                && let Some(url) = frame["url"].as_str().filter(|u| !u.is_empty())
            {
                state.url = url.to_string();
            }
        }
        // Cross-origin iframes run in their own process: attach to them too (see the pump).
        let auto_attach = self.cdp.call(
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
            s,
        );
        // Page tools: replays the registered ones as toolsAdded. Older browsers lack the domain.
        // The helper in every new document (helper/script.rs); a browser that refuses leaves
        // lumo installing it on first use.
        let preload = self.cdp.call("Page.addScriptToEvaluateOnNewDocument", crate::helper::script::preload(), s);
        let (attached, webmcp, preloaded) =
            tokio::join!(auto_attach, self.cdp.call("WebMCP.enable", json!({}), s), preload);
        attached?;
        if let Err(e) = webmcp {
            tracing::debug!(target = %target_id, error = %e, "WebMCP is not available in this tab");
        }
        match preloaded {
            Ok(_) => tab.state().preloaded = true,
            Err(e) => tracing::debug!(target = %target_id, error = %e, "the helper is installed on first use"),
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

    /// `Fetch.enable` for document requests, when origin lists are set: every
    /// navigation, redirect hop and frame load then waits for `on_request_paused`.
    pub(super) fn fetch_enable(&self) -> Option<(&'static str, Value)> {
        self.policy.intercepts().then(|| {
            (
                "Fetch.enable",
                json!({"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]}),
            )
        })
    }

    pub(super) fn forget(&self, target_id: &str) {
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
    pub(crate) async fn call_in(&self, session: &str, method: &str, params: Value) -> Result<Value, BrowserError> {
        Ok(self.cdp.call(method, params, Some(session)).await?)
    }

    /// Sends a command to a tab's session.
    pub(crate) async fn call(&self, tab: &Tab, method: &str, params: Value) -> Result<Value, BrowserError> {
        Ok(self.cdp.call(method, params, Some(&tab.session_id)).await?)
    }
}

/// The browser's CDP events, as the pump reads them.
pub(super) type Events = tokio::sync::mpsc::UnboundedReceiver<Arc<lumo_cdp::Event>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The tabs in a `Target.getTargets` answer, as (target id, browser context):
/// pages, but not extension pages (a bridge's or provider's own).
pub(super) fn page_targets(targets: &Value) -> Vec<(String, String)> {
    targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page" && !t["url"].as_str().unwrap_or_default().starts_with("chrome-extension://"))
        .filter_map(|t| {
            let context = t["browserContextId"].as_str().unwrap_or_default().to_string();
            t["targetId"].as_str().map(|id| (id.to_string(), context))
        })
        .collect()
}

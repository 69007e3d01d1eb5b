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

//!
//! Inside, one direction: this module (the handles) → [`live`] (the running
//! browser: its tabs, browser contexts, attaching) ← [`pump`] (the event pump:
//! what each browser event does to the tabs). The live browser never names the
//! pump; the handle starts the pump and gives it the browser.

mod live;
mod pump;

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use lumo_cdp::Browser;
use lumo_protocol::ErrorCode;
use serde_json::json;

pub use live::BrowserSource;
pub(crate) use live::{Live, Scope};

use crate::error::{BrowserError, refuse};
use crate::refs::RefBook;
use crate::tab::Tab;
use crate::tool::fail;
use crate::url_policy::UrlPolicy;

/// How long a tool waits for a tab that shows no URL to show one before it refuses.
const UNPLACED_WAIT: Duration = Duration::from_secs(2);

/// One client's handle on the browser lumo drives (started on first use):
/// the browser is shared, the tabs are the handle's own (see the module docs).
#[derive(Debug)]
pub struct Session {
    browser: Arc<BrowserShared>,
    /// Which browser context this handle works in: 0 is the default context.
    pub(crate) scope: Scope,
    /// Which URLs lumo opens and which pages its tools read.
    pub(crate) policy: UrlPolicy,
    /// This handle's recording (`page_record`).
    pub(crate) recorder: crate::recording::Recorder,
    /// Folders of user extractor definitions (`page_extract {extractor}`), read on each use.
    pub(crate) extractor_dirs: Vec<std::path::PathBuf>,
}

/// What every handle on one browser shares: the browser itself.
#[derive(Debug)]
pub struct BrowserShared {
    source: BrowserSource,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
    /// Set by [`Session::shutdown`]: no browser starts after it (a call still
    /// in flight while lumo stops must not leave a new browser behind).
    stopped: std::sync::atomic::AtomicBool,
    /// The running browser, for synchronous readers (page tool listings): never starts one.
    running: Mutex<Weak<Live>>,
    /// Element refs of every tab; kept across browser restarts so old refs never name new elements.
    refs: Arc<RefBook>,
    /// The last scope number given out.
    scopes: std::sync::atomic::AtomicU64,
    /// Every handle's recording, finished on shutdown.
    pub(crate) recordings: crate::recording::Recordings,
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
            running: Mutex::new(Weak::new()),
            refs: Default::default(),
            scopes: Default::default(),
            recordings: Default::default(),
        };
        Self {
            browser: Arc::new(browser),
            scope: 0,
            policy: UrlPolicy::default(),
            recorder: Default::default(),
            extractor_dirs: Vec::new(),
        }
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
            recorder: Default::default(),
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
    pub(crate) async fn live(&self) -> Result<Arc<Live>, BrowserError> {
        let live = self.browser_live().await?;
        if self.scope != 0 {
            live.ensure_context(self.scope).await?;
        }
        Ok(live)
    }

    /// The running browser, started now if needed (no context of this handle's made).
    async fn browser_live(&self) -> Result<Arc<Live>, BrowserError> {
        let mut guard = self.live.lock().await;
        if self.stopped.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(refuse(ErrorCode::Unavailable, "lumo is shutting down; the browser is closed."));
        }
        if let Some(live) = guard.as_ref() {
            if !live.cdp.is_closed() {
                return Ok(live.clone());
            }
            *guard = None;
            return Err(refuse(
                ErrorCode::Unavailable,
                "The browser closed or crashed; its tabs and refs are gone. Call again: lumo starts a new browser.",
            ));
        }
        let pump = |live, events| tokio::spawn(pump::run(live, events));
        let live = Live::start(&self.source, self.refs.clone(), self.policy.clone(), pump)
            .await
            .map_err(|e| fail(ErrorCode::Unavailable, e.to_string()))?;
        *guard = Some(live.clone());
        *lock(&self.running) = Arc::downgrade(&live);
        Ok(live)
    }

    /// The selected tab of the running browser, refused when it shows a page
    /// the URL policy does not let tools read (a page can get there by redirect
    /// or script, and an attached browser's user anywhere).
    pub(crate) async fn tab(&self) -> Result<(Arc<Live>, Arc<Tab>), BrowserError> {
        let (live, tab) = self.tab_to_navigate().await?;
        self.check_readable(&live, &tab).await?;
        Ok((live, tab))
    }

    /// Refuses a tab whose page the URL policy does not let tools read.
    pub(crate) async fn check_readable(&self, live: &Live, tab: &Tab) -> Result<(), BrowserError> {
        let mut url = tab.state().url.clone();
        // lumo has not seen this tab commit a page (attached mid-load): ask the browser. It
        // shows no URL either while a document is being replaced (Chromium's new-tab page
        // moves to another process as it starts): wait for the next one rather than read a
        // page lumo cannot place.
        let deadline = Instant::now() + UNPLACED_WAIT;
        while url.is_empty() {
            let info = live.cdp.call("Target.getTargetInfo", json!({"targetId": tab.target_id}), None).await;
            url = info.ok().and_then(|i| i["targetInfo"]["url"].as_str().map(str::to_string)).unwrap_or_default();
            if url.is_empty() {
                if Instant::now() >= deadline {
                    return Err(refuse(
                        ErrorCode::Unavailable,
                        "This tab shows no page yet (it is between two documents). Call again in a moment.",
                    ));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                url = tab.state().url.clone();
            }
        }
        self.policy.check_page(&url).map_err(|mut refused| {
            refused.message.push_str(" Leave it with browser_navigate or close it with browser_tabs.");
            refused.into()
        })
    }

    /// The selected tab whatever it shows: for the tools that take it somewhere else.
    pub(crate) async fn tab_to_navigate(&self) -> Result<(Arc<Live>, Arc<Tab>), BrowserError> {
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

    /// The running browser, if there is one (never starts one; does not wait).
    pub(crate) fn running(&self) -> Option<Arc<Live>> {
        lock(&self.running).upgrade().filter(|l| !l.cdp.is_closed())
    }

    /// Replaces the origin allow/block lists of every handle on this browser
    /// (policy re-read). While lists are set, document requests are checked:
    /// tabs already open are intercepted from now on too.
    pub async fn set_origin_lists(&self, lists: crate::origin::OriginLists) {
        let had_lists = !self.policy.origins.is_empty();
        self.policy.origins.set(lists);
        let Some(live) = self.running() else { return };
        // Lists set: intercept every open tab. Lists gone: stop intercepting (a paused
        // request is answered only while lists are set), as new tabs would not intercept.
        let (method, params) = match live.fetch_enable() {
            Some(enable) => enable,
            None if had_lists => ("Fetch.disable", serde_json::json!({})),
            None => return,
        };
        let sessions: Vec<String> = live
            .tabs()
            .list
            .iter()
            .flat_map(|t| {
                let children: Vec<String> = t.state().children.iter().map(|c| c.session_id.clone()).collect();
                std::iter::once(t.session_id.clone()).chain(children)
            })
            .collect();
        for session in sessions {
            if let Err(e) = live.cdp.call(method, params.clone(), Some(&session)).await {
                tracing::debug!(%session, error = %e, method, "could not change request interception in an open tab");
            }
        }
    }

    /// The browser-level CDP connection, starting the browser if needed (lumo
    /// loads extensions into the browser it launched over it).
    pub async fn browser_connection(&self) -> Result<lumo_cdp::Connection, BrowserError> {
        Ok(self.browser_live().await?.cdp.clone())
    }

    /// The browser's process id, when lumo started it.
    pub async fn browser_pid(&self) -> Option<u32> {
        self.live.lock().await.as_ref().and_then(|l| l.browser()).and_then(Browser::pid)
    }

    /// Closes the browser if lumo started it (and waits for it to exit and
    /// its temporary profile to be removed); leaves an attached one running.
    /// Calls still in flight fail with a lost connection.
    pub async fn shutdown(&self) {
        // Recordings are saved while their tabs still show.
        self.recordings.finish_all().await;
        let live = {
            let mut guard = self.live.lock().await;
            self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
            guard.take()
        };
        if let Some(live) = live {
            live.stop_pump();
            if let Some(browser) = live.browser() {
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

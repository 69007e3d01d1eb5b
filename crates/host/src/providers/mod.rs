//! Provider extensions: the host side of the L0 probe / L1 MCP contract
//! (seed `000_…`; the rules themselves are `lumo-protocol`'s).
//!
//! - [`Providers`] holds the configured providers in order, their namespaces
//!   (first come, first served) and the [`Link`] to the bridge extension,
//!   which sends the probes and holds the ports for lumo.
//! - Each provider has a logical session (`session`): the state of its last
//!   probe (the seed's table, with its user-visible message), the MCP client
//!   session (rmcp) over its current port (`transport`), and its tool cache.
//! - Its tools are exposed as `<namespace>_<tool>` (`names`) and called
//!   through the gate like every other tool (`tools`).
//! - In launched mode lumo brings the bridge up itself (`launched`): it loads
//!   the bridge and the configured provider extensions into its Chromium and
//!   pairs the bridge with no user step.

mod launched;
pub(crate) mod link;
mod names;
mod session;
pub(crate) mod tools;
mod transport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lumo_protocol::{ClientInfo, ExtensionId, NameError, NamespaceRegistry, ProbeOutcome, ProbeRequest};
use tokio::sync::watch;

pub use launched::{Launcher, in_worker, load_unpacked};
pub use link::{Link, LinkError};
pub use names::RefusedTool;
pub use session::{ProviderView, view_line};

use names::Exposed;
use session::{Hub, Provider};

/// How long lumo waits for the user's bridge extension (`serve --bridge`)
/// before it says a provider cannot be reached.
const BRIDGE_WAIT: Duration = Duration::from_secs(3);

/// Every provider lumo knows, in the order they were configured or added.
pub struct Providers {
    me: std::sync::Weak<Providers>,
    link: Link,
    launcher: Option<Launcher>,
    entries: Mutex<Vec<Arc<Provider>>>,
    registry: Mutex<NamespaceRegistry>,
    changes: Mutex<Option<Arc<watch::Sender<u64>>>>,
    started: AtomicBool,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers").field("link", &self.link).field("count", &self.lock_entries().len()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Providers {
    /// Providers reached through `link`. With a `launcher`, lumo brings the
    /// bridge up in the browser it launched; without, the user's bridge
    /// extension (`serve --bridge`) must connect on its own.
    pub fn new(link: Link, launcher: Option<Launcher>) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            link,
            launcher,
            entries: Mutex::default(),
            registry: Mutex::default(),
            changes: Mutex::default(),
            started: AtomicBool::new(false),
        })
    }

    fn lock_entries(&self) -> MutexGuard<'_, Vec<Arc<Provider>>> {
        lock(&self.entries)
    }

    /// The link to the bridge.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Adds a provider (a no-op when it is known). Returns whether it was new.
    pub fn add(&self, id: ExtensionId) -> bool {
        let mut entries = self.lock_entries();
        if entries.iter().any(|p| p.id == id) {
            return false;
        }
        entries.push(Arc::new(Provider::new(id, self.me.clone())));
        true
    }

    /// An extension lumo loaded itself became a provider.
    pub(crate) fn add_loaded(&self, id: ExtensionId) {
        self.add(id);
    }

    /// Whether any provider is configured or any extension is to be loaded.
    pub fn configured(&self) -> bool {
        !self.lock_entries().is_empty() || self.launcher.as_ref().is_some_and(Launcher::loads_extensions)
    }

    /// What each provider looks like now (no probe).
    pub fn views(&self) -> Vec<ProviderView> {
        self.lock_entries().iter().map(|p| p.view()).collect()
    }

    /// The display name provider `id` gave in its last probe answer.
    pub fn name_of(&self, id: &str) -> Option<String> {
        self.lock_entries().iter().find(|p| p.id.as_str() == id).and_then(|p| p.view().name)
    }

    /// Probes every provider now, in order (so the first configured claims a
    /// contested namespace first), connecting those that may be; returns their views.
    pub async fn refresh_all(&self) -> Vec<ProviderView> {
        if let Err(why) = self.ensure_bridge().await {
            tracing::warn!(%why, "providers: the bridge is not up");
        }
        let entries: Vec<Arc<Provider>> = self.lock_entries().clone();
        for provider in &entries {
            provider.refresh().await;
        }
        self.views()
    }

    /// Probes and connects one provider now; returns its view.
    pub async fn refresh(&self, id: &ExtensionId) -> Option<ProviderView> {
        let provider = self.find(id)?;
        if let Err(why) = self.ensure_bridge().await {
            tracing::warn!(%why, "providers: the bridge is not up");
        }
        provider.refresh().await;
        Some(provider.view())
    }

    fn find(&self, id: &ExtensionId) -> Option<Arc<Provider>> {
        self.lock_entries().iter().find(|p| &p.id == id).cloned()
    }

    /// Starts the background work once: the first probes of the configured
    /// providers, and (with the user's bridge) a new round whenever the bridge connects.
    pub fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let hub = Arc::downgrade(self);
        let with_launcher = self.launcher.is_some();
        let mut attached = self.link.attached();
        tokio::spawn(async move {
            if let Some(hub) = hub.upgrade()
                && hub.configured()
            {
                hub.refresh_all().await;
            }
            if with_launcher {
                return;
            }
            while attached.changed().await.is_ok() {
                let Some(hub) = hub.upgrade() else { return };
                hub.refresh_all().await;
            }
        });
    }

    /// Makes sure a bridge extension is connected (bringing it up in launched mode).
    pub async fn ensure_bridge(&self) -> Result<(), String> {
        match &self.launcher {
            Some(launcher) => launcher.ensure(&self.link, |id| self.add_loaded(id)).await,
            None if self.link.wait_connected(BRIDGE_WAIT).await => Ok(()),
            None => Err(format!("{}; install and pair it (see `lumo pair`)", LinkError::NoBridge)),
        }
    }

    /// Sends the L0 probe to `id` through the bridge.
    pub(crate) async fn probe_outcome(&self, id: &ExtensionId) -> Result<ProbeOutcome, String> {
        self.ensure_bridge().await?;
        let client = ClientInfo {
            id: ExtensionId::new(crate::bridge::EXTENSION_ID).map_err(|e| e.to_string())?,
            name: "Lumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let request = ProbeRequest { id: format!("probe-{}", next_probe()), client };
        self.link.probe(id, &request).await.map_err(|e| e.to_string())
    }

    /// Claims `namespace` for `id` (first come, first served).
    pub(crate) fn claim(&self, namespace: &str, id: &ExtensionId) -> Result<(), (&'static str, String)> {
        lock(&self.registry).claim(namespace, id).map_err(|e| {
            let kind = match &e {
                NameError::NamespaceTaken { .. } => "namespace_taken",
                NameError::ReservedNamespace { .. } => "namespace_reserved",
                _ => "namespace_invalid",
            };
            (kind, format!("Refused: {e}; none of its tools are exposed."))
        })
    }

    /// Lets the catalog hear about tool list changes.
    pub(crate) fn set_changes(&self, changes: Arc<watch::Sender<u64>>) {
        *lock(&self.changes) = Some(changes);
    }

    /// Tells MCP clients the provider tools changed.
    pub(crate) fn announce(&self) {
        if let Some(changes) = lock(&self.changes).as_ref() {
            changes.send_modify(|n| *n += 1);
        }
    }

    /// Every exposed provider tool, with its provider.
    pub(crate) fn exposed(&self) -> Vec<(Arc<Provider>, Exposed)> {
        let entries = self.lock_entries().clone();
        let mut out = Vec::new();
        for provider in entries {
            let status = lock(&provider.status);
            if status.refusal.is_some() {
                continue;
            }
            let tools = status.tools.clone();
            drop(status);
            out.extend(tools.into_iter().map(|t| (provider.clone(), t)));
        }
        out
    }

    /// The exposed tool named `qualified`.
    pub(crate) fn lookup(&self, qualified: &str) -> Option<(Arc<Provider>, Exposed)> {
        self.exposed().into_iter().find(|(_, e)| e.qualified == qualified)
    }

    /// The number of MCP sessions opened with `id` so far (for the conformance check).
    pub fn initializations(&self, id: &ExtensionId) -> u64 {
        self.find(id).map_or(0, |p| p.view().initializations)
    }

    /// Closes `id`'s MCP session (the next call opens a new port).
    pub async fn disconnect(&self, id: &ExtensionId) {
        if let Some(p) = self.find(id) {
            p.drop_session().await;
        }
    }

    /// Calls tool `tool` (the provider's own name) of `id` directly, outside the
    /// gate: only for `lumo providers check`, which exercises the contract itself.
    pub async fn call_raw(
        &self,
        id: &ExtensionId,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<rmcp::model::CallToolResult, String> {
        let provider = self.find(id).ok_or("unknown provider")?;
        provider.call(tool, args).await.map_err(|e| format!("{e:?}"))
    }

    /// The provider's tools as it listed them (exposed ones only).
    pub fn tool_names(&self, id: &ExtensionId) -> Vec<(String, rmcp::model::Tool)> {
        self.exposed().into_iter().filter(|(p, _)| &p.id == id).map(|(_, e)| (e.qualified, e.tool)).collect()
    }

    /// Stops the bridge lumo brought up and removes its folder (lumo is exiting).
    pub async fn shutdown(&self) {
        if let Some(launcher) = &self.launcher {
            launcher.shutdown().await;
        }
    }

    /// The bridge's CDP handle of the launched browser, when lumo launched it (for the check).
    pub async fn browser(&self) -> Option<lumo_cdp::Connection> {
        match &self.launcher {
            Some(launcher) => launcher.connection().await,
            None => None,
        }
    }
}

/// What a provider did with a port lumo opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortFate {
    /// It answered `initialize` on it.
    Answered,
    /// It closed the port without answering.
    Closed,
    /// It kept the port open and said nothing.
    Silent,
}

impl Providers {
    /// Opens a port named `name` to `id`, sends `initialize` and reports what
    /// the provider did within `within` (for the port-name invariant).
    pub async fn try_port(&self, id: &ExtensionId, name: &str, within: Duration) -> Result<PortFate, String> {
        let mut port = self.link.open(id, name).map_err(|e| e.to_string())?;
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "lumo-check", "version": env!("CARGO_PKG_VERSION")}}});
        self.link.post(port.number, initialize);
        let fate = match tokio::time::timeout(within, port.inbound.recv()).await {
            Ok(Some(frame)) if frame.get("result").is_some() => PortFate::Answered,
            Ok(_) => PortFate::Closed,
            Err(_) => PortFate::Silent,
        };
        self.link.close(port.number);
        Ok(fate)
    }

    /// Whether `id` has an MCP session open now.
    pub async fn session_open(&self, id: &ExtensionId) -> bool {
        match self.find(id) {
            Some(p) => p.session_open().await,
            None => false,
        }
    }
}

impl Hub for Providers {
    fn probe_outcome<'a>(
        &'a self,
        id: &'a ExtensionId,
    ) -> futures_util::future::BoxFuture<'a, Result<ProbeOutcome, String>> {
        Box::pin(Providers::probe_outcome(self, id))
    }

    fn claim(&self, namespace: &str, id: &ExtensionId) -> Result<(), (&'static str, String)> {
        Providers::claim(self, namespace, id)
    }

    fn link(&self) -> &Link {
        Providers::link(self)
    }

    fn announce(&self) {
        Providers::announce(self)
    }
}

fn next_probe() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The audit target of a provider call: the extension ID, and the UUID of
/// what the call acts on when its arguments name one (`<id>/<uuid>`).
pub(crate) fn audit_target(extension: &str, args: &serde_json::Value) -> String {
    let uuid = args.as_object().into_iter().flat_map(|m| m.values()).filter_map(|v| v.as_str()).find(|s| is_uuid(s));
    match uuid {
        Some(uuid) => format!("{extension}/{uuid}"),
        None => extension.to_string(),
    }
}

/// `lumo-protocol`'s UUID rule, through the record that enforces it.
fn is_uuid(s: &str) -> bool {
    let Ok(hash) = lumo_protocol::params_hash(&serde_json::Value::Null) else { return false };
    lumo_protocol::AuditRecord::new("tool", "lumo", lumo_protocol::AuditOutcome::Ok, hash, 0)
        .is_ok_and(|record| record.with_target(s).is_ok())
}

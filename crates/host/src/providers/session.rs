//! One provider's logical session: its last probe, its MCP session over the
//! current port, and its tool cache.
//!
//! A closed port is not a vanished provider (MV3 recycles service workers):
//! the session keeps the tool cache and the namespace, and the next call
//! probes again, opens a new port and runs `initialize` again (the provider
//! makes a new MCP server for every port). L1 is opened only when the probe
//! says `enabled && authorized`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use lumo_protocol::{ExtensionId, HostState, MCP_PORT_NAME, ProbeErrorKind, ProbeOutcome, ServiceInfo};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{NotificationContext, Peer, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient};
use serde::Serialize;

use super::link::Link;
use super::names::{self, Exposed, RefusedTool};
use super::transport::PortTransport;

/// How long `initialize` and `tools/list` may take on a new port.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What `ext_providers` and `lumo providers` show for one provider.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProviderView {
    /// The extension ID.
    pub id: String,
    /// `connected`, `error`, `refused` (a name rule) or `unknown` (not probed yet).
    pub state: String,
    /// The machine code of an error (`not_installed`, `pending_approval`, `namespace_taken`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The user-visible line.
    pub message: String,
    /// The provider's namespace, once it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Its display name and version, once it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many of its tools lumo exposes.
    pub tool_count: usize,
    /// Its tools lumo refused, with the reason.
    pub refused_tools: Vec<RefusedTool>,
    /// How many MCP sessions (`initialize`) lumo ran with it so far.
    pub initializations: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Status {
    pub(crate) state: Option<HostState>,
    /// A name rule that keeps all its tools out (namespace taken, reserved, invalid).
    pub(crate) refusal: Option<(&'static str, String)>,
    pub(crate) service: Option<ServiceInfo>,
    pub(crate) tools: Vec<Exposed>,
    pub(crate) refused: Vec<RefusedTool>,
}

/// What a provider needs from the set it belongs to (`Providers` implements
/// it): a trait, so this module does not depend on the set that holds it.
pub(crate) trait Hub: Send + Sync {
    /// Sends the L0 probe to `id` through the bridge.
    fn probe_outcome<'a>(&'a self, id: &'a ExtensionId) -> BoxFuture<'a, Result<ProbeOutcome, String>>;
    /// Claims `namespace` for `id` (first come, first served).
    fn claim(&self, namespace: &str, id: &ExtensionId) -> Result<(), (&'static str, String)>;
    /// The link to the bridge.
    fn link(&self) -> &Link;
    /// Tells MCP clients the provider tools changed.
    fn announce(&self);
}

/// One configured provider.
pub(crate) struct Provider {
    pub(crate) id: ExtensionId,
    pub(crate) status: Mutex<Status>,
    /// The MCP session over the current port, if one is open.
    l1: tokio::sync::Mutex<Option<RunningService<RoleClient, Watcher>>>,
    initializations: AtomicU64,
    hub: Weak<dyn Hub>,
}

/// Timings of the last connection, for `lumo providers check` and the latency figures.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timings {
    pub(crate) probe: Duration,
    pub(crate) handshake: Duration,
}

/// Watches one MCP session for `notifications/tools/list_changed`.
pub(crate) struct Watcher {
    provider: Weak<Provider>,
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("lumo", env!("CARGO_PKG_VERSION")))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(provider) = self.provider.upgrade() {
            tokio::spawn(async move { provider.relist().await });
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Provider {
    pub(crate) fn new(id: ExtensionId, hub: Weak<dyn Hub>) -> Self {
        Self {
            id,
            status: Mutex::default(),
            l1: tokio::sync::Mutex::new(None),
            initializations: AtomicU64::new(0),
            hub,
        }
    }

    pub(crate) fn view(&self) -> ProviderView {
        let status = lock(&self.status);
        let (state, kind, message) = match (&status.refusal, &status.state) {
            (Some((kind, message)), _) => ("refused", Some(kind.to_string()), message.clone()),
            (None, None) => ("unknown", None, "Not probed yet.".to_string()),
            (None, Some(state @ HostState::Error { kind, .. })) => {
                ("error", Some(kind.code().to_string()), state.user_message())
            }
            (None, Some(state @ HostState::Connected { .. })) => ("connected", None, state.user_message()),
            (None, Some(state)) => ("connecting", None, state.user_message()),
        };
        ProviderView {
            id: self.id.as_str().to_string(),
            state: state.to_string(),
            kind,
            message,
            namespace: status.service.as_ref().map(|s| s.namespace.clone()),
            name: status.service.as_ref().map(|s| s.name.clone()),
            version: status.service.as_ref().map(|s| s.version.clone()),
            tool_count: status.tools.len(),
            refused_tools: status.refused.clone(),
            initializations: self.initializations.load(Ordering::Relaxed),
        }
    }

    fn set_error(&self, kind: ProbeErrorKind, message: String) {
        lock(&self.status).state = Some(HostState::Error { kind, message });
    }

    /// The peer of the open MCP session, opening one (probe, port, initialize,
    /// tools/list) when there is none.
    pub(crate) async fn peer(self: &Arc<Self>) -> Result<Peer<RoleClient>, String> {
        let mut l1 = self.l1.lock().await;
        if let Some(running) = l1.as_ref().filter(|r| alive(r)) {
            return Ok(running.peer().clone());
        }
        *l1 = None;
        let running = self.open().await?;
        let peer = running.peer().clone();
        *l1 = Some(running);
        Ok(peer)
    }

    /// Probes now; when L1 is allowed and not open, opens it. Returns the timings.
    pub(crate) async fn refresh(self: &Arc<Self>) -> Timings {
        let mut l1 = self.l1.lock().await;
        if l1.as_ref().is_some_and(alive) {
            // Connected: the probe alone says whether that may go on.
            let started = Instant::now();
            if !self.probe().await {
                if let Some(mut running) = l1.take() {
                    let _ = running.close_with_timeout(Duration::from_millis(200)).await;
                }
                self.announce();
            } else {
                self.restore_connected();
            }
            return Timings { probe: started.elapsed(), handshake: Duration::ZERO };
        }
        *l1 = None;
        let mut timings = Timings::default();
        if let Ok(running) = self.open_timed(&mut timings).await {
            *l1 = Some(running);
        }
        timings
    }

    fn restore_connected(&self) {
        let mut status = lock(&self.status);
        let count = status.tools.len();
        status.state = Some(HostState::Connected { tool_count: count });
    }

    pub(crate) async fn session_open(&self) -> bool {
        self.l1.lock().await.as_ref().is_some_and(alive)
    }

    /// Forgets the open MCP session (the next call opens a new one).
    pub(crate) async fn drop_session(&self) {
        if let Some(mut running) = self.l1.lock().await.take() {
            let _ = running.close_with_timeout(Duration::from_millis(200)).await;
        }
    }

    async fn open(self: &Arc<Self>) -> Result<RunningService<RoleClient, Watcher>, String> {
        self.open_timed(&mut Timings::default()).await
    }

    /// Probes; true when L1 may be opened. Records the state either way.
    async fn probe(&self) -> bool {
        let Some(hub) = self.hub.upgrade() else { return false };
        let outcome = match hub.probe_outcome(&self.id).await {
            Ok(outcome) => outcome,
            Err(why) => {
                self.set_error(ProbeErrorKind::NotInstalled, why);
                return false;
            }
        };
        let state = HostState::from_probe(outcome);
        let HostState::ReadyForL1 { service } = &state else {
            lock(&self.status).state = Some(state);
            return false;
        };
        let claimed = hub.claim(&service.namespace, &self.id);
        let mut status = lock(&self.status);
        status.service = Some(service.clone());
        status.refusal = claimed.err();
        let ok = status.refusal.is_none();
        status.state = Some(state);
        ok
    }

    async fn open_timed(
        self: &Arc<Self>,
        timings: &mut Timings,
    ) -> Result<RunningService<RoleClient, Watcher>, String> {
        let started = Instant::now();
        let allowed = self.probe().await;
        timings.probe = started.elapsed();
        if !allowed {
            self.announce();
            return Err(self.view().message);
        }
        let Some(hub) = self.hub.upgrade() else { return Err("lumo is stopping".into()) };
        let started = Instant::now();
        let port = hub.link().open(&self.id, MCP_PORT_NAME).map_err(|e| e.to_string())?;
        let transport = PortTransport::new(hub.link().clone(), port);
        let watcher = Watcher { provider: Arc::downgrade(self) };
        let handshake = async {
            let running = rmcp::serve_client(watcher, transport)
                .await
                .map_err(|e| format!("the provider did not complete the MCP handshake on its port: {e}"))?;
            let tools = running
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("the provider did not list its tools: {e}"))?;
            Ok::<_, String>((running, tools))
        };
        let (running, tools) = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
            Ok(Ok(done)) => done,
            Ok(Err(why)) => return Err(self.failed_l1(why)),
            Err(_) => {
                return Err(self.failed_l1(format!(
                    "the provider did not finish initialize and tools/list within {} s",
                    HANDSHAKE_TIMEOUT.as_secs()
                )));
            }
        };
        self.initializations.fetch_add(1, Ordering::Relaxed);
        timings.handshake = started.elapsed();
        self.adopt(tools);
        Ok(running)
    }

    fn failed_l1(&self, why: String) -> String {
        self.set_error(ProbeErrorKind::ProtocolError, why.clone());
        self.announce();
        why
    }

    /// Takes a fresh `tools/list` answer into the cache, under the name rules.
    fn adopt(&self, tools: Vec<Tool>) {
        let namespace = lock(&self.status).service.as_ref().map(|s| s.namespace.clone()).unwrap_or_default();
        let (exposed, refused) = names::expose(&namespace, tools);
        let changed = {
            let mut status = lock(&self.status);
            let before: Vec<(String, String)> = status.tools.iter().map(fingerprint).collect();
            let after: Vec<(String, String)> = exposed.iter().map(fingerprint).collect();
            status.state = Some(HostState::Connected { tool_count: exposed.len() });
            status.tools = exposed;
            status.refused = refused;
            before != after
        };
        if changed {
            self.announce();
        }
    }

    /// The provider said its tools changed: list them again.
    async fn relist(self: Arc<Self>) {
        let peer = {
            let l1 = self.l1.lock().await;
            l1.as_ref().filter(|r| alive(r)).map(|r| r.peer().clone())
        };
        let Some(peer) = peer else { return };
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, peer.list_all_tools()).await {
            Ok(Ok(tools)) => self.adopt(tools),
            Ok(Err(e)) => {
                tracing::warn!(provider = %self.id.as_str(), error = %e, "tools/list after list_changed failed")
            }
            Err(_) => tracing::warn!(provider = %self.id.as_str(), "tools/list after list_changed timed out"),
        }
    }

    fn announce(&self) {
        if let Some(hub) = self.hub.upgrade() {
            hub.announce();
        }
    }

    /// Calls `tool` (the provider's own name) with `args`, reconnecting first if its port closed.
    pub(crate) async fn call(
        self: &Arc<Self>,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, CallFailure> {
        let peer = self.peer().await.map_err(CallFailure::Unavailable)?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        match peer.call_tool(params).await {
            Ok(result) => Ok(result),
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                self.drop_session().await;
                Err(CallFailure::Lost)
            }
            Err(ServiceError::McpError(e)) => Err(CallFailure::Protocol(e.message.to_string())),
            Err(e) => Err(CallFailure::Protocol(e.to_string())),
        }
    }
}

/// `id  state  namespace  tools  message`, then refused tools indented.
pub fn view_line(v: &ProviderView) -> String {
    let mut line = format!(
        "{}  {}{}  namespace={}  tools={}  {}",
        v.id,
        v.state,
        v.kind.as_ref().map(|k| format!(" ({k})")).unwrap_or_default(),
        v.namespace.as_deref().unwrap_or("-"),
        v.tool_count,
        v.message
    );
    for r in &v.refused_tools {
        line.push_str(&format!("\n    refused {:?}: {}", r.name, r.reason));
    }
    line
}

/// How a provider call failed below the tool level.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// No MCP session could be opened (the state says why).
    Unavailable(String),
    /// The port closed while the call was out.
    Lost,
    /// The provider answered with a JSON-RPC error.
    Protocol(String),
}

/// Whether an MCP session still runs: not closed by lumo, and its port still open.
fn alive(running: &RunningService<RoleClient, Watcher>) -> bool {
    !running.is_closed() && !running.peer().is_transport_closed()
}

fn fingerprint(e: &Exposed) -> (String, String) {
    (e.qualified.clone(), serde_json::to_string(&e.tool).unwrap_or_default())
}

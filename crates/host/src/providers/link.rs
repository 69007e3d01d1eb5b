//! The link to provider extensions through the bridge extension: lumo's side
//! of the `provider.*` messages on the bridge WebSocket.
//!
//! Only an extension can `chrome.runtime.sendMessage` or `connect` to another
//! extension, so the bridge does both on lumo's behalf (`extension/bridge/providers.js`):
//!
//! | lumo → bridge | bridge → lumo |
//! |---|---|
//! | `provider.probe {req, extension, message}` | `provider.probed {req, answer \| rejected \| timeout}` |
//! | `provider.connect {port, extension, name}` | `provider.message {port, msg}` |
//! | `provider.send {port, msg}` / `provider.close {port}` | `provider.closed {port, error}` |
//!
//! Ports are numbered by lumo and belong to the bridge socket they were opened
//! on: when that socket goes (the bridge's worker restarted, the socket
//! dropped), its ports are closed here too, as the providers see them closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lumo_protocol::{ExtensionId, PROBE_TIMEOUT, ProbeOutcome, ProbeRequest, ProbeResponse};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

/// Messages to the current bridge socket (serialized).
pub(crate) type ToBridge = mpsc::UnboundedSender<String>;

/// How much longer than the probe timeout lumo waits for the bridge's answer
/// (the bridge measures the 1500 ms itself, next to `sendMessage`).
const PROBE_SLACK: Duration = Duration::from_secs(3);

/// Why the link could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// No bridge extension is connected to lumo.
    #[error(
        "the lumo bridge extension is not connected, so providers cannot be reached (it carries the probe and the MCP port)"
    )]
    NoBridge,
    /// The bridge went away before it answered.
    #[error("the bridge extension went away before it answered")]
    BridgeLost,
}

#[derive(Default)]
struct Inner {
    /// The current bridge socket: its number and sender.
    socket: Option<(u64, ToBridge)>,
    /// Probes waiting for their answer.
    probes: HashMap<u64, oneshot::Sender<ProbeOutcome>>,
    /// Open ports: lumo's number → (socket number, inbound frames).
    ports: HashMap<u64, (u64, mpsc::UnboundedSender<Value>)>,
}

/// The link; cheap to clone.
#[derive(Clone)]
pub struct Link {
    inner: Arc<Mutex<Inner>>,
    next: Arc<AtomicU64>,
    /// Bumped whenever a bridge socket attaches.
    attached: Arc<watch::Sender<u64>>,
}

impl Default for Link {
    fn default() -> Self {
        Self { inner: Arc::default(), next: Arc::new(AtomicU64::new(1)), attached: Arc::new(watch::channel(0).0) }
    }
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("connected", &self.is_connected()).finish()
    }
}

/// One L1 port, as lumo holds it.
pub(crate) struct Port {
    pub(crate) number: u64,
    pub(crate) inbound: mpsc::UnboundedReceiver<Value>,
}

impl Link {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a bridge socket is attached.
    pub fn is_connected(&self) -> bool {
        self.lock().socket.is_some()
    }

    /// A receiver that changes whenever a bridge socket attaches.
    pub(crate) fn attached(&self) -> watch::Receiver<u64> {
        self.attached.subscribe()
    }

    /// Waits until a bridge socket is attached, at most `within`.
    pub async fn wait_connected(&self, within: Duration) -> bool {
        let mut attached = self.attached.subscribe();
        let waiting = async {
            while !self.is_connected() {
                if attached.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(within, waiting).await.is_ok()
    }

    /// A bridge socket authenticated: provider messages go to it from now on.
    pub(crate) fn attach(&self, number: u64, socket: ToBridge) {
        let old = self.lock().socket.replace((number, socket));
        if let Some((old, _)) = old {
            self.drop_socket(old);
        }
        self.attached.send_modify(|n| *n += 1);
    }

    /// Socket `number` went away: its ports are closed and its probes fail.
    pub(crate) fn detach(&self, number: u64) {
        let mut inner = self.lock();
        if inner.socket.as_ref().is_some_and(|(n, _)| *n == number) {
            inner.socket = None;
            // Probes in flight were sent on it; their answers will not come.
            inner.probes.clear();
        }
        drop(inner);
        self.drop_socket(number);
    }

    fn drop_socket(&self, number: u64) {
        self.lock().ports.retain(|_, (socket, _)| *socket != number);
    }

    fn send(&self, message: &Value) -> Result<u64, LinkError> {
        let inner = self.lock();
        let (number, socket) = inner.socket.as_ref().ok_or(LinkError::NoBridge)?;
        socket.send(message.to_string()).map_err(|_| LinkError::BridgeLost)?;
        Ok(*number)
    }

    /// A `provider.*` message from the bridge.
    pub(crate) fn bridge_sent(&self, message: &Value) {
        let number = message["port"].as_u64().or_else(|| message["req"].as_u64()).unwrap_or(0);
        match message["type"].as_str() {
            Some("provider.probed") => {
                let waiting = self.lock().probes.remove(&number);
                if let Some(waiting) = waiting {
                    let _ = waiting.send(outcome_of(message));
                }
            }
            Some("provider.message") => {
                let port = self.lock().ports.get(&number).map(|(_, tx)| tx.clone());
                match port {
                    Some(port) => {
                        let _ = port.send(message["msg"].clone());
                    }
                    None => tracing::debug!(port = number, "a frame for a port lumo no longer holds"),
                }
            }
            Some("provider.closed") => {
                if let Some(error) = message["error"].as_str() {
                    tracing::debug!(port = number, error, "provider port closed");
                }
                self.lock().ports.remove(&number);
            }
            other => tracing::warn!(kind = ?other, "bridge: ignored a provider message of unknown type"),
        }
    }

    /// Sends the L0 probe `request` to `extension` and classifies nothing: the
    /// outcome (answer, rejection, timeout) goes to the state machine.
    pub async fn probe(&self, extension: &ExtensionId, request: &ProbeRequest) -> Result<ProbeOutcome, LinkError> {
        let req = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.lock().probes.insert(req, tx);
        let message =
            json!({"type": "provider.probe", "req": req, "extension": extension.as_str(), "message": request});
        if let Err(e) = self.send(&message) {
            self.lock().probes.remove(&req);
            return Err(e);
        }
        match tokio::time::timeout(PROBE_TIMEOUT + PROBE_SLACK, rx).await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(_)) => Err(LinkError::BridgeLost),
            Err(_) => {
                self.lock().probes.remove(&req);
                Ok(ProbeOutcome::TimedOut {
                    message: format!(
                        "Probe timed out after {} ms (no answer through the bridge)",
                        PROBE_TIMEOUT.as_millis()
                    ),
                })
            }
        }
    }

    /// Opens an L1 port named `name` to `extension`.
    pub(crate) fn open(&self, extension: &ExtensionId, name: &str) -> Result<Port, LinkError> {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, inbound) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        let (socket, bridge) = inner.socket.clone().ok_or(LinkError::NoBridge)?;
        inner.ports.insert(number, (socket, tx));
        drop(inner);
        let message =
            json!({"type": "provider.connect", "port": number, "extension": extension.as_str(), "name": name});
        if bridge.send(message.to_string()).is_err() {
            self.lock().ports.remove(&number);
            return Err(LinkError::BridgeLost);
        }
        Ok(Port { number, inbound })
    }

    /// Sends one MCP message on port `number`; false when the port is closed.
    pub(crate) fn post(&self, number: u64, msg: Value) -> bool {
        let inner = self.lock();
        let Some((socket, _)) = inner.ports.get(&number) else { return false };
        let Some((current, bridge)) = inner.socket.as_ref().filter(|(n, _)| n == socket) else { return false };
        let _ = current;
        bridge.send(json!({"type": "provider.send", "port": number, "msg": msg}).to_string()).is_ok()
    }

    /// Closes port `number` (the provider sees `onDisconnect`).
    pub(crate) fn close(&self, number: u64) {
        if self.lock().ports.remove(&number).is_some() {
            let _ = self.send(&json!({"type": "provider.close", "port": number}));
        }
    }
}

/// What the bridge saw of one `sendMessage`.
fn outcome_of(message: &Value) -> ProbeOutcome {
    if let Some(answer) = message.get("answer") {
        return ProbeResponse::from_value(answer).into();
    }
    if let Some(timeout) = message["timeout"].as_str() {
        return ProbeOutcome::TimedOut { message: timeout.to_string() };
    }
    if let Some(why) = message["rejected"].as_str() {
        tracing::debug!(why, "probe rejected by sendMessage");
    }
    ProbeOutcome::Rejected
}

#[cfg(test)]
mod tests {
    use super::*;
    use lumo_protocol::{HostState, ProbeErrorKind};

    #[test]
    fn bridge_outcomes_map_to_the_state_table() {
        let state = |m: Value| HostState::from_probe(outcome_of(&m));
        assert!(matches!(
            state(json!({"rejected": "Could not establish connection. Receiving end does not exist."})),
            HostState::Error { kind: ProbeErrorKind::NotInstalled, .. }
        ));
        assert_eq!(
            state(json!({"timeout": "Probe timed out after 1500ms"})),
            HostState::Error { kind: ProbeErrorKind::Timeout, message: "Probe timed out after 1500ms".into() }
        );
        assert!(matches!(
            state(json!({"answer": null})),
            HostState::Error { kind: ProbeErrorKind::MalformedResponse, .. }
        ));
        assert!(matches!(
            state(json!({"answer": {"ok": false, "error": "bad version"}})),
            HostState::Error { kind: ProbeErrorKind::ProtocolError, .. }
        ));
    }

    #[tokio::test]
    async fn ports_close_with_their_socket() {
        let link = Link::default();
        let id = ExtensionId::new("a".repeat(32)).expect("id");
        assert_eq!(link.open(&id, "lumo:mcp").err(), Some(LinkError::NoBridge));
        let (tx, mut rx) = mpsc::unbounded_channel();
        link.attach(7, tx);
        let mut port = link.open(&id, "lumo:mcp").expect("open");
        assert!(rx.recv().await.expect("connect sent").contains("provider.connect"));
        link.bridge_sent(&json!({"type": "provider.message", "port": port.number, "msg": {"jsonrpc": "2.0"}}));
        assert_eq!(port.inbound.recv().await, Some(json!({"jsonrpc": "2.0"})));
        assert!(link.post(port.number, json!({})));
        link.detach(7);
        assert_eq!(port.inbound.recv().await, None, "the port closes with its socket");
        assert!(!link.post(port.number, json!({})));
    }
}

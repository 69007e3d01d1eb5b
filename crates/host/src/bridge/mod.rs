//! The bridge: lumo's side of the `extension/bridge` browser extension.
//!
//! A loopback WebSocket endpoint that only the paired extension may use
//! (checked by `Origin` and a signed token, see [`auth`]), and a relay
//! carrier ([`relay`]) that runs lumo's CDP connection over whichever
//! extension socket is current, so browser tools work in the user's own
//! Chrome and survive the extension's service worker restarting. Several
//! lumo processes share one extension: the first owns the address, later
//! ones attach to it ([`role`]).

pub mod auth;
mod client;
mod hub;
mod relay;
mod role;
mod server;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;

pub use relay::Relay;
pub use role::Role;

use crate::audit::Audit;

/// The bridge of one lumo process: its relay, and (once started) its part in
/// the bridge address, as owner or attached (see [`role`]).
pub struct Bridge {
    shared: Arc<server::Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("addr", &self.shared.options.addr).field("relay", &self.shared.relay).finish()
    }
}

impl Bridge {
    /// A bridge not started yet: its relay exists (calls over it wait), nothing listens.
    pub fn new(options: BridgeOptions) -> Result<Self, BridgeError> {
        Ok(Self { shared: Arc::new(server::Shared::new(options)?), task: Mutex::default() })
    }

    /// Owns the address, or attaches to the lumo that owns it; refused
    /// connections go to `audit`. Fails when the address is taken by
    /// something that is not a lumo with this bridge state.
    pub async fn start(&self, audit: Option<Audit>) -> Result<Role, BridgeError> {
        if let Some(audit) = audit {
            let _ = self.shared.audit.set(audit);
        }
        let (role, task) = role::take_part(self.shared.clone()).await?;
        if let Some(old) = self.task.lock().unwrap_or_else(|e| e.into_inner()).replace(task) {
            old.abort();
        }
        Ok(role)
    }

    /// The relay (its connection is what browser tools run over).
    pub fn relay(&self) -> &Relay {
        &self.shared.relay
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
    }
}

/// Starts a bridge that owns `options.addr` (or attaches to the lumo that does), with no audit log.
pub async fn start(options: BridgeOptions) -> Result<(Bridge, Role), BridgeError> {
    let bridge = Bridge::new(options)?;
    let role = bridge.start(None).await?;
    Ok((bridge, role))
}

/// The ID of `extension/bridge` (pinned by the `key` in its manifest).
pub const EXTENSION_ID: &str = "hjfgijdboblbpgomjhgpbhfiobiokomm";

/// Where lumo listens for the extension unless told otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:17345";

/// How the bridge runs.
#[derive(Debug, Clone)]
pub struct BridgeOptions {
    /// Loopback address to listen on.
    pub addr: SocketAddr,
    /// Folder of the state file (secret, pending pairing code).
    pub dir: PathBuf,
    /// The extension allowed to connect.
    pub extension_id: String,
    /// How long an access token lives.
    pub token_ttl: Duration,
    /// The connection is dropped when the extension is silent this long
    /// (it sends a heartbeat every 15 s).
    pub silence_limit: Duration,
    /// How long a call waits for an absent extension before it fails.
    pub wait: Duration,
    /// Where `provider.*` messages go (the provider contract, see `crate::providers`).
    pub providers: crate::providers::Link,
}

impl BridgeOptions {
    /// Defaults for `addr` and `dir`: the pinned extension, one-hour tokens.
    pub fn new(addr: SocketAddr, dir: PathBuf) -> Self {
        Self {
            addr,
            dir,
            extension_id: EXTENSION_ID.to_string(),
            token_ttl: Duration::from_secs(3600),
            silence_limit: Duration::from_secs(20),
            wait: Duration::from_secs(20),
            providers: crate::providers::Link::default(),
        }
    }
}

/// What can go wrong starting the bridge.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The state file could not be read or written.
    #[error("bridge state: {0}")]
    State(String),
    /// The address is not loopback, or is taken.
    #[error("bridge address: {0}")]
    Listen(String),
}

/// Close codes the extension sees when lumo refuses it (documented in the README).
pub mod close {
    /// A newer connection from the extension replaced this one.
    pub const REPLACED: u16 = 4000;
    /// The access or refresh token was refused.
    pub const BAD_TOKEN: u16 = 4001;
    /// The pairing code was refused.
    pub const BAD_CODE: u16 = 4002;
    /// The `Origin` is not the paired extension's.
    pub const BAD_ORIGIN: u16 = 4003;
    /// The first message was not `auth`, `refresh` or `pair`, or came too late.
    pub const NO_AUTH: u16 = 4004;
    /// A socket without an `Origin` that is not a lumo holding this bridge's secret.
    pub const BAD_CLIENT: u16 = 4005;
    /// The extension went silent (no heartbeat).
    pub const SILENT: u16 = 4008;
}

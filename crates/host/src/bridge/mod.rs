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
mod options;
mod relay;
mod role;
mod server;

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

pub use options::{BridgeError, BridgeOptions, DEFAULT_ADDR, EXTENSION_ID, close};
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

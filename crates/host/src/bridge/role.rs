//! Who owns the bridge address when several lumo processes run with
//! `--bridge` (two agents, or one restarted while the other runs).
//!
//! The first lumo that binds the address owns it: the extension connects to
//! it. A later lumo finds the address taken, says hello (both prove they hold
//! the same bridge secret, see [`super::client`]) and relays its CDP through
//! the owner. When the owner exits, its attached lumos race to bind the
//! address; the winner owns it and the others attach to the winner; the
//! extension reconnects to it within its backoff. Nobody is killed and no
//! socket is stolen.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use super::client::{self, Attached};
use super::options::BridgeError;
use super::server::{self, Shared};

/// What this lumo became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It listens on the address; the extension connects to it.
    Owner(SocketAddr),
    /// Another lumo owns the address; this one relays through it.
    Attached(SocketAddr),
}

enum Start {
    Own(TcpListener),
    Attach(Box<Attached>),
}

async fn try_once(shared: &Shared) -> Result<Start, String> {
    let addr = shared.options.addr;
    match TcpListener::bind(addr).await {
        Ok(listener) => Ok(Start::Own(listener)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            client::hello(addr, &shared.store, shared.relay.lane()).await.map(|a| Start::Attach(Box::new(a))).map_err(
                |why| format!("{addr} is in use and {why}; give --bridge another address or stop what listens there"),
            )
        }
        Err(e) => Err(format!("cannot listen on {addr}: {e}")),
    }
}

/// Owns or attaches (once, reporting why neither worked), then keeps doing
/// so in the background: an attached lumo takes over when the owner exits.
pub(crate) async fn take_part(shared: Arc<Shared>) -> Result<(Role, tokio::task::JoinHandle<()>), BridgeError> {
    let start = try_once(&shared).await.map_err(BridgeError::Listen)?;
    let role = match &start {
        Start::Own(listener) => Role::Owner(listener.local_addr().map_err(|e| BridgeError::Listen(e.to_string()))?),
        Start::Attach(_) => Role::Attached(shared.options.addr),
    };
    let task = tokio::spawn(async move {
        let mut next = Some(start);
        loop {
            let start = match next.take() {
                Some(start) => start,
                None => match try_once(&shared).await {
                    Ok(start) => start,
                    Err(why) => {
                        tracing::warn!(%why, "bridge: neither owning nor attached; trying again");
                        tokio::time::sleep(jitter()).await;
                        continue;
                    }
                },
            };
            match start {
                Start::Own(listener) => {
                    tracing::info!(addr = %shared.options.addr, "bridge: this lumo owns the bridge address");
                    return server::serve(listener, shared).await;
                }
                Start::Attach(attached) => {
                    tracing::info!(addr = %shared.options.addr, "bridge: attached to the lumo that owns the address");
                    attached.relay(&shared.relay).await;
                    tracing::info!("bridge: the owning lumo went away; taking over or attaching again");
                }
            }
        }
    });
    Ok((role, task))
}

/// 50–300 ms, so lumos that lost their owner together do not retry in step.
fn jitter() -> Duration {
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    Duration::from_millis(50 + u64::from(byte[0]))
}

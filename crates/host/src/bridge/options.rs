//! What the bridge's modules share: its options, errors, close codes and
//! the pinned extension ID (re-exported by the bridge module).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    pub providers: crate::providers::link::Link,
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
            providers: crate::providers::link::Link::default(),
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

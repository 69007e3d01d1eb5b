//! lumo-cdp: a thin Chrome DevTools Protocol client and the Chromium launcher.
//!
//! - [`Connection`] is a cloneable handle to one CDP WebSocket. A single reader
//!   task owns the socket's incoming half; calls wait on a oneshot keyed by
//!   call id; events fan out to every [`Connection::subscribe`]r. When the
//!   socket drops, every pending call fails with [`CdpError::ConnectionLost`].
//! - Flattened sessions: pass the `sessionId` of `Target.attachToTarget
//!   {flatten: true}` to [`Connection::call`] to talk to one page.
//! - [`Browser`] launches Chromium with a fresh profile (or attaches to one
//!   already running through [`connect_endpoint`]) and cleans up on drop.
//!
//! No tool logic lives here.
//!
//! ```no_run
//! # async fn demo() -> Result<(), lumo_cdp::CdpError> {
//! let browser = lumo_cdp::Browser::launch(lumo_cdp::LaunchOptions::default()).await?;
//! let version = browser.connection().call("Browser.getVersion", serde_json::json!({}), None).await?;
//! println!("{}", version["product"]);
//! # Ok(()) }
//! ```

mod connection;
mod endpoint;
mod error;
mod launcher;

pub use connection::{Connection, DEFAULT_CALL_TIMEOUT, Event};
pub use endpoint::connect_endpoint;
pub use error::CdpError;
pub use launcher::{Browser, LaunchOptions, find_browser};

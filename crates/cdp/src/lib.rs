//! lumo-cdp: a thin Chrome DevTools Protocol client and the Chromium launcher.
//!
//! - [`Connection`] is a cloneable handle to one CDP connection. It runs over
//!   any carrier ([`Connection::over`]: a stream of incoming messages and a
//!   sink of outgoing ones): a WebSocket when attached, the browser's
//!   `--remote-debugging-pipe` when launched. A single reader task owns the
//!   incoming half; calls wait on a oneshot keyed by call id; events fan out
//!   to every [`Connection::subscribe`]r. When the carrier drops, every
//!   pending call fails with [`CdpError::ConnectionLost`].
//! - Flattened sessions: pass the `sessionId` of `Target.attachToTarget
//!   {flatten: true}` to [`Connection::call`] to talk to one page.
//! - [`Browser`] launches Chromium with a fresh profile over a pipe (so it
//!   dies with lumo, even on SIGKILL) and closes it in order; profiles (and
//!   other [`owned_temp_dir`]s) left by a lumo that was killed are swept at
//!   the next launch or start.
//!   [`connect_endpoint`] attaches to a browser already running instead.
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
mod pipe;
mod profile;
mod websocket;

pub use connection::{Connection, DEFAULT_CALL_TIMEOUT, Event};
pub use endpoint::connect_endpoint;
pub use error::{CARRIER_RESUMED, CARRIER_UNAVAILABLE, CARRIER_UNSURE, CdpError, INVALID_PARAMS, SERVER_ERROR};
pub use launcher::{Browser, LaunchOptions, find_browser};
pub use profile::{owned_temp_dir, sweep_stale_temp_dirs};

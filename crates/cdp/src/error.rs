//! The one error type of the CDP layer.

use std::path::PathBuf;
use std::time::Duration;

/// What went wrong talking to a browser.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CdpError {
    /// The browser answered the command with a protocol error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol {
        /// The CDP method that was called.
        method: String,
        /// CDP error code.
        code: i64,
        /// CDP error message.
        message: String,
    },
    /// No answer within the call's timeout.
    #[error("{method} got no answer within {after:?}")]
    Timeout {
        /// The CDP method that was called.
        method: String,
        /// How long we waited.
        after: Duration,
    },
    /// The WebSocket to the browser is closed (browser exited or crashed).
    #[error("the connection to the browser was lost")]
    ConnectionLost,
    /// Could not open the WebSocket or read the endpoint.
    #[error("cannot connect to the browser at {endpoint}: {reason}")]
    Connect {
        /// The endpoint we tried.
        endpoint: String,
        /// Why it failed.
        reason: String,
    },
    /// No Chromium or Chrome found.
    #[error(
        "no Chromium or Chrome found (tried: {}). Install one (Debian/Ubuntu: `sudo apt-get install chromium`), or pass --browser PATH or set LUMO_BROWSER",
        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    BrowserNotFound {
        /// Every place that was looked at.
        tried: Vec<PathBuf>,
    },
    /// The browser process could not be started or exited during start.
    #[error("could not start the browser {path}: {reason}")]
    Launch {
        /// The executable.
        path: PathBuf,
        /// Why it failed, with the tail of its stderr when there was one.
        reason: String,
    },
    /// The browser sent something that is not CDP.
    #[error("malformed message from the browser: {0}")]
    Malformed(String),
}

/// The JSON-RPC error code a carrier (the bridge relay) answers with when it cannot
/// reach the browser in time: the browser is away, not the command wrong. lumo
/// reports such failures as `unavailable`.
pub const CARRIER_UNAVAILABLE: i64 = -32090;

/// The JSON-RPC error code a carrier answers with for a command that was running
/// when the carrier stopped (the bridge's service worker) and was not run again:
/// it may or may not have taken effect. The caller may run it again only if
/// running it twice ends the same as once.
pub const CARRIER_UNSURE: i64 = -32091;

/// The browser's code for a command whose parameters name nothing it has
/// (JSON-RPC "invalid params": e.g. `WebMCP.invokeTool` of a tool the frame no longer has).
pub const INVALID_PARAMS: i64 = -32602;

/// The browser's code for a command it cannot carry out in the state it is in
/// (JSON-RPC "server error": e.g. `Page.handleJavaScriptDialog` with no dialog showing).
pub const SERVER_ERROR: i64 = -32000;
/// The method of the event a carrier (the bridge relay) sends lumo when it is
/// connected to the browser again after a gap: events of the gap may be lost,
/// so lumo re-reads its tabs and their main frames.
pub const CARRIER_RESUMED: &str = "Lumo.carrierResumed";

//! The gate level: lumo-host's [`Gate`] over the built-in catalog of one
//! lumo-browser [`Session`], called without MCP (validation, policy, fencing
//! and shaping all apply).

use std::sync::Arc;

use lumo_browser::{BrowserSource, Session};
use lumo_host::{CallError, Catalog, Gate, GateOutput};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A session (headless Chromium, launched on the first call) behind a gate.
pub struct Gated {
    /// The browser session.
    pub session: Arc<Session>,
    /// The gate over its built-in catalog.
    pub gate: Gate,
}

impl Default for Gated {
    fn default() -> Self {
        Self::new()
    }
}

impl Gated {
    /// A gate with its defaults.
    pub fn new() -> Self {
        Self::with(|gate| gate)
    }

    /// A gate set up by `setup` (e.g. `|g| g.allow_consequential(true)`).
    pub fn with(setup: impl FnOnce(Gate) -> Gate) -> Self {
        let session = Arc::new(Session::new(BrowserSource::Launch(Default::default())));
        let gate = setup(Gate::new(Catalog::builtin(session.clone())));
        Self { session, gate }
    }

    /// Calls a tool; an unknown tool or a refused call is `Err`.
    pub async fn try_call(&self, name: &str, args: Value) -> Result<GateOutput, CallError> {
        self.gate.call(name, args, CancellationToken::new()).await
    }

    /// Calls a tool that must answer (successfully or with a tool error).
    pub async fn call(&self, name: &str, args: Value) -> GateOutput {
        self.try_call(name, args.clone()).await.unwrap_or_else(|e| panic!("{name} {args}: {e:?}"))
    }

    /// Calls a tool that must succeed.
    pub async fn ok(&self, name: &str, args: Value) -> GateOutput {
        let out = self.call(name, args.clone()).await;
        assert!(!out.is_error, "{name} {args} failed:\n{}", out.text);
        out
    }

    /// Closes the browser.
    pub async fn close(self) {
        self.session.shutdown().await;
    }
}

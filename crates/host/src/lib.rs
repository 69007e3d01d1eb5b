//! lumo-host: the MCP host.
//!
//! - [`Catalog`] holds every tool lumo exposes, from every source, in one
//!   deterministic order.
//! - [`Gate`] is the one road every call takes: argument validation against
//!   the tool's JSON Schema, a timeout, cancellation, and the shaping of the
//!   answer (byte budget, untrusted fencing of page content, error envelope).
//!   Policy, confirmation, rate limits and audit plug in here.
//! - [`Audit`] writes one hash-chained record per call to SQLite off the
//!   async path; [`AuditLog`] reads and verifies it (`lumo audit`).
//! - [`LumoServer`] speaks MCP (rmcp) on stdio or Streamable HTTP
//!   ([`serve_stdio`], [`serve_http`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! let session = Arc::new(lumo_browser::Session::new(lumo_browser::BrowserSource::Launch(Default::default())));
//! let gate = Arc::new(lumo_host::Gate::new(lumo_host::Catalog::builtin(session)));
//! lumo_host::serve_stdio(gate).await?;
//! # Ok(()) }
//! ```

mod audit;
pub mod bridge;
mod caller;
mod catalog;
mod fence;
mod front;
mod gate;
mod http;
mod policy;
pub mod providers;
mod sessions;
mod stdio;

pub use audit::{
    Audit, AuditLog, AuditStoreError, Break, BreakKind, Entry as AuditEntry, Filter as AuditFilter,
    Record as AuditRecord, Retention, Verified, default_path as default_audit_path, format_time, parse_time,
};
pub use caller::CallContext;
pub use catalog::Catalog;
pub use front::{LumoServer, serve_stdio};
pub use gate::{
    Call, CallError, ConfirmMode, ConfirmRequest, Confirmation, Confirmer, Gate, GateOutput, UNTRUSTED_KEY,
};
pub use http::{HttpError, HttpOptions, serve_http};
pub use policy::ToolGroup;
pub use sessions::{SessionLimits, Sessions, SessionsError};

//! The lumo provider contract as pure data and rules.
//!
//! lumo gathers tools from Chrome extensions ("providers") over two layers:
//! an L0 probe message that says whether a provider can be used, and L1,
//! standard MCP over a runtime port. This crate holds everything about that
//! contract that is not I/O — no sockets, no async, no clock:
//!
//! - **L0 wire types** ([`ProbeRequest`], [`parse_probe_response`]) and the
//!   fixed names ([`PROBE_CHANNEL`], [`MCP_PORT_NAME`], [`PROBE_TIMEOUT`]);
//! - **the ID predicate** [`is_extension_id`] (and [`ExtensionId`]), the
//!   only test of an extension ID anywhere in lumo;
//! - **the probe → host state machine** ([`HostState::from_probe`]);
//! - **names**: limits, character rules, `<namespace>_<tool>`
//!   ([`qualified_name`]) and first-come-first-served ownership
//!   ([`NamespaceRegistry`]);
//! - **results**: the error codes ([`ErrorCode`]) and the `{ok, …}`
//!   envelope ([`ToolFailure`], [`success`]);
//! - **audit records** that cannot carry call text ([`AuditRecord`],
//!   [`params_hash`]);
//! - **the sliding rate window** for writes ([`RateLimiter`]);
//! - **redaction**: which values never reach the model unasked ([`redact`]);
//! - **text bounds**: cutting answers on character boundaries, sizes in words ([`text`]).
//!
//! # Example
//!
//! A provider answers the probe; the host decides what to show and, once
//! connected, how its tools are named.
//!
//! ```
//! use lumo_protocol::{HostState, ProbeOutcome, parse_probe_response, qualified_name};
//!
//! let answer = br#"{
//!   "ok": true,
//!   "service": { "namespace": "userscripts", "name": "Lumo Userscripts", "version": "1.0.1" },
//!   "status": { "enabled": true, "authorized": false, "ready": true, "pendingApproval": true }
//! }"#;
//! let state = HostState::from_probe(ProbeOutcome::from(parse_probe_response(answer)));
//! assert_eq!(state.user_message(), "Waiting for your approval in the provider.");
//!
//! let name = qualified_name("userscripts", "run_script")?;
//! assert_eq!(name.as_str(), "userscripts_run_script");
//! # Ok::<(), lumo_protocol::NameError>(())
//! ```

mod audit;
mod id;
mod names;
mod probe;
mod rate;
pub mod redact;
mod result;
mod state;
pub mod text;

pub use crate::{
    audit::{AuditError, AuditOutcome, AuditRecord, ParamsHash, params_hash},
    id::{ExtensionId, InvalidExtensionId, is_extension_id},
    names::{
        MAX_NAMESPACE_LEN, MAX_QUALIFIED_LEN, MAX_TOOL_NAME_LEN, MAX_TOOLS_PER_PROVIDER, NameError, NamespaceRegistry,
        QualifiedName, RESERVED_NAMESPACES, ToolIssue, ToolList, is_model_function_name, is_reserved_namespace,
        qualified_name, split_qualified, validate_namespace, validate_tool_list, validate_tool_name,
    },
    probe::{
        ClientInfo, MCP_PORT_NAME, PROBE_CHANNEL, PROBE_TIMEOUT, PROBE_VERSION, ProbeParseError, ProbeReply,
        ProbeRequest, ProbeResponse, ProbeStatus, ProtocolFailure, ServiceInfo, parse_probe_response,
    },
    rate::{DEFAULT_MAX_CALLERS, DEFAULT_WINDOW, DEFAULT_WRITE_LIMIT, RateLimited, RateLimiter},
    result::{ErrorCode, ToolFailure, success},
    state::{HostState, ProbeErrorKind, ProbeOutcome},
};

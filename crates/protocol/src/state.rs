//! The probe → host state machine: the seed's table, row by row.
//!
//! Each probe ends in a [`ProbeOutcome`]; [`HostState::from_probe`] maps it
//! to either an error the user can act on or [`HostState::ReadyForL1`]. The
//! tool count is only known after L1 `tools/list`, so
//! [`HostState::with_tool_count`] finishes the last row ("connected, N
//! tools"). Rows are checked in the seed's order; the first match wins.
//!
//! | probe outcome                      | state / message                                        |
//! |------------------------------------|--------------------------------------------------------|
//! | `sendMessage` rejected             | The extension is not installed, or has no agent endpoint. |
//! | 1500 ms timeout                    | the raw error message                                  |
//! | `ok: false`                        | the protocol error message                             |
//! | *(not an L0 response at all)*      | Malformed probe response: … (not a seed row)           |
//! | missing `service` or `status`      | Incomplete probe response.                             |
//! | `enabled: false`                   | Agent access is turned off in the provider.            |
//! | `authorized: false` + pending      | Waiting for your approval in the provider.             |
//! | `authorized: false`                | The caller is not on the provider's allow list.        |
//! | `ready: false`                     | the provider's own reason                              |
//! | all passed                         | ready for L1, then "N tools available"                 |

use serde::Serialize;

use crate::probe::{PROBE_TIMEOUT, ProbeParseError, ProbeResponse, ServiceInfo};

/// How one probe ended, as seen by the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// `chrome.runtime.sendMessage` was rejected: no such extension, or no
    /// `onMessageExternal` listener.
    Rejected,
    /// No answer within [`PROBE_TIMEOUT`]; `message` is the raw error text.
    TimedOut {
        /// The raw error message, shown as is.
        message: String,
    },
    /// An answer came but is not an L0 response.
    Malformed(ProbeParseError),
    /// A well-formed L0 response.
    Response(ProbeResponse),
}

impl From<Result<ProbeResponse, ProbeParseError>> for ProbeOutcome {
    fn from(parsed: Result<ProbeResponse, ProbeParseError>) -> Self {
        parsed.map_or_else(Self::Malformed, Self::Response)
    }
}

/// Why a provider is in the error state. Each kind has a stable machine
/// [`code`](Self::code); serialized as that code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProbeErrorKind {
    /// `sendMessage` was rejected.
    NotInstalled,
    /// The probe timed out.
    Timeout,
    /// The provider answered `ok: false`.
    ProtocolError,
    /// The answer was not an L0 response (outside the seed table).
    MalformedResponse,
    /// `service` or `status` was missing.
    IncompleteResponse,
    /// `enabled: false`.
    Disabled,
    /// `authorized: false` with `pendingApproval: true`.
    PendingApproval,
    /// `authorized: false`.
    NotAuthorized,
    /// `ready: false`.
    NotReady,
}

impl ProbeErrorKind {
    /// The stable machine code, e.g. `"pending_approval"`.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            Self::NotInstalled => "not_installed",
            Self::Timeout => "timeout",
            Self::ProtocolError => "protocol_error",
            Self::MalformedResponse => "malformed_response",
            Self::IncompleteResponse => "incomplete_response",
            Self::Disabled => "disabled",
            Self::PendingApproval => "pending_approval",
            Self::NotAuthorized => "not_authorized",
            Self::NotReady => "not_ready",
        }
    }

    /// The user-visible message of this kind. For the kinds whose message
    /// comes from elsewhere (timeout, protocol error, not ready) this is the
    /// fallback used when none was given.
    #[must_use]
    pub fn default_message(self) -> &'static str {
        match self {
            Self::NotInstalled => "The extension is not installed, or has no agent endpoint.",
            Self::Timeout => "The provider did not answer the probe within 1500 ms.",
            Self::ProtocolError => "The provider reported a protocol error.",
            Self::MalformedResponse => "Malformed probe response.",
            Self::IncompleteResponse => "Incomplete probe response.",
            Self::Disabled => "Agent access is turned off in the provider.",
            Self::PendingApproval => "Waiting for your approval in the provider.",
            Self::NotAuthorized => "The caller is not on the provider's allow list.",
            Self::NotReady => "The provider is not ready.",
        }
    }

    fn error(self, given: Option<String>) -> HostState {
        let message = given.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| self.default_message().to_owned());
        HostState::Error { kind: self, message }
    }
}

/// What the host shows for one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum HostState {
    /// Something the user (or the provider) has to fix.
    Error {
        /// Which row of the table matched.
        kind: ProbeErrorKind,
        /// The user-visible English message.
        message: String,
    },
    /// The probe passed; L1 may be opened to list the tools.
    ReadyForL1 {
        /// The provider that answered (its namespace is claimed next).
        service: ServiceInfo,
    },
    /// L1 is up and its tools are listed.
    Connected {
        /// How many tools the provider exposes.
        tool_count: usize,
    },
}

impl HostState {
    /// Applies the seed's table to one probe outcome. Never returns
    /// [`HostState::Connected`]: see [`with_tool_count`](Self::with_tool_count).
    #[must_use]
    pub fn from_probe(outcome: ProbeOutcome) -> Self {
        use ProbeErrorKind as K;
        let reply = match outcome {
            ProbeOutcome::Rejected => return K::NotInstalled.error(None),
            ProbeOutcome::TimedOut { message } => return K::Timeout.error(Some(message)),
            ProbeOutcome::Response(ProbeResponse::Failure(f)) => {
                return K::ProtocolError.error(f.message);
            }
            ProbeOutcome::Malformed(e) => {
                return K::MalformedResponse.error(Some(format!("Malformed probe response: {e}.")));
            }
            ProbeOutcome::Response(ProbeResponse::Reply(reply)) => reply,
        };
        let (Some(service), Some(status)) = (reply.service, reply.status) else {
            return K::IncompleteResponse.error(None);
        };
        if !status.enabled {
            K::Disabled.error(None)
        } else if !status.authorized && status.pending_approval {
            K::PendingApproval.error(None)
        } else if !status.authorized {
            K::NotAuthorized.error(None)
        } else if !status.ready {
            K::NotReady.error(reply.reason)
        } else {
            Self::ReadyForL1 { service }
        }
    }

    /// The last row: once L1 `tools/list` answered, a provider that was
    /// [`ReadyForL1`](Self::ReadyForL1) becomes connected. Other states are
    /// returned unchanged.
    #[must_use]
    pub fn with_tool_count(self, tool_count: usize) -> Self {
        match self {
            Self::ReadyForL1 { .. } => Self::Connected { tool_count },
            other => other,
        }
    }

    /// The user-visible line for this state.
    #[must_use]
    pub fn user_message(&self) -> String {
        match self {
            Self::Error { message, .. } => message.clone(),
            Self::ReadyForL1 { .. } => "Connecting…".to_owned(),
            Self::Connected { tool_count: 1 } => "1 tool available".to_owned(),
            Self::Connected { tool_count } => format!("{tool_count} tools available"),
        }
    }
}

// The timeout fallback text quotes the limit; keep them in step.
const _: () = assert!(PROBE_TIMEOUT.as_millis() == 1500);

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::probe::parse_probe_response;

    fn probe(v: Value) -> HostState {
        HostState::from_probe(parse_probe_response(v.to_string().as_bytes()).into())
    }

    fn reply(enabled: bool, authorized: bool, ready: bool, pending: bool) -> Value {
        json!({
            "ok": true,
            "service": { "namespace": "userscripts", "name": "Lumo Userscripts", "version": "1.0.1" },
            "status": { "enabled": enabled, "authorized": authorized, "ready": ready, "pendingApproval": pending }
        })
    }

    #[track_caller]
    fn assert_error(state: HostState, kind: ProbeErrorKind, message: &str) {
        assert_eq!(state, HostState::Error { kind, message: message.to_owned() });
    }

    #[test]
    fn row_1_rejected_send_message() {
        assert_error(
            HostState::from_probe(ProbeOutcome::Rejected),
            ProbeErrorKind::NotInstalled,
            "The extension is not installed, or has no agent endpoint.",
        );
    }

    #[test]
    fn row_2_timeout_shows_the_raw_message() {
        let timed_out = |m: &str| HostState::from_probe(ProbeOutcome::TimedOut { message: m.to_owned() });
        assert_error(
            timed_out("Probe timed out after 1500ms"),
            ProbeErrorKind::Timeout,
            "Probe timed out after 1500ms",
        );
        assert_error(timed_out(""), ProbeErrorKind::Timeout, "The provider did not answer the probe within 1500 ms.");
    }

    #[test]
    fn row_3_ok_false_shows_the_protocol_error() {
        assert_error(
            probe(json!({"ok": false, "error": "unsupported probe version"})),
            ProbeErrorKind::ProtocolError,
            "unsupported probe version",
        );
        assert_error(
            probe(json!({"ok": false, "error": {"code": "E_VERSION", "message": "version 2 only"}})),
            ProbeErrorKind::ProtocolError,
            "version 2 only",
        );
        assert_error(
            probe(json!({"ok": false})),
            ProbeErrorKind::ProtocolError,
            "The provider reported a protocol error.",
        );
    }

    #[test]
    fn malformed_answer_is_its_own_error() {
        assert_error(
            probe(json!({"ok": "yes"})),
            ProbeErrorKind::MalformedResponse,
            "Malformed probe response: `ok` must be a boolean.",
        );
    }

    #[test]
    fn row_4_missing_service_or_status() {
        for key in ["service", "status"] {
            let mut v = reply(true, true, true, false);
            v.as_object_mut().expect("object").remove(key);
            assert_error(probe(v), ProbeErrorKind::IncompleteResponse, "Incomplete probe response.");
        }
    }

    #[test]
    fn row_5_disabled_wins_over_later_rows() {
        assert_error(
            probe(reply(false, false, false, true)),
            ProbeErrorKind::Disabled,
            "Agent access is turned off in the provider.",
        );
    }

    #[test]
    fn row_6_pending_approval() {
        assert_error(
            probe(reply(true, false, false, true)),
            ProbeErrorKind::PendingApproval,
            "Waiting for your approval in the provider.",
        );
    }

    #[test]
    fn row_7_not_authorized() {
        assert_error(
            probe(reply(true, false, true, false)),
            ProbeErrorKind::NotAuthorized,
            "The caller is not on the provider's allow list.",
        );
    }

    #[test]
    fn row_8_not_ready_uses_the_providers_reason() {
        let mut v = reply(true, true, false, false);
        assert_error(probe(v.clone()), ProbeErrorKind::NotReady, "The provider is not ready.");
        v["status"]["reason"] = json!("Userscript manager is still loading.");
        assert_error(probe(v.clone()), ProbeErrorKind::NotReady, "Userscript manager is still loading.");
        v["reason"] = json!("Grant the userScripts permission first.");
        assert_error(probe(v), ProbeErrorKind::NotReady, "Grant the userScripts permission first.");
    }

    #[test]
    fn row_9_all_passed_then_connected_with_count() {
        let state = probe(reply(true, true, true, false));
        let HostState::ReadyForL1 { service } = &state else {
            panic!("{state:?}");
        };
        assert_eq!(service.namespace, "userscripts");
        assert_eq!(state.clone().with_tool_count(7).user_message(), "7 tools available");
        assert_eq!(state.with_tool_count(1).user_message(), "1 tool available");
        // pendingApproval is irrelevant once authorized.
        assert!(matches!(probe(reply(true, true, true, true)), HostState::ReadyForL1 { .. }));
        // An error state stays an error whatever the count.
        let error = HostState::from_probe(ProbeOutcome::Rejected);
        assert_eq!(error.clone().with_tool_count(3), error);
    }

    #[test]
    fn codes_are_stable_and_match_serde() {
        use ProbeErrorKind as K;
        for kind in [
            K::NotInstalled,
            K::Timeout,
            K::ProtocolError,
            K::MalformedResponse,
            K::IncompleteResponse,
            K::Disabled,
            K::PendingApproval,
            K::NotAuthorized,
            K::NotReady,
        ] {
            assert_eq!(serde_json::to_value(kind).expect("serialize"), json!(kind.code()));
        }
        assert_eq!(
            serde_json::to_value(HostState::from_probe(ProbeOutcome::Rejected)).expect("serialize"),
            json!({
                "state": "error",
                "kind": "not_installed",
                "message": "The extension is not installed, or has no agent endpoint."
            })
        );
        assert_eq!(
            serde_json::to_value(HostState::Connected { tool_count: 2 }).expect("serialize"),
            json!({"state": "connected", "toolCount": 2})
        );
    }
}

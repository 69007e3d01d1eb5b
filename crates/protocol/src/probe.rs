//! L0 probe wire types: the one custom message of the provider contract.
//!
//! MCP's `initialize` cannot say "installed but switched off" or "not
//! authorized" without failing the handshake, so before opening the L1 port
//! (`lumo:mcp`) the host asks each provider over `chrome.runtime.sendMessage`
//! on the `lumo:probe` channel. Policy failures still answer `ok: true` with
//! a status; only protocol failures answer `ok: false`.
//!
//! Parsing is strict where the seed is (`ok` is a boolean; the fields of
//! `service` and `status` have fixed types) and tolerant of extra fields. An
//! absent (or `null`) `service` or `status` is *not* a parse error: it is the
//! "incomplete probe response" row of the host state machine
//! ([`crate::HostState`]), so the parsed form keeps them optional.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::id::ExtensionId;

/// The `channel` of every probe request.
pub const PROBE_CHANNEL: &str = "lumo:probe";
/// The name of the runtime port that carries L1 (standard MCP).
pub const MCP_PORT_NAME: &str = "lumo:mcp";
/// The probe `version` this crate speaks.
pub const PROBE_VERSION: u32 = 1;
/// How long the host waits for a probe answer before giving up.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// The prober, as named in `client` of a request. `name` is for display only:
/// providers authorize on `sender.id`, never on anything in the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// The probing extension's ID.
    pub id: ExtensionId,
    /// Display name, e.g. `"Lumo"`.
    pub name: String,
    /// Version of the prober.
    pub version: String,
}

/// An L0 request: `{channel: "lumo:probe", version: 1, id, client}`.
///
/// `channel` and `version` are fixed, so they are not fields: serializing
/// writes them, deserializing insists on them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RequestWire", try_from = "RequestWire")]
pub struct ProbeRequest {
    /// Correlation id chosen by the prober, e.g. `"probe-42"`.
    pub id: String,
    /// Who is probing.
    pub client: ClientInfo,
}

#[derive(Serialize, Deserialize)]
struct RequestWire {
    channel: String,
    version: u64,
    id: String,
    client: ClientInfo,
}

impl From<ProbeRequest> for RequestWire {
    fn from(r: ProbeRequest) -> Self {
        Self { channel: PROBE_CHANNEL.to_owned(), version: PROBE_VERSION.into(), id: r.id, client: r.client }
    }
}

impl TryFrom<RequestWire> for ProbeRequest {
    type Error = ProbeParseError;

    fn try_from(w: RequestWire) -> Result<Self, Self::Error> {
        if w.channel != PROBE_CHANNEL {
            return Err(invalid("channel", "\"lumo:probe\""));
        }
        if w.version != u64::from(PROBE_VERSION) {
            return Err(invalid("version", "1"));
        }
        Ok(Self { id: w.id, client: w.client })
    }
}

/// `service` of a reply: which provider answered. `name` is display only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceInfo {
    /// The namespace its tools will live under (`<namespace>_<tool>`).
    pub namespace: String,
    /// Display name.
    pub name: String,
    /// Provider version.
    pub version: String,
}

/// `status` of a reply: the provider's policy and capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeStatus {
    /// Agent access is switched on in the provider.
    pub enabled: bool,
    /// The caller (`sender.id`) is on the provider's allow list.
    pub authorized: bool,
    /// The provider can serve tools right now (capability, not permission).
    pub ready: bool,
    /// An approval request for the caller is waiting for the user. Optional
    /// on the wire (a provider without an approval flow may omit it).
    pub pending_approval: bool,
}

impl ProbeStatus {
    /// Whether L1 may be opened at all: the seed requires
    /// `enabled && authorized`. `ready` describes capability, not permission.
    #[must_use]
    pub fn permits_l1(&self) -> bool {
        self.enabled && self.authorized
    }
}

/// An `ok: true` reply. `service` and `status` are `None` when absent or
/// `null` (the state machine turns that into "incomplete").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbeReply {
    /// Which provider answered.
    pub service: Option<ServiceInfo>,
    /// Its policy and capability.
    pub status: Option<ProbeStatus>,
    /// Why the provider is not ready, in its own words. Read from the top
    /// level or from inside `status`; the top level wins.
    pub reason: Option<String>,
}

/// An `ok: false` reply: `error` as a string or as `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProtocolFailure {
    /// Provider-defined error code, when `error` was an object with one.
    pub code: Option<String>,
    /// The provider's message, when it gave one.
    pub message: Option<String>,
}

/// A parsed L0 response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResponse {
    /// `ok: true`: the provider speaks the protocol (policy may still refuse).
    Reply(ProbeReply),
    /// `ok: false`: a protocol failure.
    Failure(ProtocolFailure),
}

/// Why bytes are not an L0 response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeParseError {
    /// Not JSON at all.
    #[error("not JSON: {detail}")]
    Json {
        /// The JSON parser's description.
        detail: String,
    },
    /// A required field is absent.
    #[error("`{field}` is missing")]
    Missing {
        /// Dotted path of the field, e.g. `status.enabled`.
        field: &'static str,
    },
    /// A field has the wrong type or value.
    #[error("`{field}` must be {expected}")]
    Invalid {
        /// Dotted path of the field (`response` for the whole message).
        field: &'static str,
        /// What the seed requires there.
        expected: &'static str,
    },
}

fn invalid(field: &'static str, expected: &'static str) -> ProbeParseError {
    ProbeParseError::Invalid { field, expected }
}

/// Parses an L0 response from raw bytes. Never panics, whatever the input.
pub fn parse_probe_response(bytes: &[u8]) -> Result<ProbeResponse, ProbeParseError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| ProbeParseError::Json { detail: e.to_string() })?;
    ProbeResponse::from_value(&value)
}

/// Field readers over one JSON object. `path` is the dotted path reported in
/// errors; the key looked up is its last segment. `null` counts as absent.
struct Fields<'a>(&'a Map<String, Value>);

impl<'a> Fields<'a> {
    fn of(value: &'a Value, path: &'static str) -> Result<Self, ProbeParseError> {
        value.as_object().map(Self).ok_or(invalid(path, "a JSON object"))
    }

    fn get(&self, path: &'static str) -> Option<&'a Value> {
        let key = path.rsplit('.').next().unwrap_or(path);
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn opt<T>(
        &self,
        path: &'static str,
        expected: &'static str,
        read: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<Option<T>, ProbeParseError> {
        self.get(path).map(|v| read(v).ok_or(invalid(path, expected))).transpose()
    }

    fn opt_str(&self, path: &'static str) -> Result<Option<String>, ProbeParseError> {
        self.opt(path, "a string", |v| v.as_str().map(str::to_owned))
    }

    fn opt_bool(&self, path: &'static str) -> Result<Option<bool>, ProbeParseError> {
        self.opt(path, "a boolean", Value::as_bool)
    }

    fn str(&self, path: &'static str) -> Result<String, ProbeParseError> {
        self.opt_str(path)?.ok_or(ProbeParseError::Missing { field: path })
    }

    fn bool(&self, path: &'static str) -> Result<bool, ProbeParseError> {
        self.opt_bool(path)?.ok_or(ProbeParseError::Missing { field: path })
    }
}

impl ProbeResponse {
    /// Parses an L0 response from a JSON value. Never panics.
    pub fn from_value(value: &Value) -> Result<Self, ProbeParseError> {
        let top = Fields::of(value, "response")?;
        if top.bool("ok")? { Self::reply(&top).map(Self::Reply) } else { Self::failure(&top).map(Self::Failure) }
    }

    fn reply(top: &Fields<'_>) -> Result<ProbeReply, ProbeParseError> {
        let service = top
            .get("service")
            .map(|v| {
                let s = Fields::of(v, "service")?;
                Ok::<_, ProbeParseError>(ServiceInfo {
                    namespace: s.str("service.namespace")?,
                    name: s.str("service.name")?,
                    version: s.str("service.version")?,
                })
            })
            .transpose()?;
        let (status, status_reason) = match top.get("status") {
            None => (None, None),
            Some(v) => {
                let s = Fields::of(v, "status")?;
                let status = ProbeStatus {
                    enabled: s.bool("status.enabled")?,
                    authorized: s.bool("status.authorized")?,
                    ready: s.bool("status.ready")?,
                    pending_approval: s.opt_bool("status.pendingApproval")?.unwrap_or(false),
                };
                (Some(status), s.opt_str("status.reason")?)
            }
        };
        Ok(ProbeReply { service, status, reason: top.opt_str("reason")?.or(status_reason) })
    }

    fn failure(top: &Fields<'_>) -> Result<ProtocolFailure, ProbeParseError> {
        match top.get("error") {
            None => Ok(ProtocolFailure::default()),
            Some(Value::String(message)) => Ok(ProtocolFailure { code: None, message: Some(message.clone()) }),
            Some(v @ Value::Object(_)) => {
                let e = Fields::of(v, "error")?;
                Ok(ProtocolFailure { code: e.opt_str("error.code")?, message: e.opt_str("error.message")? })
            }
            Some(_) => Err(invalid("error", "a string or an object {code, message}")),
        }
    }

    /// The wire form, as a provider would send it (used by fakes and tests).
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        match self {
            Self::Reply(r) => {
                out.insert("ok".into(), true.into());
                if let Some(s) = &r.service {
                    out.insert("service".into(), serde_json::json!(s));
                }
                if let Some(s) = &r.status {
                    out.insert("status".into(), serde_json::json!(s));
                }
                if let Some(reason) = &r.reason {
                    out.insert("reason".into(), reason.as_str().into());
                }
            }
            Self::Failure(f) => {
                out.insert("ok".into(), false.into());
                let mut error = Map::new();
                for (key, v) in [("code", &f.code), ("message", &f.message)] {
                    if let Some(v) = v {
                        error.insert(key.into(), v.as_str().into());
                    }
                }
                out.insert("error".into(), error.into());
            }
        }
        out.into()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: Value) -> Result<ProbeResponse, ProbeParseError> {
        parse_probe_response(v.to_string().as_bytes())
    }

    fn seed_reply() -> Value {
        json!({
            "ok": true,
            "service": { "namespace": "userscripts", "name": "Lumo Userscripts", "version": "1.0.1" },
            "status": { "enabled": true, "authorized": false, "ready": true, "pendingApproval": true }
        })
    }

    #[test]
    fn constants_match_the_seed() {
        assert_eq!(PROBE_CHANNEL, "lumo:probe");
        assert_eq!(MCP_PORT_NAME, "lumo:mcp");
        assert_eq!(PROBE_VERSION, 1);
        assert_eq!(PROBE_TIMEOUT.as_millis(), 1500);
    }

    #[test]
    fn request_wire_format_is_the_seeds() {
        let request = ProbeRequest {
            id: "probe-42".into(),
            client: ClientInfo {
                id: ExtensionId::new("abcdefghijklmnopabcdefghijklmnop").expect("id"),
                name: "Lumo".into(),
                version: "1.0.19".into(),
            },
        };
        let wire = json!({
            "channel": "lumo:probe", "version": 1, "id": "probe-42",
            "client": { "id": "abcdefghijklmnopabcdefghijklmnop", "name": "Lumo", "version": "1.0.19" }
        });
        assert_eq!(serde_json::to_value(&request).expect("serialize"), wire);
        let back: ProbeRequest = serde_json::from_value(wire.clone()).expect("parse");
        assert_eq!(back, request);

        for (key, bad) in [("channel", json!("lumo:mcp")), ("version", json!(2))] {
            let mut w = wire.clone();
            w[key] = bad;
            assert!(serde_json::from_value::<ProbeRequest>(w).is_err(), "{key}");
        }
        let mut w = wire;
        w["client"]["id"] = json!("not-an-id");
        assert!(serde_json::from_value::<ProbeRequest>(w).is_err());
    }

    #[test]
    fn parses_the_seed_reply_and_round_trips() {
        let parsed = parse(seed_reply()).expect("seed reply parses");
        let ProbeResponse::Reply(reply) = &parsed else {
            panic!("expected a reply, got {parsed:?}");
        };
        assert_eq!(reply.service.as_ref().map(|s| s.namespace.as_str()), Some("userscripts"));
        let status = reply.status.expect("status");
        assert!(status.enabled && !status.authorized && status.ready && status.pending_approval);
        assert!(!status.permits_l1());
        assert_eq!(parsed.to_json(), seed_reply());
        assert_eq!(ProbeResponse::from_value(&parsed.to_json()), Ok(parsed));
    }

    #[test]
    fn tolerates_extra_fields_and_optional_ones() {
        let mut v = seed_reply();
        v["extra"] = json!({"anything": [1, 2]});
        v["service"]["icon"] = json!("x.png");
        v["status"].as_object_mut().expect("object").remove("pendingApproval");
        let Ok(ProbeResponse::Reply(r)) = parse(v) else {
            panic!("should parse");
        };
        assert!(!r.status.expect("status").pending_approval);
    }

    #[test]
    fn reason_top_level_wins_over_status_reason() {
        let mut v = seed_reply();
        v["status"]["reason"] = json!("inner");
        let reason = |v: Value| match parse(v) {
            Ok(ProbeResponse::Reply(r)) => r.reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason(v.clone()).as_deref(), Some("inner"));
        v["reason"] = json!("outer");
        assert_eq!(reason(v).as_deref(), Some("outer"));
    }

    #[test]
    fn absent_or_null_service_and_status_parse_as_none() {
        let Ok(ProbeResponse::Reply(r)) = parse(json!({"ok": true, "service": null})) else {
            panic!("should parse");
        };
        assert_eq!(r, ProbeReply::default());
    }

    #[test]
    fn error_forms() {
        let failure = |v| match parse(v) {
            Ok(ProbeResponse::Failure(f)) => f,
            other => panic!("{other:?}"),
        };
        assert_eq!(failure(json!({"ok": false, "error": "bad version"})).message.as_deref(), Some("bad version"));
        let f = failure(json!({"ok": false, "error": {"code": "E1", "message": "nope", "x": 1}}));
        assert_eq!((f.code.as_deref(), f.message.as_deref()), (Some("E1"), Some("nope")));
        assert_eq!(failure(json!({"ok": false})), ProtocolFailure::default());
        let f = ProbeResponse::Failure(f);
        assert_eq!(ProbeResponse::from_value(&f.to_json()), Ok(f));
    }

    #[test]
    fn strict_where_the_seed_is() {
        let cases = [
            (json!([]), invalid("response", "a JSON object")),
            (json!({}), ProbeParseError::Missing { field: "ok" }),
            (json!({"ok": "true"}), invalid("ok", "a boolean")),
            (json!({"ok": 1}), invalid("ok", "a boolean")),
            (json!({"ok": true, "service": "x"}), invalid("service", "a JSON object")),
            (
                json!({"ok": true, "service": {"namespace": 1, "name": "n", "version": "v"}}),
                invalid("service.namespace", "a string"),
            ),
            (
                json!({"ok": true, "service": {"name": "n", "version": "v"}}),
                ProbeParseError::Missing { field: "service.namespace" },
            ),
            (
                json!({"ok": true, "status": {"enabled": "yes", "authorized": true, "ready": true}}),
                invalid("status.enabled", "a boolean"),
            ),
            (
                json!({"ok": true, "status": {"enabled": true, "authorized": true}}),
                ProbeParseError::Missing { field: "status.ready" },
            ),
            (
                json!({"ok": true, "status": {"enabled": true, "authorized": true, "ready": true, "pendingApproval": 0}}),
                invalid("status.pendingApproval", "a boolean"),
            ),
            (json!({"ok": true, "reason": 5}), invalid("reason", "a string")),
            (json!({"ok": false, "error": 5}), invalid("error", "a string or an object {code, message}")),
            (json!({"ok": false, "error": {"message": []}}), invalid("error.message", "a string")),
        ];
        for (input, expected) in cases {
            assert_eq!(parse(input.clone()), Err(expected), "{input}");
        }
        assert!(matches!(parse_probe_response(b"{not json"), Err(ProbeParseError::Json { .. })));
        assert!(matches!(parse_probe_response(&[0xff, 0xfe]), Err(ProbeParseError::Json { .. })));
        let deep = "[".repeat(100_000);
        assert!(parse_probe_response(deep.as_bytes()).is_err());
    }
}

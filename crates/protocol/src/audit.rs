//! Audit records for writes: who called which tool, on what, with what
//! outcome — and never what they sent.
//!
//! The seed says each write records the tool name, the sender ID, the
//! outcome, the target UUID and a hash of the parameters, and that a
//! script's source never enters the audit log. [`AuditRecord`] enforces that
//! by shape: it has no message or argument field, the parameters only enter
//! as a SHA-256 of their RFC 8785 canonical JSON ([`params_hash`]), and every
//! text field is validated against a narrow alphabet (function name, caller
//! token, UUID), so no free text can ride in one of them either. Errors do
//! not echo the refused value, for the same reason.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::names::is_model_function_name;
use crate::result::{ErrorCode, ToolFailure};

/// Longest caller ID an audit record accepts.
const MAX_CALLER_LEN: usize = 128;

/// Why an audit record could not be built. The refused value is never
/// included: it might be the very text the log must not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The tool name is not a model function name.
    #[error("audit tool name must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidTool,
    /// The caller ID is not a short token.
    #[error("audit caller id must be 1 to 128 characters of [A-Za-z0-9._:@-]")]
    InvalidCaller,
    /// The target is not a UUID.
    #[error("audit target must be a UUID (8-4-4-4-12 hex digits)")]
    InvalidTarget,
    /// The parameters could not be put in canonical form.
    #[error("parameters cannot be canonicalized: {detail}")]
    Canonicalize {
        /// The canonicalizer's description.
        detail: String,
    },
}

/// Hex SHA-256 of a call's parameters in RFC 8785 canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ParamsHash(String);

impl ParamsHash {
    /// The 64 lowercase hex digits.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ParamsHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Hashes `params`: SHA-256 over its RFC 8785 (JCS) canonical form, so key
/// order and number spelling do not change the hash.
///
/// Canonicalizing a [`Value`] cannot fail in practice (its keys are unique
/// and its numbers finite); the error is kept rather than hidden.
pub fn params_hash(params: &Value) -> Result<ParamsHash, AuditError> {
    let canonical =
        serde_json_canonicalizer::to_vec(params).map_err(|e| AuditError::Canonicalize { detail: e.to_string() })?;
    Ok(ParamsHash(hex::encode(Sha256::digest(&canonical))))
}

/// How a call ended, serialized as `"ok"` or the [`ErrorCode`] string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditOutcome {
    /// The call succeeded.
    Ok,
    /// The call failed with this code.
    Error(ErrorCode),
}

impl AuditOutcome {
    /// `"ok"` or the error code.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error(code) => code.as_str(),
        }
    }
}

impl From<ErrorCode> for AuditOutcome {
    fn from(code: ErrorCode) -> Self {
        Self::Error(code)
    }
}

impl<T> From<&Result<T, ToolFailure>> for AuditOutcome {
    fn from(result: &Result<T, ToolFailure>) -> Self {
        result.as_ref().map_or_else(|f| f.code.into(), |_| Self::Ok)
    }
}

impl Serialize for AuditOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One audited write. Fields are private: the constructor validates them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    tool: String,
    caller: String,
    outcome: AuditOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    params_hash: ParamsHash,
    at_ms: u64,
}

impl AuditRecord {
    /// A record of `tool` called by `caller` (the sender ID: an extension ID
    /// or a client session ID) at `at_ms` (Unix milliseconds).
    pub fn new(
        tool: &str,
        caller: &str,
        outcome: AuditOutcome,
        params_hash: ParamsHash,
        at_ms: u64,
    ) -> Result<Self, AuditError> {
        if !is_model_function_name(tool) {
            return Err(AuditError::InvalidTool);
        }
        if !is_caller_id(caller) {
            return Err(AuditError::InvalidCaller);
        }
        Ok(Self { tool: tool.to_owned(), caller: caller.to_owned(), outcome, target: None, params_hash, at_ms })
    }

    /// Sets the target's UUID (a userscript, a tab, a saved item…).
    pub fn with_target(mut self, uuid: &str) -> Result<Self, AuditError> {
        if !is_uuid(uuid) {
            return Err(AuditError::InvalidTarget);
        }
        self.target = Some(uuid.to_owned());
        Ok(self)
    }

    /// The qualified tool name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The sender ID.
    #[must_use]
    pub fn caller(&self) -> &str {
        &self.caller
    }

    /// How the call ended.
    #[must_use]
    pub fn outcome(&self) -> AuditOutcome {
        self.outcome
    }

    /// The target's UUID, if the call had one.
    #[must_use]
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The parameters' hash.
    #[must_use]
    pub fn params_hash(&self) -> &ParamsHash {
        &self.params_hash
    }

    /// When, in Unix milliseconds.
    #[must_use]
    pub fn at_ms(&self) -> u64 {
        self.at_ms
    }
}

fn is_caller_id(s: &str) -> bool {
    (1..=MAX_CALLER_LEN).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:@-".contains(&b))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const UUID: &str = "123e4567-e89b-12d3-a456-426614174000";
    const CALLER: &str = "abcdefghijklmnopabcdefghijklmnop";

    fn hash(v: &Value) -> String {
        params_hash(v).expect("canonicalizable").to_string()
    }

    #[test]
    fn pinned_hash_vector() {
        // sha256(`{"a":[1,"x",null,true],"b":2}`), computed independently.
        assert_eq!(
            hash(&json!({"b": 2, "a": [1, "x", null, true]})),
            "b4d0b6988ed6f5860cb62b521c127d8303c8279eb1adb4093f1fc97e852c1f56"
        );
        assert_eq!(hash(&json!({})), "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    }

    #[test]
    fn canonical_form_ignores_key_order_and_number_spelling() {
        let a: Value = serde_json::from_str(r#"{"z":{"y":1,"x":2},"a":1.0}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"a":1,"z":{"x":2,"y":1}}"#).expect("json");
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&json!({"a": 2, "z": {"x": 2, "y": 1}})));
    }

    #[test]
    fn script_source_never_reaches_the_record() {
        let params = json!({"script": "secret source", "name": "demo"});
        let record = AuditRecord::new(
            "userscripts_install",
            CALLER,
            AuditOutcome::Ok,
            params_hash(&params).expect("hash"),
            1_700_000_000_000,
        )
        .and_then(|r| r.with_target(UUID))
        .expect("valid record");
        let logged = serde_json::to_string(&record).expect("serialize");
        assert!(!logged.contains("secret source"), "{logged}");
        assert_eq!(
            serde_json::to_value(&record).expect("serialize"),
            json!({
                "tool": "userscripts_install",
                "caller": CALLER,
                "outcome": "ok",
                "target": UUID,
                "paramsHash": hash(&params),
                "atMs": 1_700_000_000_000_u64,
            })
        );
    }

    #[test]
    fn text_fields_refuse_free_text() {
        let h = || params_hash(&json!({})).expect("hash");
        let new = |tool: &str, caller: &str| AuditRecord::new(tool, caller, AuditOutcome::Ok, h(), 0);
        assert_eq!(new("console.log('secret')", CALLER), Err(AuditError::InvalidTool));
        assert_eq!(new("page_click", "secret source"), Err(AuditError::InvalidCaller));
        assert_eq!(new("page_click", ""), Err(AuditError::InvalidCaller));
        assert_eq!(new("page_click", &"a".repeat(129)), Err(AuditError::InvalidCaller));
        let record = new("page_click", "session:42").expect("valid");
        assert_eq!(record.clone().with_target("secret source, 36 bytes long......."), Err(AuditError::InvalidTarget));
        assert_eq!(record.with_target(&UUID.to_uppercase()).map(|r| r.target().is_some()), Ok(true));
    }

    #[test]
    fn outcome_serializes_as_ok_or_code() {
        let failed: Result<(), _> = Err(ErrorCode::RateLimited.failure("slow down"));
        assert_eq!(AuditOutcome::from(&failed), AuditOutcome::Error(ErrorCode::RateLimited));
        assert_eq!(AuditOutcome::from(&Ok::<_, ToolFailure>(1)), AuditOutcome::Ok);
        assert_eq!(serde_json::to_value(AuditOutcome::Ok).expect("serialize"), json!("ok"));
        assert_eq!(
            serde_json::to_value(AuditOutcome::from(ErrorCode::StaleRef)).expect("serialize"),
            json!("stale_ref")
        );
    }
}

//! Tool results: the error codes and the `{ok, …}` envelope.
//!
//! A business failure is not a protocol error: it is a *successful* MCP call
//! with `isError: true` whose structured content is
//! `{ok: false, error: {code, message}}`, so the model reads why instead of
//! losing the turn. Success is `{ok: true, …data}`. Setting `isError` is the
//! MCP front's job; this module owns the codes and the JSON.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The closed set of tool error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The arguments do not fit the tool's schema or meaning.
    InvalidArguments,
    /// The page or document the call referred to is gone.
    StaleContext,
    /// An element ref from an older snapshot no longer resolves.
    StaleRef,
    /// Policy refuses the call.
    Forbidden,
    /// The call does not fit the current state (e.g. a dialog is open).
    InvalidState,
    /// The target does not exist.
    NotFound,
    /// The source is not reachable or not ready.
    Unavailable,
    /// The call was cancelled.
    Cancelled,
    /// The call took too long.
    Timeout,
    /// The caller's rate window is full.
    RateLimited,
    /// The operation ran and failed.
    OperationFailed,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [Self; 11] = [
        Self::InvalidArguments,
        Self::StaleContext,
        Self::StaleRef,
        Self::Forbidden,
        Self::InvalidState,
        Self::NotFound,
        Self::Unavailable,
        Self::Cancelled,
        Self::Timeout,
        Self::RateLimited,
        Self::OperationFailed,
    ];

    /// The wire form, e.g. `"stale_ref"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::StaleContext => "stale_context",
            Self::StaleRef => "stale_ref",
            Self::Forbidden => "forbidden",
            Self::InvalidState => "invalid_state",
            Self::NotFound => "not_found",
            Self::Unavailable => "unavailable",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::RateLimited => "rate_limited",
            Self::OperationFailed => "operation_failed",
        }
    }

    /// A failure with this code.
    #[must_use]
    pub fn failure(self, message: impl Into<String>) -> ToolFailure {
        ToolFailure::new(self, message)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A business failure: `{code, message}`, sent inside the error envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolFailure {
    /// Machine-readable reason.
    pub code: ErrorCode,
    /// What the model should read.
    pub message: String,
}

impl ToolFailure {
    /// A failure with `code` and `message`.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// The envelope `{ok: false, error: {code, message}}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "ok": false,
            "error": { "code": self.code.as_str(), "message": self.message },
        })
    }

    /// Reads an error envelope back; `None` if `value` is not one (a success,
    /// an unknown code, a missing message).
    #[must_use]
    pub fn from_json(value: &Value) -> Option<Self> {
        if value.get("ok")? != &Value::Bool(false) {
            return None;
        }
        Self::deserialize(value.get("error")?).ok()
    }
}

/// The success envelope `{ok: true, …data}`: an object's fields are spread
/// next to `ok` (an `ok` field of its own is overwritten); any other value
/// is put under `result`.
#[must_use]
pub fn success(data: Value) -> Value {
    let mut out = match data {
        Value::Object(fields) => fields,
        Value::Null => Map::new(),
        other => Map::from_iter([("result".to_owned(), other)]),
    };
    out.insert("ok".to_owned(), Value::Bool(true));
    out.into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn codes_are_exactly_the_eleven() {
        let names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "invalid_arguments",
                "stale_context",
                "stale_ref",
                "forbidden",
                "invalid_state",
                "not_found",
                "unavailable",
                "cancelled",
                "timeout",
                "rate_limited",
                "operation_failed",
            ]
        );
        for code in ErrorCode::ALL {
            let wire = serde_json::to_string(&code).expect("serialize");
            assert_eq!(wire, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<ErrorCode>(&wire).expect("parse"), code);
        }
        assert!(serde_json::from_str::<ErrorCode>("\"StaleRef\"").is_err());
    }

    #[test]
    fn failure_envelope_golden() {
        let failure = ErrorCode::StaleRef.failure("ref e12 is from an older snapshot");
        let golden: Value = serde_json::from_str(
            r#"{"ok":false,"error":{"code":"stale_ref","message":"ref e12 is from an older snapshot"}}"#,
        )
        .expect("golden JSON");
        assert_eq!(failure.to_json(), golden);
        assert_eq!(
            serde_json::to_string(&failure).expect("serialize"),
            r#"{"code":"stale_ref","message":"ref e12 is from an older snapshot"}"#
        );
        assert_eq!(failure.to_string(), "stale_ref: ref e12 is from an older snapshot");
        assert_eq!(ToolFailure::from_json(&golden), Some(failure));
    }

    #[test]
    fn from_json_refuses_non_failures() {
        for v in [
            json!({"ok": true, "error": {"code": "timeout", "message": "m"}}),
            json!({"ok": false, "error": {"code": "teapot", "message": "m"}}),
            json!({"ok": false, "error": {"code": "timeout"}}),
            json!({"ok": false}),
            json!("ok"),
        ] {
            assert_eq!(ToolFailure::from_json(&v), None, "{v}");
        }
    }

    #[test]
    fn success_envelope_golden() {
        assert_eq!(
            success(json!({"url": "https://example.com", "ok": "overwritten"})),
            json!({"ok": true, "url": "https://example.com"})
        );
        assert_eq!(success(json!([1, 2])), json!({"ok": true, "result": [1, 2]}));
        assert_eq!(success(Value::Null), json!({"ok": true}));
    }
}

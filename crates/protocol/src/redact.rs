//! What lumo keeps from the model: the one rule for credentials (issue 8,
//! item 5). An answer that would carry a credential shows that there was one
//! and how long it was, never its value, unless the caller asks for it.
//!
//! Today the rule covers HTTP header names; the gate reuses it for secrets the
//! user lists in configuration.

/// Header names that always carry credentials.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie", "set-cookie", "cookie2"];

/// Parts of a header name that mark it as a credential (`X-Api-Key`,
/// `X-Auth-Token`, `X-CSRF-Token`, `X-Amz-Security-Token`, `X-Session-Id`…).
const CREDENTIAL_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api-key",
    "api_key",
    "access-key",
    "private-key",
    "session",
    "credential",
    "signature",
    "x-auth",
    "-auth-",
];

/// Whether a header (any case) carries a credential and is redacted by default.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    CREDENTIAL_HEADERS.contains(&name.as_str())
        || CREDENTIAL_WORDS.iter().any(|w| name.contains(w))
        || name.ends_with("-key")
        || name.ends_with("_key")
}

/// What stands in for a secret value: that it was there, and its length.
pub fn redacted(value: &str) -> String {
    format!("[redacted, {} chars]", value.chars().count())
}

/// A header's value as lumo shows it: redacted when it is a credential and
/// `show_secrets` is off. Returns the text and whether it was redacted.
pub fn header_value(name: &str, value: &str, show_secrets: bool) -> (String, bool) {
    if !show_secrets && is_credential_header(name) { (redacted(value), true) } else { (value.to_string(), false) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_recognised_in_any_case() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "SET-COOKIE",
            "X-Api-Key",
            "x-apikey",
            "X-Auth-Token",
            "X-CSRF-Token",
            "x-amz-security-token",
            "X-Session-Id",
            "Ocp-Apim-Subscription-Key",
            "X-Client-Secret",
            "x-auth",
        ] {
            assert!(is_credential_header(name), "{name}");
        }
        for name in ["content-type", "accept", "user-agent", "referer", ":authority", "keep-alive", "cache-control"] {
            assert!(!is_credential_header(name), "{name}");
        }
    }

    #[test]
    fn a_redacted_value_says_how_long_it_was() {
        let (shown, hidden) = header_value("Authorization", "Bearer abc", false);
        assert_eq!(shown, "[redacted, 10 chars]");
        assert!(hidden);
        assert_eq!(header_value("Authorization", "Bearer abc", true), ("Bearer abc".to_string(), false));
        assert_eq!(header_value("accept", "*/*", false), ("*/*".to_string(), false));
    }
}

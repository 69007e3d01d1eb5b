//! What lumo keeps from the model: the one rule for credentials (issue 8,
//! item 5). An answer that would carry a credential shows that there was one
//! and how long it was, never its value, unless the caller asks for it.
//!
//! Header names ([`header_value`]); credential-shaped text in any answer
//! ([`Redactor::answer`]: `Authorization:` values, `Bearer` tokens, well-known
//! key formats, private key blocks, and the secrets the user listed); and, for
//! logs, also credential query parameters in URLs ([`Redactor::log`]). Only
//! credential-shaped text is touched: page text stays as the page wrote it.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

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

/// What stands in for a secret the user listed (`--redact`).
pub const REDACTED: &str = "[redacted]";

/// Well-known key formats: a match is a credential wherever it appears.
static KEY_FORMATS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",            // AWS access key id
        r"|\bgh[pousr]_[A-Za-z0-9]{30,}\b",           // GitHub tokens
        r"|\bgithub_pat_[A-Za-z0-9_]{30,}\b",         // GitHub fine-grained
        r"|\bglpat-[A-Za-z0-9_-]{20,}\b",             // GitLab
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}\b",        // Slack
        r"|\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b", // Stripe
        r"|\bAIza[0-9A-Za-z_-]{35}\b",                // Google API key
        r"|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b", // OpenAI, Anthropic
        r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", // JWT
    ))
    .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// `Authorization: [scheme] <credential>` (and `Proxy-Authorization`), as a header line or
/// a JSON/JS pair: the credential is one run without white space. Only it is hidden: a
/// snapshot writes a paragraph on one line, and the words after a credential in running
/// text ("… Bearer <token> In addition, …") are the page's.
static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?([a-z][a-z0-9-]*\s+)?)([^\s"',;}]{8,})"#)
        .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// `Bearer <token>` / `Basic <base64>` anywhere.
static AUTH_SCHEME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(Bearer|Basic|Token)\s+([A-Za-z0-9._~+/-]{12,}=*)")
        .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// `name=value` in a URL query or fragment (logs only: in answers a URL is page data).
static URL_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([?&#;]([A-Za-z0-9_.\-\[\]]+)=)([^&#\s\x22'<>]+)")
        .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// Redacts credentials from text lumo sends out: answers and logs.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Secrets the user listed; every occurrence becomes [`REDACTED`].
    extra: Vec<String>,
}

impl Redactor {
    /// A redactor that also hides `secrets` (empty ones are ignored; longest first,
    /// so a secret that contains another is hidden whole).
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut extra: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        extra.sort_by_key(|s| std::cmp::Reverse(s.len()));
        extra.dedup();
        Self { extra }
    }

    /// Whether the user listed secrets.
    pub fn has_extra(&self) -> bool {
        !self.extra.is_empty()
    }

    /// Only the secrets the user listed (for answers that show credentials on request).
    pub fn extra_only<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.extra {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
        out
    }

    /// Text for an answer: listed secrets and credential-shaped text hidden.
    pub fn answer<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.extra_only(text);
        let text = replace(text, &KEY_FORMATS, |c| redacted(&c[0]));
        let text = replace(text, &AUTH_HEADER, |c| {
            let value = &c[3];
            if value.starts_with("[redacted") || is_prose_word(c.get(2).map(|m| m.as_str()), value) {
                c[0].to_string()
            } else {
                format!("{}{}", &c[1], redacted(value))
            }
        });
        replace(text, &AUTH_SCHEME, |c| {
            if c[2].bytes().any(|b| b.is_ascii_digit()) {
                format!("{} {}", &c[1], redacted(&c[2]))
            } else {
                c[0].to_string()
            }
        })
    }

    /// A log line: as [`Redactor::answer`], and credential query parameters
    /// (`token=`, `api_key=`, `sig=`…) too.
    pub fn log<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = self.answer(text);
        replace(text, &URL_PARAM, |c| {
            let name = c[2].to_ascii_lowercase();
            if is_credential_param(&name) { format!("{}{}", &c[1], redacted(&c[3])) } else { c[0].to_string() }
        })
    }

    /// Every string in `value` (keys stay), redacted as [`Redactor::answer`] does;
    /// `only_extra` hides only the listed secrets.
    pub fn value(&self, value: &mut serde_json::Value, only_extra: bool) {
        match value {
            serde_json::Value::String(s) => {
                let shown = if only_extra { self.extra_only(s) } else { self.answer(s) };
                if let Cow::Owned(shown) = shown {
                    *s = shown;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.value(v, only_extra)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.value(v, only_extra)),
            _ => {}
        }
    }
}

/// Whether what follows `Authorization:` is a word of prose ("Authorization: required
/// for every call"), not a credential: letters only, short, and not after an auth
/// scheme (after `Bearer`, or at 16 letters and more, letters only is a token).
fn is_prose_word(scheme: Option<&str>, value: &str) -> bool {
    const SCHEMES: &[&str] = &["basic", "bearer", "digest", "negotiate", "ntlm", "token", "oauth", "apikey"];
    let after_scheme = scheme.is_some_and(|s| SCHEMES.contains(&s.trim().to_ascii_lowercase().as_str()));
    !after_scheme && value.len() < 16 && value.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Whether a URL parameter name carries a credential.
fn is_credential_param(name: &str) -> bool {
    is_credential_header(name) || matches!(name, "key" | "auth" | "code" | "sig" | "jwt" | "pwd" | "pass")
}

fn replace<'a>(text: Cow<'a, str>, pattern: &Regex, with: impl Fn(&Captures<'_>) -> String) -> Cow<'a, str> {
    if !pattern.is_match(&text) {
        return text;
    }
    Cow::Owned(pattern.replace_all(&text, |c: &Captures<'_>| with(c)).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_shaped_text_is_redacted_in_answers() {
        let r = Redactor::default();
        for (text, secret) in [
            ("Authorization: Bearer sk-live-SECRET-4f9a2c", "SECRET"),
            ("{\"authorization\":\"Basic dXNlcjpwYXNzd29yZA==\"}", "dXNlcjpw"),
            ("curl -H 'Bearer abcdef123456789xyz'", "abcdef123456789xyz"),
            ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdef"),
            ("sk-proj-abcdefghijklmnopqrstuvwxyz012345", "sk-proj-abc"),
            ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIzaSy"),
            (
                "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "eyJzdWIi",
            ),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"),
        ] {
            let shown = r.answer(text);
            assert!(!shown.contains(secret), "{text} → {shown}");
            assert!(shown.contains("[redacted"), "{text} → {shown}");
        }
    }

    #[test]
    fn only_the_credential_of_an_authorization_value_is_hidden() {
        let r = Redactor::default();
        // RFC prose as a snapshot writes it: one line per paragraph.
        let text = "using a header of the following form: Authorization: Bearer <access_token> In addition, providing";
        assert_eq!(
            r.answer(text),
            "using a header of the following form: Authorization: Bearer [redacted, 14 chars] In addition, providing"
        );
        let text = "Authorization: Bearer j2YnGtXjzzzHNjkd1CJxoQubA1o Content-Type: application/json";
        assert_eq!(r.answer(text), "Authorization: Bearer [redacted, 27 chars] Content-Type: application/json");
        assert_eq!(r.answer("Authorization: abcd1234efgh5678"), "Authorization: [redacted, 16 chars]");
        assert_eq!(r.answer("Authorization: required for every call"), "Authorization: required for every call");
        // Letters only is still a credential after a scheme, or when long.
        assert_eq!(r.answer("Authorization: Bearer abcdefghijklmnop"), "Authorization: Bearer [redacted, 16 chars]");
        assert_eq!(r.answer("Authorization: abcdefghijklmnopqrst"), "Authorization: [redacted, 20 chars]");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let r = Redactor::default();
        for text in [
            "Bearer tokens are sent in the Authorization header.",
            "authorization: [redacted, 27 chars]",
            "Basic usage: see the manual",
            "https://example.com/search?q=rust&page=2",
            "skip-this-paragraph",
            "the desk-top is tidy",
        ] {
            assert_eq!(r.answer(text), text);
        }
    }

    #[test]
    fn listed_secrets_are_redacted_everywhere() {
        let r = Redactor::new(["hunter2".to_string(), "hunter2-long".to_string(), String::new()]);
        assert_eq!(r.answer("pw hunter2-long and hunter2"), "pw [redacted] and [redacted]");
        let mut value = serde_json::json!({"a": ["x hunter2"], "hunter2": 1});
        r.value(&mut value, true);
        assert_eq!(value, serde_json::json!({"a": ["x [redacted]"], "hunter2": 1}));
    }

    #[test]
    fn logs_also_hide_credential_url_parameters() {
        let r = Redactor::default();
        let line = "GET http://127.0.0.1/cb?code=abc123&state=ok#access_token=TOKEN-1&x=1";
        let shown = r.log(line);
        assert!(!shown.contains("abc123") && !shown.contains("TOKEN-1"), "{shown}");
        assert!(shown.contains("state=ok") && shown.contains("x=1"), "{shown}");
        assert_eq!(r.answer(line), line, "answers keep URLs (page data, fenced)");
    }

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

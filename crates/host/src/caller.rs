//! Who is calling: the MCP client and its session, as the front knows them.
//!
//! The gate keys its write rate window on it and writes it into the audit
//! log. Both parts come from the client (its initialize info) or the
//! transport (the HTTP session id), so they are cut to a short, printable
//! form; an HTTP session id is stored only as a hash, since knowing it is
//! enough to speak in that session.

use serde_json::Value;

/// Longest client or session label kept.
const MAX_LABEL: usize = 96;

/// The caller of one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallContext {
    /// `name/version` of the MCP client, or `unknown`.
    pub client: String,
    /// `stdio`, `cli`, or `http:` and the first 16 hex digits of the session id's SHA-256.
    pub session: String,
}

impl CallContext {
    /// A caller named by the client's `name` and `version` in `session`.
    pub fn new(name: &str, version: &str, session: &str) -> Self {
        let client = match (name.trim(), version.trim()) {
            ("", _) => "unknown".to_string(),
            (name, "") => label(name),
            (name, version) => label(&format!("{name}/{version}")),
        };
        Self { client, session: label(session) }
    }

    /// A caller on Streamable HTTP: the session id is kept as a short hash.
    pub fn http(name: &str, version: &str, session_id: Option<&str>) -> Self {
        let session = match session_id {
            Some(id) => {
                let hash = lumo_protocol::params_hash(&Value::String(id.to_string()))
                    .map(|h| h.as_str()[..16].to_string())
                    .unwrap_or_default();
                format!("http:{hash}")
            }
            None => "http".to_string(),
        };
        Self::new(name, version, &session)
    }

    /// lumo's own command line (`lumo call`, `lumo webmcp call`).
    pub fn cli() -> Self {
        Self::new("lumo-cli", env!("CARGO_PKG_VERSION"), "cli")
    }

    /// The key of this caller's rate window.
    pub(crate) fn rate_key(&self) -> String {
        format!("{}\u{0}{}", self.client, self.session)
    }
}

/// Printable, at most [`MAX_LABEL`] characters.
fn label(text: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).take(MAX_LABEL).collect();
    if clean.is_empty() { "unknown".to_string() } else { clean }
}

/// The origin of `url` (`scheme://host:port`, no userinfo, path, query or
/// fragment) for the audit log; `scheme:` for URLs without a host (`data:`,
/// `about:`), whose rest may be page content.
pub(crate) fn origin(url: &str) -> String {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return match url.split_once(':') {
            Some((scheme, _))
                if !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
            {
                format!("{}:", scheme.to_ascii_lowercase())
            }
            _ => String::new(),
        };
    };
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let clean: String = host.chars().filter(|c| !c.is_control() && !c.is_whitespace()).take(MAX_LABEL).collect();
    format!("{}://{}", scheme.to_ascii_lowercase(), clean.to_ascii_lowercase())
}

/// `name` if it is a model function name, else a placeholder (tool names from a
/// client may be any text, and the log must not carry free text).
pub(crate) fn tool_label(name: &str) -> String {
    if lumo_protocol::is_model_function_name(name) { name.to_string() } else { "(invalid-name)".to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_drop_everything_but_scheme_host_port() {
        assert_eq!(origin("https://user:pw@Example.com:8443/a?q=secret#x"), "https://example.com:8443");
        assert_eq!(origin("data:text/html,<p>secret</p>"), "data:");
        assert_eq!(origin("about:blank"), "about:");
        assert_eq!(origin("http://127.0.0.1:5/x"), "http://127.0.0.1:5");
        assert_eq!(origin("not a url"), "");
    }

    #[test]
    fn labels_are_short_and_printable() {
        let c = CallContext::new("claude\ncode", "1.0", "stdio");
        assert_eq!(c.client, "claudecode/1.0");
        assert_eq!(CallContext::new("", "", "stdio").client, "unknown");
        assert_eq!(CallContext::new(&"x".repeat(500), "1", "s").client.len(), MAX_LABEL);
        let http = CallContext::http("c", "1", Some("5f0c-secret-session-id"));
        assert!(http.session.starts_with("http:") && !http.session.contains("secret"), "{}", http.session);
        assert_eq!(http.session.len(), 5 + 16);
        assert_eq!(tool_label("page_click"), "page_click");
        assert_eq!(tool_label("type my password"), "(invalid-name)");
    }
}

//! Origin patterns for the browse allow and block lists (`--browse-allow`,
//! `--browse-block`): parsing a pattern and matching it against a URL's
//! parsed origin.
//!
//! Matching is on the origin the URL parser produces, never on the text, so
//! lookalikes cannot pass: `http://127.0.0.1.evil` is the host `127.0.0.1.evil`,
//! `http://127.0.0.1@evil.com` is the host `evil.com` (userinfo is not the host),
//! `HTTP://LOCALHOST.` is `http://localhost` (case and a trailing dot fold),
//! internationalised names compare in their punycode form on both sides, and
//! IPv4 in any notation (`2130706433`, `0x7f.1`) is the address it names.

use std::fmt;

/// One pattern: `[scheme://]host[:port]`.
///
/// - scheme: `http`, `https` or `*`; omitted means http or https.
/// - host: a name, an IP (`[::1]` for IPv6), `*.example.com` (example.com and
///   every subdomain) or `*` (any host; `*` alone is every origin).
/// - port: a number or `*`; omitted means the scheme's default port (80, 443).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPattern {
    text: String,
    scheme: Option<String>,
    host: HostPattern,
    port: PortPattern,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Any,
    Exact(String),
    /// The domain and its subdomains.
    Subdomains(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortPattern {
    Any,
    Default,
    Exact(u16),
}

/// A pattern that cannot be parsed, with what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("origin pattern {pattern:?}: {why}")]
pub struct PatternError {
    pattern: String,
    why: String,
}

impl OriginPattern {
    /// Parses a pattern such as `https://*.example.com`, `http://localhost:8080`,
    /// `example.com` or `http://127.0.0.1:*`.
    pub fn parse(pattern: &str) -> Result<Self, PatternError> {
        let error = |why: &str| PatternError { pattern: pattern.to_string(), why: why.to_string() };
        let text = pattern.trim();
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest)) => (Some(scheme.to_ascii_lowercase()), rest),
            None => (None, text),
        };
        let scheme = match scheme.as_deref() {
            None | Some("*") => None,
            Some(s @ ("http" | "https")) => Some(s.to_string()),
            Some(_) => return Err(error("the scheme must be http, https or *")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#', '@']) {
            return Err(error("give an origin only (scheme, host, port): no path, query, fragment or user"));
        }
        // The port follows the last colon outside an IPv6 literal's brackets.
        let (host, port) = match rest.rfind(':') {
            Some(at) if !rest[at..].contains(']') => (&rest[..at], Some(&rest[at + 1..])),
            _ => (rest, None),
        };
        let port = match port {
            // `*` alone is every origin.
            None if host == "*" => PortPattern::Any,
            None => PortPattern::Default,
            Some("*") => PortPattern::Any,
            Some(p) => PortPattern::Exact(p.parse().map_err(|_| error("the port must be a number or *"))?),
        };
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(domain) = host.strip_prefix("*.") {
            let domain = normalize_host(domain).ok_or_else(|| error("the host after *. is not a valid name"))?;
            if domain.parse::<std::net::Ipv4Addr>().is_ok() || domain.starts_with('[') {
                return Err(error("*. goes before a domain name, not an IP address"));
            }
            HostPattern::Subdomains(domain)
        } else {
            if host.contains('*') {
                return Err(error("* may stand for the whole host or start it as *.example.com"));
            }
            HostPattern::Exact(normalize_host(host).ok_or_else(|| error("the host is not a valid name or address"))?)
        };
        Ok(Self { text: text.to_string(), scheme, host, port })
    }

    /// Whether the origin (`scheme`, normalized `host`, `port`) matches.
    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        let scheme_ok = match &self.scheme {
            Some(s) => s == scheme,
            None => matches!(scheme, "http" | "https"),
        };
        let port_ok = match self.port {
            PortPattern::Any => true,
            PortPattern::Exact(p) => p == port,
            PortPattern::Default => Some(port) == default_port(scheme),
        };
        let host_ok = match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => h == host,
            HostPattern::Subdomains(d) => {
                host == d
                    || (host.len() > d.len()
                        && host.ends_with(d.as_str())
                        && host[..host.len() - d.len()].ends_with('.'))
            }
        };
        scheme_ok && port_ok && host_ok
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// A host as the URL parser serializes it (lowercase, punycode, canonical IP),
/// without the trailing dot of a fully qualified name.
fn normalize_host(host: &str) -> Option<String> {
    if host.is_empty() {
        return None;
    }
    let parsed = url::Host::parse(host).ok()?;
    let text = parsed.to_string();
    let text = text.strip_suffix('.').unwrap_or(&text).to_string();
    (!text.is_empty()).then_some(text)
}

/// The origin of a web URL as (scheme, host, port), or `None` for URLs
/// without one (`about:`, `file:`, `data:`…). A `blob:` URL has its creator's.
pub(crate) fn origin_of(url: &url::Url) -> Option<(String, String, u16)> {
    match url.origin() {
        url::Origin::Tuple(scheme, host, port) => {
            let host = host.to_string();
            let host = host.strip_suffix('.').unwrap_or(&host).to_string();
            Some((scheme, host, port))
        }
        url::Origin::Opaque(_) => None,
    }
}

/// The allow and block lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginLists {
    /// When not empty, only these origins.
    pub allow: Vec<OriginPattern>,
    /// Never these (wins over `allow`).
    pub block: Vec<OriginPattern>,
}

impl OriginLists {
    /// Whether there is any list at all.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.block.is_empty()
    }

    /// Why `url`'s origin is refused, if it is. URLs without an origin are not
    /// decided here (the scheme rules are).
    pub(crate) fn refusal(&self, url: &url::Url) -> Option<String> {
        let (scheme, host, port) = origin_of(url)?;
        let origin = if Some(port) == default_port(&scheme) {
            format!("{scheme}://{host}")
        } else {
            format!("{scheme}://{host}:{port}")
        };
        if let Some(hit) = self.block.iter().find(|p| p.matches(&scheme, &host, port)) {
            return Some(format!("{origin} is blocked (--browse-block {hit})"));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(&scheme, &host, port)) {
            let list: Vec<String> = self.allow.iter().map(ToString::to_string).collect();
            return Some(format!("{origin} is not on the allow list (--browse-allow: {})", list.join(", ")));
        }
        None
    }
}

/// Origin lists that a policy re-read may replace while lumo runs: every clone
/// (each client's handle, the running browser's request check) sees the change.
#[derive(Debug, Clone, Default)]
pub struct SharedOrigins(std::sync::Arc<std::sync::RwLock<OriginLists>>);

impl SharedOrigins {
    /// Lists to start with.
    pub fn new(lists: OriginLists) -> Self {
        Self(std::sync::Arc::new(std::sync::RwLock::new(lists)))
    }

    /// The lists in force now.
    pub fn get(&self) -> OriginLists {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the lists for every holder.
    pub fn set(&self, lists: OriginLists) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = lists;
    }

    /// Whether there is any list at all.
    pub fn is_empty(&self) -> bool {
        self.0.read().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// See [`OriginLists::refusal`].
    pub(crate) fn refusal(&self, url: &url::Url) -> Option<String> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).refusal(url)
    }
}

impl PartialEq for SharedOrigins {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for SharedOrigins {}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(allow: &[&str], block: &[&str]) -> OriginLists {
        let parse = |list: &[&str]| list.iter().map(|p| OriginPattern::parse(p).expect(p)).collect();
        OriginLists { allow: parse(allow), block: parse(block) }
    }

    fn refused(lists: &OriginLists, url: &str) -> bool {
        lists.refusal(&url::Url::parse(url).expect(url)).is_some()
    }

    #[test]
    fn patterns_parse_and_bad_ones_say_why() {
        for good in [
            "https://*.example.com",
            "http://localhost:8080",
            "example.com",
            "http://127.0.0.1:*",
            "*",
            "http://[::1]:3000",
            "https://bücher.de/",
        ] {
            assert!(OriginPattern::parse(good).is_ok(), "{good}");
        }
        for (bad, says) in [
            ("ftp://example.com", "scheme"),
            ("https://example.com/path", "origin only"),
            ("https://user@example.com", "origin only"),
            ("https://example.com:http", "port"),
            ("https://ex*ample.com", "*"),
            ("*.127.0.0.1", "IP"),
            ("https://", "host"),
        ] {
            let e = OriginPattern::parse(bad).expect_err(bad);
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn exact_origins_match_scheme_host_and_port() {
        let l = lists(&["http://127.0.0.1:8080"], &[]);
        for ok in [
            "http://127.0.0.1:8080/a",
            "HTTP://127.0.0.1:8080",
            "http://user:pw@127.0.0.1:8080/",
            "http://2130706433:8080/",
        ] {
            assert!(!refused(&l, ok), "{ok}");
        }
        for no in [
            "http://127.0.0.1:8081/",
            "https://127.0.0.1:8080/",
            "http://localhost:8080/",
            "http://127.0.0.1.evil:8080/",
            "http://127.0.0.1:8080@evil.com/",
            "http://127.0.0.1%2eevil:8080/",
        ] {
            assert!(refused(&l, no), "{no}");
        }
    }

    #[test]
    fn lookalikes_of_a_blocked_host_are_blocked_and_others_are_not() {
        let l = lists(&[], &["http://localhost:*"]);
        for blocked in ["http://localhost:9/", "HTTP://LOCALHOST.:9/", "http://user@localhost:9/", "http://LocalHost/"]
        {
            assert!(refused(&l, blocked), "{blocked}");
        }
        for open in
            ["http://localhost.evil:9/", "http://localhost@127.0.0.1:9/", "https://localhost/", "http://notlocalhost/"]
        {
            assert!(!refused(&l, open), "{open}");
        }
    }

    #[test]
    fn subdomain_wildcards_need_a_dot_boundary() {
        let l = lists(&["https://*.example.com"], &[]);
        for ok in ["https://example.com/", "https://a.b.example.com/", "https://EXAMPLE.com./"] {
            assert!(!refused(&l, ok), "{ok}");
        }
        for no in [
            "https://badexample.com/",
            "https://example.com.evil/",
            "http://a.example.com/",
            "https://example.com:444/",
        ] {
            assert!(refused(&l, no), "{no}");
        }
    }

    #[test]
    fn idn_hosts_compare_as_punycode() {
        let l = lists(&[], &["https://bücher.de"]);
        assert!(refused(&l, "https://xn--bcher-kva.de/"));
        assert!(refused(&l, "https://BÜCHER.de/"));
        // A Cyrillic lookalike of example.com is another host.
        let l = lists(&["https://example.com"], &[]);
        assert!(refused(&l, "https://ехample.com/"));
    }

    #[test]
    fn block_wins_and_blob_urls_have_their_creators_origin() {
        let l = lists(&["*"], &["http://127.0.0.1:9"]);
        assert!(refused(&l, "http://127.0.0.1:9/x"));
        assert!(refused(&l, "blob:http://127.0.0.1:9/5a3c"));
        assert!(!refused(&l, "http://127.0.0.1:10/x"));
        assert!(!refused(&l, "about:blank"), "no origin: the scheme rules decide");
    }
}

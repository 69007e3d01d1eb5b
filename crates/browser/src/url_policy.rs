//! Which URLs lumo opens and which pages its tools may read: the one place
//! that decides by scheme (issue 8, item 2) and by origin (the browse allow
//! and block lists, issue 10 item 2: see [`crate::origin`]). Every check goes
//! through [`UrlPolicy`]: URLs the agent asks to open, every document request
//! the browser makes while lists are set (redirect hops and script navigations
//! included, intercepted with CDP `Fetch`), and the page a tab shows before a
//! tool reads it.
//!
//! By default lumo opens web pages only (`http:`, `https:`) and `about:blank`.
//! Local files need `--allow-file-urls`. Browser internals (`chrome:`,
//! `devtools:`, extensions…) reach the browser's own powers and the profile,
//! and `javascript:` / top-level `data:` URLs carry code or content the caller
//! made up: those are never opened, and a page that got there by redirect or
//! script is never read.

use lumo_protocol::{ErrorCode, ToolFailure};

use crate::origin::SharedOrigins;
use crate::tool::fail;

/// The flag that lets lumo open local files.
pub(crate) const FILE_FLAG: &str = "--allow-file-urls";

/// What the user allowed beyond web pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// `file:` URLs may be opened and read (`--allow-file-urls`).
    pub allow_file_urls: bool,
    /// Origins web pages may (allow) or may not (block) come from; shared by every
    /// clone, so a policy re-read reaches every handle (see [`crate::Session::set_origin_lists`]).
    pub origins: SharedOrigins,
}

/// Why a URL is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// Not a URL with a scheme at all (`example.com`, `localhost:8080`).
    NoScheme,
    /// A scheme lumo does not open.
    Scheme(String),
    /// An origin the lists refuse (the reason).
    Origin(String),
}

impl UrlPolicy {
    /// Checks a URL the agent asked to open; returns the URL to hand to the
    /// browser (parsed and re-serialised, so the browser opens what was checked).
    pub(crate) fn check_open(&self, url: &str) -> Result<String, ToolFailure> {
        match self.decide(url, false) {
            Ok(parsed) => Ok(parsed),
            Err(Refusal::NoScheme) => Err(fail(
                ErrorCode::InvalidArguments,
                format!(
                    "url: {url:?} is not an absolute URL; include the scheme, e.g. \"https://{}\"",
                    url.trim().trim_start_matches('/')
                ),
            )),
            Err(Refusal::Scheme(scheme)) => Err(self.forbidden(&scheme, "open")),
            Err(Refusal::Origin(why)) => Err(fail(ErrorCode::Forbidden, format!("Refused to open the URL: {why}."))),
        }
    }

    /// Whether a document request the browser is about to make (a navigation,
    /// a redirect hop, a frame) may go ahead; the reason when not.
    pub(crate) fn check_request(&self, url: &str) -> Result<(), String> {
        match self.decide(url, true) {
            Err(Refusal::Origin(why)) => Err(why),
            // Schemes are the browser's to refuse (it never loads chrome: from a page),
            // and a tab that lands on one is refused by check_page.
            _ => Ok(()),
        }
    }

    /// Whether the lists are set (then document requests are intercepted).
    pub(crate) fn intercepts(&self) -> bool {
        !self.origins.is_empty()
    }

    /// Refuses a page tool from a frame whose origin the lists refuse.
    pub fn check_origin(&self, origin: &str) -> Result<(), ToolFailure> {
        match self.decide(origin, true) {
            Err(Refusal::Origin(why)) => Err(fail(ErrorCode::Forbidden, format!("Refused: {why}."))),
            _ => Ok(()),
        }
    }

    /// Checks the URL a tab shows before a tool reads or acts on it: a page may
    /// have got somewhere lumo would not have opened (a redirect, a script, the
    /// user of an attached browser).
    pub(crate) fn check_page(&self, url: &str) -> Result<(), ToolFailure> {
        match self.decide(url, true) {
            Ok(_) => Ok(()),
            // A tab lumo cannot place (an empty URL while it starts) holds nothing to protect.
            Err(Refusal::NoScheme) => Ok(()),
            Err(Refusal::Scheme(scheme)) => Err(self.forbidden(&scheme, "read")),
            Err(Refusal::Origin(why)) => {
                Err(fail(ErrorCode::Forbidden, format!("This tab shows a page lumo does not read: {why}.")))
            }
        }
    }

    /// The decision. `landed`: the URL is where a page already is, not one to open.
    fn decide(&self, url: &str, landed: bool) -> Result<String, Refusal> {
        let parsed = match url::Url::parse(url) {
            Ok(parsed) => parsed,
            Err(_) => return Err(Refusal::NoScheme),
        };
        let scheme = parsed.scheme().to_string();
        // `localhost:8080/x` parses as the scheme "localhost": it is a host without a scheme.
        if looks_like_host_port(&parsed) {
            return Err(Refusal::NoScheme);
        }
        let allowed = match scheme.as_str() {
            "http" | "https" => parsed.host().is_some(),
            "about" => matches!(parsed.path(), "blank" | "srcdoc"),
            "file" => self.allow_file_urls,
            // Pages make these themselves (a blob of their own origin, Chromium's
            // error page after a failed load); lumo never opens them.
            "blob" | "chrome-error" => landed,
            _ => false,
        };
        if !allowed {
            return Err(Refusal::Scheme(scheme));
        }
        match self.origins.refusal(&parsed) {
            Some(why) => Err(Refusal::Origin(why)),
            None => Ok(parsed.to_string()),
        }
    }

    fn forbidden(&self, scheme: &str, verb: &str) -> ToolFailure {
        let why = match scheme {
            "file" => format!(
                "local files (file:) are off by default; start lumo with {FILE_FLAG} to {verb} them"
            ),
            "chrome" | "chrome-untrusted" | "devtools" | "chrome-extension" | "chrome-search" | "about" => format!(
                "{scheme}: pages are the browser's own internals, which lumo never opens or reads (there is no flag for them)"
            ),
            "view-source" => {
                "view-source: URLs are not opened; open the page itself, or read its source with network_request {id, body: true}"
                    .to_string()
            }
            "javascript" => {
                "javascript: URLs run code in the page; use devtools_evaluate to run JavaScript".to_string()
            }
            "data" => "top-level data: URLs are refused (Chromium refuses them from pages too); serve the page over http(s) instead".to_string(),
            other => format!("{other}: URLs are not opened; lumo opens http and https pages and about:blank"),
        };
        let what = if verb == "open" { "Refused to open the URL" } else { "This tab shows a page lumo does not read" };
        fail(ErrorCode::Forbidden, format!("{what}: {why}."))
    }
}

/// `localhost:8080` and `example.com:443/x` parse as a scheme and a path; with a
/// dot in the "scheme" or digits right after the colon it was a host and port.
fn looks_like_host_port(parsed: &url::Url) -> bool {
    parsed.cannot_be_a_base()
        && !matches!(parsed.scheme(), "about" | "javascript" | "data" | "blob" | "mailto")
        && (parsed.scheme().contains('.')
            || parsed.scheme() == "localhost"
            || parsed.path().split('/').next().is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

#[cfg(test)]
mod tests {
    use lumo_protocol::ErrorCode;

    use super::UrlPolicy;

    #[test]
    fn web_pages_and_blank_open() {
        let policy = UrlPolicy::default();
        for url in ["http://127.0.0.1:8080/a.html", "https://example.com/", "about:blank", "HTTPS://EXAMPLE.COM"] {
            assert!(policy.check_open(url).is_ok(), "{url}");
        }
    }

    #[test]
    fn internals_scripts_data_and_files_are_forbidden_by_default() {
        let policy = UrlPolicy::default();
        for (url, says) in [
            ("file:///etc/passwd", "--allow-file-urls"),
            ("FILE:///etc/passwd", "--allow-file-urls"),
            ("chrome://settings", "chrome:"),
            ("chrome-untrusted://terminal/", "chrome-untrusted:"),
            ("devtools://devtools/bundled/inspector.html", "devtools:"),
            ("chrome-extension://abcdefghijklmnopabcdefghijklmnop/x.html", "chrome-extension:"),
            ("view-source:http://example.com", "view-source:"),
            ("javascript:alert(1)", "javascript:"),
            (" java\tscript:alert(1)", "javascript:"),
            ("data:text/html,<h1>hi</h1>", "data:"),
            ("about:settings", "about:"),
            ("filesystem:http://example.com/temporary/x", "filesystem:"),
        ] {
            let failure = policy.check_open(url).expect_err(url);
            assert_eq!(failure.code, ErrorCode::Forbidden, "{url}");
            assert!(failure.message.contains(says), "{url}: {}", failure.message);
        }
    }

    #[test]
    fn the_file_flag_opens_files_and_nothing_else() {
        let policy = UrlPolicy { allow_file_urls: true, ..UrlPolicy::default() };
        assert!(policy.check_open("file:///etc/passwd").is_ok());
        assert!(policy.check_open("chrome://settings").is_err());
    }

    #[test]
    fn a_host_without_a_scheme_is_an_argument_error() {
        let policy = UrlPolicy::default();
        for url in ["example.com", "localhost:8080/x", "127.0.0.1:9000", "example.com:443/a", "/a.html"] {
            let failure = policy.check_open(url).expect_err(url);
            assert_eq!(failure.code, ErrorCode::InvalidArguments, "{url}: {}", failure.message);
            assert!(failure.message.contains("include the scheme"), "{url}");
        }
    }

    #[test]
    fn pages_may_be_read_where_they_may_land() {
        let policy = UrlPolicy::default();
        assert!(policy.check_page("blob:http://127.0.0.1:8080/5a3c").is_ok());
        assert!(policy.check_page("chrome-error://chromewebdata/").is_ok());
        assert!(policy.check_page("").is_ok());
        assert!(policy.check_page("file:///etc/passwd").is_err());
        assert!(policy.check_page("chrome://settings/").is_err());
        assert!(policy.check_page("data:text/html,x").is_err());
    }
}

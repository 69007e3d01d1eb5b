//! The one fixture server of lumo's tests: the files of `fixtures/` (or a
//! folder of it), inline routes a test registers, and a few built-in routes
//! for statuses, redirects and headers, on 127.0.0.1 with a port the OS picks.
//!
//! Built in, on every server (an inline route of the same path wins):
//! - `?delay=MS` on any request answers that much later (at most 10 s);
//! - `/redirect?to=URL` is a 302 to URL (percent-decoded; `file:` URLs too);
//! - `/status/NNN` answers with status NNN;
//! - `/set-cookie` sets `session=COOKIE-SECRET-31337` (HttpOnly) and answers JSON;
//! - `/echo` answers the request's body;
//! - `/` is `login.html` when the server serves `fixtures/` itself.
//!
//! Every answer closes its connection and carries `X-Fixture: yes`. Files are
//! sent `Cache-Control: no-store` unless [`FixtureBuilder::cache_control`] says
//! otherwise (the back/forward cache keeps only pages not sent `no-store`);
//! inline routes send none unless they add one (Chromium finishes loading an
//! unread, storable fetch body on its own, which the network tools rely on).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The repository's `fixtures/` folder.
pub fn fixtures_dir() -> PathBuf {
    repo_root().join("fixtures")
}

/// Copies folder `from` to `to`, recursively (e.g. an extension, to give the
/// copy a policy preset).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// What an inline route answers.
#[derive(Debug, Clone)]
pub struct Route {
    status: u16,
    mime: String,
    body: Vec<u8>,
    headers: Vec<(String, String)>,
    delay_ms: u64,
    echo: bool,
}

impl Route {
    /// A 200 with this content type and body.
    pub fn new(mime: &str, body: impl Into<Vec<u8>>) -> Self {
        Self { status: 200, mime: mime.to_string(), body: body.into(), headers: Vec::new(), delay_ms: 0, echo: false }
    }

    /// A 200 HTML page.
    pub fn html(body: impl Into<String>) -> Self {
        Self::new("text/html; charset=utf-8", body.into())
    }

    /// A 200 JSON answer.
    pub fn json(body: impl Into<String>) -> Self {
        Self::new("application/json", body.into())
    }

    /// A 302 to `location`.
    pub fn redirect(location: &str) -> Self {
        Self::new("text/plain", "moved").status(302).header("Location", location)
    }

    /// Answers the request's own body, with this content type.
    pub fn echo(mime: &str) -> Self {
        Self { echo: true, ..Self::new(mime, Vec::new()) }
    }

    /// Answers with `status` instead of 200.
    #[must_use]
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Adds a response header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Answers `ms` later (on top of any `?delay=`).
    #[must_use]
    pub fn delay(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }
}

/// How a [`FixtureServer`] is set up before it starts.
#[derive(Debug, Clone)]
pub struct FixtureBuilder {
    root: Option<PathBuf>,
    routes: Vec<(String, Route)>,
    cache_control: String,
}

impl FixtureBuilder {
    /// Serves `fixtures/<folder>` instead of `fixtures/` (e.g. `"webmcp"`).
    #[must_use]
    pub fn folder(mut self, folder: &str) -> Self {
        self.root = Some(fixtures_dir().join(folder));
        self
    }

    /// Serves no files: only inline and built-in routes.
    #[must_use]
    pub fn no_files(mut self) -> Self {
        self.root = None;
        self
    }

    /// Answers `path` (e.g. `/data.json`, query ignored) with `route`.
    #[must_use]
    pub fn route(mut self, path: &str, route: Route) -> Self {
        self.routes.push((path.to_string(), route));
        self
    }

    /// The `Cache-Control` of file answers (default `no-store`).
    #[must_use]
    pub fn cache_control(mut self, value: &str) -> Self {
        self.cache_control = value.to_string();
        self
    }

    /// Starts serving on a free port.
    pub async fn start(self) -> FixtureServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the fixture server");
        let port = listener.local_addr().expect("the fixture server's address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let setup = Arc::new(Setup { builder: self, seen: seen.clone() });
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let setup = setup.clone();
                tokio::spawn(async move {
                    // A client that goes away mid-answer is not the test's problem.
                    let _ = serve_one(stream, &setup).await;
                });
            }
        });
        FixtureServer { port, seen, task }
    }
}

struct Setup {
    builder: FixtureBuilder,
    seen: Arc<Mutex<Vec<String>>>,
}

/// A running fixture server; stops when dropped.
#[derive(Debug)]
pub struct FixtureServer {
    /// The port it listens on.
    pub port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl FixtureServer {
    /// Serves `fixtures/` (and the built-in routes) on a free port.
    pub async fn start() -> Self {
        Self::builder().start().await
    }

    /// A server to set up: `fixtures/` by default.
    pub fn builder() -> FixtureBuilder {
        FixtureBuilder { root: Some(fixtures_dir()), routes: Vec::new(), cache_control: "no-store".to_string() }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The URL of `path` (`login.html`, `/echo`, `redirect?to=…`) on 127.0.0.1.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base(), path.trim_start_matches('/'))
    }

    /// Every request so far, as `<Host header> <target>` (e.g. `localhost:4711 /a.html?x=1`).
    pub fn requests(&self) -> Vec<String> {
        self.seen.lock().map(|seen| seen.clone()).unwrap_or_default()
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// `%3A` → `:` and so on; a malformed escape stays as it is.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "json" => "application/json",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "txt" => "text/plain; charset=utf-8",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Fixture",
    }
}

async fn serve_one(mut stream: TcpStream, setup: &Setup) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if buf.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let header_value = |name: &str| {
        head.lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    };
    let length = header_value("content-length").and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
    while buf.len() < header_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let request_body = buf[header_end..].to_vec();
    let mut first = head.lines().next().unwrap_or_default().split_whitespace();
    let method = first.next().unwrap_or_default().to_string();
    let target = first.next().unwrap_or("/").to_string();
    if let Ok(mut seen) = setup.seen.lock() {
        seen.push(format!("{} {target}", header_value("host").unwrap_or_default().to_ascii_lowercase()));
    }
    let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
    let path = path.split('#').next().unwrap_or("/");
    let delay = query_value(query, "delay").and_then(|v| v.parse::<u64>().ok()).unwrap_or(0).min(10_000);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }

    let builder = &setup.builder;
    let route = builder.routes.iter().find(|(p, _)| p == path).map(|(_, r)| r.clone());
    let route = match route {
        Some(route) => Some(route),
        None => match path {
            "/redirect" => Some(Route::redirect(&percent_decode(query_value(query, "to").unwrap_or("about:blank")))),
            "/set-cookie" => {
                Some(Route::json("{\"ok\":true}").header("Set-Cookie", "session=COOKIE-SECRET-31337; Path=/; HttpOnly"))
            }
            "/echo" => Some(Route::echo("application/json")),
            _ => path
                .strip_prefix("/status/")
                .and_then(|code| code.parse::<u16>().ok())
                .filter(|code| (100..600).contains(code))
                .map(|code| Route::new("text/plain", format!("status {code}")).status(code)),
        },
    };
    let (status, mime, body, extra, cache) = match route {
        Some(route) => {
            if route.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(route.delay_ms)).await;
            }
            let body = if route.echo { request_body } else { route.body };
            (route.status, route.mime, body, route.headers, None)
        }
        None => {
            let name = path.trim_start_matches('/');
            let name = if name.is_empty() && builder.root.as_deref() == Some(fixtures_dir().as_path()) {
                "login.html"
            } else {
                name
            };
            let file = builder
                .root
                .as_ref()
                .filter(|_| !name.split('/').any(|part| part == ".." || part.is_empty()))
                .map(|root| root.join(name))
                .filter(|p| p.is_file());
            match (method.as_str(), file) {
                ("GET" | "POST" | "HEAD", Some(file)) => (
                    200,
                    content_type(&file).to_string(),
                    tokio::fs::read(&file).await?,
                    Vec::new(),
                    Some(builder.cache_control.clone()),
                ),
                ("GET" | "POST" | "HEAD", None) => {
                    (404, "text/plain".to_string(), b"not found".to_vec(), Vec::new(), Some("no-store".to_string()))
                }
                _ => (
                    405,
                    "text/plain".to_string(),
                    b"method not allowed".to_vec(),
                    Vec::new(),
                    Some("no-store".to_string()),
                ),
            }
        }
    };
    let mut header = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nX-Fixture: yes\r\nConnection: close\r\n",
        reason(status),
        body.len()
    );
    if let Some(cache) = cache {
        header.push_str(&format!("Cache-Control: {cache}\r\n"));
    }
    for (name, value) in extra {
        header.push_str(&format!("{name}: {value}\r\n"));
    }
    header.push_str("\r\n");
    stream.write_all(header.as_bytes()).await?;
    if method != "HEAD" {
        stream.write_all(&body).await?;
    }
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("file%3A%2F%2F%2Fetc%2Fpasswd"), "file:///etc/passwd");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}

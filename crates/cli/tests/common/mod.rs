//! Shared helpers of the `lumo` integration tests: a static server for the
//! pages in `fixtures/`, a `lumo serve` child process driven through rmcp's
//! client, and small readers for tool answers.

#![allow(dead_code)] // Each test file uses its own subset.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest any single tool call may take in a test before it counts as hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// The repository's `fixtures/` folder.
pub(crate) fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A tiny static file server for `fixtures/` on 127.0.0.1, port chosen by the OS.
///
/// Any request may carry `?delay=MS` (at most 10 s) to be answered that much
/// later. POST is answered like GET. Every response closes the connection.
pub(crate) struct FixtureServer {
    /// The port it listens on.
    pub(crate) port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl FixtureServer {
    /// Starts serving on a free port.
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the fixture server");
        let port = listener.local_addr().expect("the fixture server's address").port();
        let root = fixtures_dir();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let root = root.clone();
                tokio::spawn(async move {
                    // A client that goes away mid-answer is not the test's problem.
                    let _ = serve_one(stream, &root).await;
                });
            }
        });
        Self { port, task }
    }

    /// The URL of a fixture page on 127.0.0.1.
    pub(crate) fn url(&self, page: &str) -> String {
        format!("http://127.0.0.1:{}/{page}", self.port)
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_one(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
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
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let method = first.next().unwrap_or_default().to_string();
    let target = first.next().unwrap_or("/").to_string();
    let content_length = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    // Drain the body so the client sees a clean answer.
    let mut have = buf.len() - header_end;
    while have < content_length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        have += n;
    }
    let (path, query) = target.split_once('?').unwrap_or((target.as_str(), ""));
    let delay = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "delay")
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .unwrap_or(0)
        .min(10_000);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let name = path.trim_start_matches('/');
    let name = if name.is_empty() { "login.html" } else { name };
    let file =
        (!name.split('/').any(|part| part == ".." || part.is_empty())).then(|| root.join(name)).filter(|p| p.is_file());
    let (status, kind, body) = match (method.as_str(), file) {
        ("GET" | "POST" | "HEAD", Some(file)) => ("200 OK", content_type(&file), tokio::fs::read(&file).await?),
        ("GET" | "POST" | "HEAD", None) => ("404 Not Found", "text/plain", b"not found".to_vec()),
        _ => ("405 Method Not Allowed", "text/plain", b"method not allowed".to_vec()),
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes()).await?;
    if method != "HEAD" {
        stream.write_all(&body).await?;
    }
    stream.shutdown().await
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "json" => "application/json",
        "js" => "text/javascript",
        "css" => "text/css",
        "txt" => "text/plain; charset=utf-8",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

/// A `lumo serve` on stdio, as an rmcp client sees it.
pub(crate) struct Lumo {
    /// The client.
    pub(crate) client: RunningService<RoleClient, ()>,
    /// The process id of `lumo`.
    pub(crate) pid: u32,
}

impl Lumo {
    /// Starts `lumo serve` (headless Chromium, started on the first browser tool call).
    pub(crate) async fn start() -> Self {
        Self::start_with(&[], &[]).await
    }

    /// Calls a tool; a protocol error comes back as `Err`.
    pub(crate) async fn try_call(&self, name: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(args) = args else { panic!("tool arguments must be a JSON object, got {args}") };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        tokio::time::timeout(CALL_TIMEOUT, self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{name} did not answer within {CALL_TIMEOUT:?}"))
    }

    /// Calls a tool that must answer (successfully or with a tool error).
    pub(crate) async fn call(&self, name: &str, args: Value) -> Answer {
        let result = self.try_call(name, args.clone()).await.unwrap_or_else(|e| panic!("{name} {args}: {e}"));
        Answer { tool: name.to_string(), result }
    }

    /// Calls a tool that must succeed (`isError` not set).
    pub(crate) async fn ok(&self, name: &str, args: Value) -> Answer {
        let answer = self.call(name, args.clone()).await;
        assert!(!answer.is_error(), "{name} {args} failed:\n{}", answer.text());
        answer
    }

    /// Calls a tool that must fail with the error `code`.
    pub(crate) async fn fails(&self, name: &str, args: Value, code: &str) -> Answer {
        let answer = self.call(name, args.clone()).await;
        assert!(answer.is_error(), "{name} {args} should fail with {code}, got:\n{}", answer.text());
        assert_eq!(answer.error_code(), code, "{name} {args}:\n{}", answer.text());
        answer
    }

    /// The full tool list.
    pub(crate) async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list works")
    }

    /// Opens a URL and checks the answer names it.
    pub(crate) async fn open(&self, url: &str) -> Answer {
        let answer = self.ok("browser_navigate", serde_json::json!({"url": url})).await;
        assert_eq!(answer.structured()["url"], url, "{}", answer.text());
        answer
    }

    /// Takes a snapshot and returns its text.
    pub(crate) async fn snapshot(&self) -> String {
        self.ok("page_snapshot", serde_json::json!({})).await.text()
    }

    /// Runs a JavaScript expression in the page and returns the text of the answer's page part.
    pub(crate) async fn eval(&self, expression: &str) -> String {
        let answer = self.ok("devtools_evaluate", serde_json::json!({"expression": expression})).await;
        answer.page_text()
    }

    /// Ends the session and the process (and with it its browser).
    pub(crate) async fn stop(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.cancel()).await;
    }
}

/// One tool answer.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The tool that answered.
    pub(crate) tool: String,
    /// The MCP result.
    pub(crate) result: CallToolResult,
}

impl Answer {
    /// `isError`.
    pub(crate) fn is_error(&self) -> bool {
        self.result.is_error == Some(true)
    }

    /// Every text block, joined by newlines.
    pub(crate) fn text(&self) -> String {
        self.result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n")
    }

    /// The part of the text inside the untrusted fence (page content), without the fence lines.
    pub(crate) fn page_text(&self) -> String {
        let text = self.text();
        let Some(start) = text.find("<untrusted ") else { return String::new() };
        let after = &text[start..];
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        let end = body.rfind("\n</untrusted ").or_else(|| body.rfind("</untrusted ")).unwrap_or(body.len());
        body[..end].to_string()
    }

    /// `structuredContent` (or null).
    pub(crate) fn structured(&self) -> Value {
        self.result.structured_content.clone().unwrap_or(Value::Null)
    }

    /// `structuredContent.error.code` (or "").
    pub(crate) fn error_code(&self) -> String {
        self.structured()["error"]["code"].as_str().unwrap_or_default().to_string()
    }

    /// `structuredContent.error.message` (or "").
    pub(crate) fn error_message(&self) -> String {
        self.structured()["error"]["message"].as_str().unwrap_or_default().to_string()
    }

    /// The images: (mime type, base64 data).
    pub(crate) fn images(&self) -> Vec<(String, String)> {
        self.result.content.iter().filter_map(|c| c.as_image()).map(|i| (i.mime_type.clone(), i.data.clone())).collect()
    }

    /// The ref on the first line that contains `needle` (e.g. `button "Sign in"`).
    pub(crate) fn ref_of(&self, needle: &str) -> String {
        ref_in(&self.text(), needle)
    }
}

/// The ref (`e12`) on the first line of `text` containing `needle`, after `needle`.
pub(crate) fn ref_in(text: &str, needle: &str) -> String {
    try_ref_in(text, needle).unwrap_or_else(|| panic!("no line with a ref after {needle:?} in:\n{text}"))
}

/// Like [`ref_in`], `None` when there is none.
pub(crate) fn try_ref_in(text: &str, needle: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let at = line.find(needle)?;
        let rest = &line[at + needle.len()..];
        let open = rest.find("[e")?;
        let close = rest[open..].find(']')?;
        let r = &rest[open + 1..open + close];
        r[1..].bytes().all(|b| b.is_ascii_digit()).then(|| r.to_string())
    })
}

/// The pids of the children of `parent`, with their command lines.
pub(crate) fn children_of(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // The command name is in parentheses and may hold spaces: read after the last ')'.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        found.push((pid, cmdline));
    }
    found
}

/// The pid of the Chromium that `lumo` (pid `lumo`) started, once it runs.
pub(crate) fn browser_pid(lumo: u32) -> Option<u32> {
    children_of(lumo).into_iter().find(|(_, cmd)| cmd.contains("--remote-debugging-pipe")).map(|(pid, _)| pid)
}

/// A free TCP port on 127.0.0.1 (free when asked; good enough for tests).
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

impl Lumo {
    /// Starts `lumo serve` with extra arguments and environment variables
    /// (headless Chromium as in [`Lumo::start`]).
    pub(crate) async fn start_with(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Self {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
        command.arg("serve").args(args);
        for (key, value) in env {
            command.env(key, value);
        }
        if std::env::var_os("LUMO_BROWSER").is_none() && Path::new("/usr/lib/chromium/chromium").is_file() {
            command.env("LUMO_BROWSER", "/usr/lib/chromium/chromium");
        }
        let transport = TokioChildProcess::new(command).expect("spawn lumo serve");
        let pid = transport.id().expect("lumo has a pid");
        let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
            .await
            .expect("lumo answers initialize within 30 s")
            .expect("the MCP handshake with lumo works");
        Self { client, pid }
    }
}

/// An MCP `initialize` request body (protocol 2025-06-18), for raw HTTP and stdio tests.
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lumo-http-test","version":"0.0.0"}}}"#;

/// A `lumo serve --http 127.0.0.1:<port> ARGS` child spoken to with raw HTTP/1.1, killed on drop.
pub(crate) struct HttpLumo {
    child: tokio::process::Child,
    /// The port it listens on.
    pub(crate) port: u16,
}

impl HttpLumo {
    /// Starts lumo and waits until it listens.
    pub(crate) async fn start(extra: &[&str]) -> Self {
        let port = free_port();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(extra)
            .env_remove("LUMO_TOKEN")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn lumo serve --http");
        for _ in 0..100 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Self { child, port };
            }
            if let Some(status) = child.try_wait().expect("poll lumo") {
                panic!("lumo serve --http exited early with {status}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("lumo serve --http 127.0.0.1:{port} did not listen within 10 s");
    }

    /// Sends one raw HTTP/1.1 request to /mcp; returns the status (0 when there is no
    /// status line) and everything read until the answer ends, its `initialize` result is
    /// in, or 5 s pass (an SSE stream may stay open).
    pub(crate) async fn raw(&self, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).await.expect("connect to lumo");
        stream.write_all(request.as_bytes()).await.expect("send the request");
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => answer.extend_from_slice(&chunk[..n]),
                }
                if String::from_utf8_lossy(&answer).contains("\"serverInfo\"") {
                    break;
                }
            }
        })
        .await;
        let text = String::from_utf8_lossy(&answer).to_string();
        let status = text.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0);
        (status, text)
    }

    /// POSTs [`INITIALIZE`] with extra headers.
    pub(crate) async fn initialize(&self, headers: &[(&str, &str)]) -> (u16, String) {
        self.raw("POST", headers, INITIALIZE).await
    }
}

impl Drop for HttpLumo {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The value of header `name` in a raw HTTP answer.
pub(crate) fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

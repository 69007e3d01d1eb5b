//! The MCP-process level: the real `lumo` binary as a child process, driven by
//! rmcp's client over stdio ([`Lumo`]) or spoken to with raw HTTP/1.1
//! ([`HttpLumo`]), plus readers of the process tree (is Chromium running?).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::answer::Answer;

/// Longest any single tool call may take in a test before it counts as hung.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// The Chromium of this machine (PLATFORM-NOTES), used when `LUMO_BROWSER` is unset.
const CHROMIUM: &str = "/usr/lib/chromium/chromium";

/// The `lumo` binary cargo built next to this test binary (`target/<profile>/lumo`).
///
/// Cargo builds a package's binaries before its integration tests, so tests of
/// `lumo-cli` always find it; other crates' tests must not start `lumo`.
pub fn lumo_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/<test>-<hash> → target/<profile>/lumo
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join(format!("lumo{}", std::env::consts::EXE_SUFFIX)))
        .expect("the test binary lives in target/<profile>/deps");
    assert!(bin.is_file(), "{} is missing: run the test through `cargo test -p lumo-cli`", bin.display());
    bin
}

/// A command for the `lumo` binary, with this machine's Chromium unless `LUMO_BROWSER` is set.
pub fn lumo_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(lumo_bin());
    if std::env::var_os("LUMO_BROWSER").is_none() && Path::new(CHROMIUM).is_file() {
        command.env("LUMO_BROWSER", CHROMIUM);
    }
    command
}

/// A `lumo serve` on stdio, as an rmcp client sees it.
pub struct Lumo {
    /// The client.
    pub client: RunningService<RoleClient, ()>,
    /// The process id of `lumo`.
    pub pid: u32,
}

impl Lumo {
    /// Starts `lumo serve` (headless Chromium, started on the first browser tool call).
    pub async fn start() -> Self {
        Self::start_with(&[], &[]).await
    }

    /// Starts `lumo serve` with extra arguments and environment variables.
    pub async fn start_with(args: &[&str], env: &[(&str, &OsStr)]) -> Self {
        let mut command = lumo_command();
        command.arg("serve").args(args);
        for (key, value) in env {
            command.env(key, value);
        }
        let transport = TokioChildProcess::new(command).expect("spawn lumo serve");
        let pid = transport.id().expect("lumo has a pid");
        let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
            .await
            .expect("lumo answers initialize within 30 s")
            .expect("the MCP handshake with lumo works");
        Self { client, pid }
    }

    /// Calls a tool; a protocol error comes back as `Err`.
    pub async fn try_call(&self, name: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(args) = args else { panic!("tool arguments must be a JSON object, got {args}") };
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        tokio::time::timeout(CALL_TIMEOUT, self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{name} did not answer within {CALL_TIMEOUT:?}"))
    }

    /// Calls a tool that must answer (successfully or with a tool error).
    pub async fn call(&self, name: &str, args: Value) -> Answer {
        let result = self.try_call(name, args.clone()).await.unwrap_or_else(|e| panic!("{name} {args}: {e}"));
        Answer { tool: name.to_string(), result }
    }

    /// Calls a tool that must succeed (`isError` not set).
    pub async fn ok(&self, name: &str, args: Value) -> Answer {
        let answer = self.call(name, args.clone()).await;
        assert!(!answer.is_error(), "{name} {args} failed:\n{}", answer.text());
        answer
    }

    /// Calls a tool that must fail with the error `code`.
    pub async fn fails(&self, name: &str, args: Value, code: &str) -> Answer {
        let answer = self.call(name, args.clone()).await;
        assert!(answer.is_error(), "{name} {args} should fail with {code}, got:\n{}", answer.text());
        assert_eq!(answer.error_code(), code, "{name} {args}:\n{}", answer.text());
        answer
    }

    /// The full tool list.
    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list works")
    }

    /// Opens a URL and checks the answer names it.
    pub async fn open(&self, url: &str) -> Answer {
        let answer = self.ok("browser_navigate", serde_json::json!({"url": url})).await;
        assert_eq!(answer.structured()["url"], url, "{}", answer.text());
        answer
    }

    /// Takes a snapshot and returns its text.
    pub async fn snapshot(&self) -> String {
        self.ok("page_snapshot", serde_json::json!({})).await.text()
    }

    /// Runs a JavaScript expression in the page and returns the text of the answer's page part.
    pub async fn eval(&self, expression: &str) -> String {
        let answer = self.ok("devtools_evaluate", serde_json::json!({"expression": expression})).await;
        answer.page_text()
    }

    /// Ends the session and the process (and with it its browser).
    pub async fn stop(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.cancel()).await;
    }
}

/// The pids of the children of `parent`, with their command lines.
pub fn children_of(parent: u32) -> Vec<(u32, String)> {
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
pub fn browser_pid(lumo: u32) -> Option<u32> {
    children_of(lumo).into_iter().find(|(_, cmd)| cmd.contains("--remote-debugging-pipe")).map(|(pid, _)| pid)
}

/// A free TCP port on 127.0.0.1 (free when asked; good enough for tests).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// An MCP `initialize` request body (protocol 2025-06-18), for raw HTTP and stdio tests.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lumo-http-test","version":"0.0.0"}}}"#;

/// A `lumo serve --http 127.0.0.1:<port> ARGS` child spoken to with raw HTTP/1.1, killed on drop.
pub struct HttpLumo {
    child: tokio::process::Child,
    /// The port it listens on.
    pub port: u16,
}

impl HttpLumo {
    /// Starts lumo and waits until it listens.
    pub async fn start(extra: &[&str]) -> Self {
        let port = free_port();
        let mut child = tokio::process::Command::new(lumo_bin())
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
    pub async fn raw(&self, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
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
    pub async fn initialize(&self, headers: &[(&str, &str)]) -> (u16, String) {
        self.raw("POST", headers, INITIALIZE).await
    }
}

impl Drop for HttpLumo {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The value of header `name` in a raw HTTP answer.
pub fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// POSTs one JSON-RPC message to lumo's `/mcp` on `port` (in `session` when given,
/// protocol 2025-06-18); returns what was read of the answer, headers and body,
/// up to its result or error (or a 202), within 10 s.
pub async fn post_mcp(port: u16, session: Option<&str>, body: &str) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        request.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect to lumo");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&chunk[..n]),
            }
            let text = String::from_utf8_lossy(&answer);
            if text.contains("\"result\"") || text.contains("\"error\"") || text.starts_with("HTTP/1.1 202") {
                break;
            }
        }
    })
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Opens an MCP session over HTTP as client `client` (initialize, then
/// initialized); returns its session id.
pub async fn http_session(port: u16, client: &str) -> String {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"{client}","version":"1.0"}}}}}}"#
    );
    let answer = post_mcp(port, None, &init).await;
    let id = header(&answer, "mcp-session-id").unwrap_or_else(|| panic!("no session id in {answer}")).to_string();
    post_mcp(port, Some(&id), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    id
}

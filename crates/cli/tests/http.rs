//! `lumo serve --http`: Streamable HTTP at /mcp, checked with raw HTTP/1.1
//! requests over a TCP stream. Origin validation, the bearer token, and the
//! refusal to listen beyond loopback without a token. No browser is started:
//! `initialize` does not need one.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::free_port;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lumo-http-test","version":"0.0.0"}}}"#;

/// A `lumo serve --http 127.0.0.1:<port>` child, killed on drop.
struct HttpLumo {
    child: Child,
    port: u16,
}

impl HttpLumo {
    async fn start(extra: &[&str]) -> Self {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(extra)
            .env_remove("LUMO_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
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

    /// POSTs `initialize` to /mcp with extra header lines; returns the status and what was read of the answer.
    async fn initialize(&self, headers: &[(&str, &str)]) -> (u16, String) {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.port,
            INITIALIZE.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(INITIALIZE);
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).await.expect("connect to lumo");
        stream.write_all(request.as_bytes()).await.expect("send the request");
        // Read until the answer ends, or its JSON-RPC result is in, or 5 s pass (an SSE stream may stay open).
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => answer.extend_from_slice(&chunk[..n]),
                }
                let text = String::from_utf8_lossy(&answer);
                if text.contains("\"serverInfo\"") || (text.contains("\r\n\r\n") && !text.starts_with("HTTP/1.1 200")) {
                    break;
                }
            }
        })
        .await;
        let text = String::from_utf8_lossy(&answer).to_string();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("no HTTP status line in {text:?}"));
        (status, text)
    }
}

impl Drop for HttpLumo {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[tokio::test]
async fn foreign_origins_are_refused() {
    let lumo = HttpLumo::start(&[]).await;
    let (status, answer) = lumo.initialize(&[("Origin", "http://evil.example")]).await;
    assert_eq!(status, 403, "a foreign Origin must be refused:\n{answer}");
    assert!(!answer.contains("serverInfo"), "{answer}");

    let (status, answer) = lumo.initialize(&[]).await;
    assert_eq!(status, 200, "no Origin (not a browser) is allowed:\n{answer}");
    assert!(answer.contains("\"serverInfo\"") && answer.contains("\"lumo\""), "{answer}");

    // Even a loopback page is another origin unless allowed.
    let (status, answer) = lumo.initialize(&[("Origin", "http://127.0.0.1:5173")]).await;
    assert_eq!(status, 403, "{answer}");
}

#[tokio::test]
async fn allowed_origins_pass() {
    let lumo = HttpLumo::start(&["--allow-origin", "http://localhost:5173"]).await;
    let (status, answer) = lumo.initialize(&[("Origin", "http://localhost:5173")]).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = lumo.initialize(&[("Origin", "http://evil.example")]).await;
    assert_eq!(status, 403, "{answer}");
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let lumo = HttpLumo::start(&["--token", "s3cret-token"]).await;
    let (status, answer) = lumo.initialize(&[]).await;
    assert_eq!(status, 401, "no token:\n{answer}");
    let (status, answer) = lumo.initialize(&[("Authorization", "Bearer wrong")]).await;
    assert_eq!(status, 401, "a wrong token:\n{answer}");
    let (status, answer) = lumo.initialize(&[("Authorization", "Bearer s3cret-token")]).await;
    assert_eq!(status, 200, "the right token:\n{answer}");
}

#[tokio::test]
async fn beyond_loopback_without_a_token_refuses_to_start() {
    let port = free_port();
    let run = Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--http", &format!("0.0.0.0:{port}")])
        .env_remove("LUMO_TOKEN")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("lumo should refuse at once, not serve")
        .expect("run lumo");
    assert!(!output.status.success(), "lumo served on 0.0.0.0 without a token");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("token"), "the refusal should talk about the token: {stderr}");
    assert!(stderr.contains("--token") || stderr.contains("LUMO_TOKEN"), "and say how to give one: {stderr}");
}

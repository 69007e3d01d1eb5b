//! Issue 8 items 8, 16 and 18 with raw HTTP/1.1 and raw stdio: session ids
//! of 256 random bits, the session cap with a clear 503, idle expiry, the CORS
//! preflight of an allowed origin, and a `-32700` reply to a non-JSON stdin line.
//! (tests/ts covers the same with the TypeScript SDK.)

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{HttpLumo, INITIALIZE, header};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn http_session_ids_are_256_bit_and_sessions_are_capped() {
    let lumo = HttpLumo::start(&["--max-sessions", "2"]).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (status, answer) = lumo.raw("POST", &[], INITIALIZE).await;
        assert_eq!(status, 200, "{answer}");
        let id = header(&answer, "mcp-session-id").expect("a session id").to_string();
        assert!(id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()), "not 256 random bits in hex: {id}");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);

    // A third is refused with a clear error, not a hang or a 500.
    let (status, answer) = lumo.raw("POST", &[], INITIALIZE).await;
    assert_eq!(status, 503, "{answer}");
    assert!(answer.contains("too many open MCP sessions (2 of 2)") && answer.contains("--max-sessions"), "{answer}");

    // Closing one makes room.
    let (status, answer) =
        lumo.raw("DELETE", &[("Mcp-Session-Id", &ids[0]), ("MCP-Protocol-Version", "2025-06-18")], "").await;
    assert!((200..300).contains(&status), "DELETE: {answer}");
    let (status, answer) = lumo.raw("POST", &[], INITIALIZE).await;
    assert_eq!(status, 200, "room for a new session:\n{answer}");
}

#[tokio::test]
async fn idle_http_sessions_expire() {
    let lumo = HttpLumo::start(&["--max-sessions", "1", "--session-idle", "2"]).await;
    let (status, answer) = lumo.raw("POST", &[], INITIALIZE).await;
    assert_eq!(status, 200, "{answer}");
    let id = header(&answer, "mcp-session-id").expect("a session id").to_string();
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, answer) =
        lumo.raw("POST", &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", "2025-06-18")], list).await;
    assert_eq!(status, 404, "an idle session is closed:\n{answer}");
    let (status, answer) = lumo.raw("POST", &[], INITIALIZE).await;
    assert_eq!(status, 200, "its place is free again:\n{answer}");
}

#[tokio::test]
async fn cors_preflight_is_answered_only_for_the_allowed_origin() {
    let lumo = HttpLumo::start(&["--allow-origin", "http://localhost:5173"]).await;
    let preflight = |origin: &'static str| {
        [
            ("Origin", origin),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type, mcp-session-id"),
        ]
    };
    let (status, answer) = lumo.raw("OPTIONS", &preflight("http://localhost:5173"), "").await;
    assert_eq!(status, 204, "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), Some("http://localhost:5173"), "{answer}");
    let allowed = header(&answer, "access-control-allow-headers").unwrap_or_default();
    for h in ["mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization", "content-type"] {
        assert!(allowed.contains(h), "{h} missing: {answer}");
    }
    let (status, answer) = lumo.raw("OPTIONS", &preflight("http://evil.example"), "").await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(header(&answer, "access-control-allow-origin"), None, "{answer}");
    let (status, answer) = lumo.raw("POST", &[("Origin", "http://localhost:5173")], INITIALIZE).await;
    assert_eq!(status, 200, "{answer}");
    assert!(header(&answer, "access-control-expose-headers").is_some_and(|h| h.contains("mcp-session-id")), "{answer}");
}

#[tokio::test]
async fn non_json_stdin_line_gets_a_parse_error_reply() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lumo"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lumo serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = async || -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("lumo answers within 10 s")
            .expect("read stdout")
            .expect("a line");
        serde_json::from_str(&line).expect("lumo writes JSON")
    };
    stdin.write_all(b"this is not json\n").await.expect("write");
    let reply = next().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(reply["id"].is_null() && reply.as_object().is_some_and(|o| o.contains_key("id")), "{reply}");
    stdin.write_all(format!("{INITIALIZE}\n").as_bytes()).await.expect("write");
    let reply = next().await;
    assert_eq!(reply["result"]["serverInfo"]["name"], "lumo", "lumo keeps serving: {reply}");
}

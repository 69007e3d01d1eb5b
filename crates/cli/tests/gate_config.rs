//! The gate's settings in `lumo.toml` that are re-read while lumo runs
//! (origin lists, extra secrets, audit retention), `lumo webmcp` calls taking
//! the gate's road, and the write window kept per MCP session — each through a
//! real MCP client (rmcp over stdio, raw Streamable HTTP) and real Chromium.

mod common;

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{FixtureServer, HttpLumo, Lumo, http_session, post_mcp};
use serde_json::{Value, json};

/// A site on 127.0.0.1 that answers every request with a small page and counts them.
async fn counting_site() -> (Arc<AtomicUsize>, u16) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counted = counted.clone();
            // Each connection on its own: the browser may open a socket ahead of a
            // navigation and send nothing on it. Requests are counted, not connections.
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                if buf[..n].starts_with(b"GET ") {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                let body = "<title>counted</title>hello";
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
            });
        }
    });
    (hits, port)
}

/// Waits (at most 10 s) until `check` holds; lumo looks at the file twice a second.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not applied within 10 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn audit(db: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .arg("audit")
        .args(args)
        .arg("--audit-db")
        .arg(db)
        .output()
        .expect("run lumo audit")
}

fn export(db: &Path) -> Vec<Value> {
    let out = audit(db, &["export", "--jsonl"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_lists_and_secrets_in_lumo_toml_apply_from_the_next_call_after_an_edit() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("lumo.toml");
    std::fs::write(&config, "").expect("write lumo.toml");
    let lumo = Lumo::start_with(
        &["--config", config.to_str().expect("utf-8")],
        &[("LUMO_AUDIT_DB", dir.path().join("a.db").as_os_str())],
    )
    .await;
    let (hits, port) = counting_site().await;
    let blocked = format!("http://localhost:{port}/page");
    lumo.open(&server.url("login.html")).await;
    let secret = "'ZEBRA-' + 'PASS-' + 42";
    assert!(lumo.eval(secret).await.contains("ZEBRA-PASS-42"), "no secret listed yet");

    std::fs::write(&config, "redact = [\"ZEBRA-PASS-42\"]\n[browse]\nblock = [\"http://localhost:*\"]\n")
        .expect("edit lumo.toml");
    eventually("the secret", || async { !lumo.eval(secret).await.contains("ZEBRA-PASS-42") }).await;
    assert!(lumo.eval(secret).await.contains("[redacted]"));
    let refused = lumo.fails("browser_navigate", json!({"url": blocked}), "forbidden").await;
    assert!(refused.error_message().contains("localhost"), "{}", refused.error_message());
    // The tab opened before the edit is checked too: a script cannot take it there.
    lumo.call("devtools_evaluate", json!({"expression": format!("location.href = {}; 1", json!(blocked))})).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the script navigation reached the blocked origin");

    std::fs::write(&config, "").expect("clear lumo.toml");
    eventually("the lists cleared", || async {
        let answer = lumo.call("browser_navigate", json!({"url": blocked})).await;
        if answer.is_error() {
            eprintln!("still refused: {}", answer.text());
        }
        !answer.is_error()
    })
    .await;
    assert!(hits.load(Ordering::SeqCst) > 0, "the site is reachable once unblocked (the check above means something)");
    lumo.open(&server.url("login.html")).await;
    assert!(lumo.eval(secret).await.contains("ZEBRA-PASS-42"), "the secret is no longer listed");

    // A bad edit keeps the policy in force.
    std::fs::write(&config, "[browse]\nblock = [\"http://exa mple.com\"]\n").expect("break lumo.toml");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    lumo.ok("browser_navigate", json!({"url": server.url("login.html")})).await;
    lumo.stop().await;

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["call", "no_such_tool", "--config", config.to_str().expect("utf-8")])
        .env("LUMO_AUDIT_DB", dir.path().join("b.db"))
        .output()
        .expect("run lumo call");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(stderr.contains("browse.block") && stderr.contains("[scheme://]host[:port]"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_retention_in_lumo_toml_is_reread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (config, db) = (dir.path().join("lumo.toml"), dir.path().join("kept.db"));
    std::fs::write(&config, "").expect("write lumo.toml");
    let lumo =
        Lumo::start_with(&["--config", config.to_str().expect("utf-8")], &[("LUMO_AUDIT_DB", db.as_os_str())]).await;
    // Unknown tools need no browser and are audited.
    for _ in 0..5 {
        assert!(lumo.try_call("no_such_tool", json!({})).await.is_err());
    }
    eventually("five records", || async { db.is_file() && export(&db).len() == 5 }).await;
    std::fs::write(&config, "[audit]\nkeep = 2\n").expect("edit lumo.toml");
    eventually("keep = 2", || async { export(&db).len() == 2 }).await;
    assert!(lumo.try_call("no_such_tool", json!({})).await.is_err());
    lumo.stop().await;
    let ids: Vec<i64> = export(&db).iter().filter_map(|r| r["id"].as_i64()).collect();
    assert_eq!(ids, [4, 5, 6]);
    assert!(audit(&db, &["verify"]).status.success(), "what is kept still verifies");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lumo_webmcp_calls_take_the_gate_and_are_audited() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("webmcp.db");
    let url = server.url("webmcp/basic.html");
    let webmcp = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["webmcp", "call", &url, "echo", r#"{"text": "TYPED-IN-CLI"}"#])
            .args(extra)
            .env("LUMO_AUDIT_DB", &db)
            .env("LUMO_BROWSER", "/usr/lib/chromium/chromium")
            .output()
            .expect("run lumo webmcp call")
    };
    let ran = webmcp(&[]);
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(String::from_utf8_lossy(&ran.stdout).contains("TYPED-IN-CLI"));
    // Policy applies: page tools turned off.
    let refused = webmcp(&["--disable", "page_tools"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("turned off by policy"));

    let records = export(&db);
    let calls: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (r["tool"].as_str().unwrap_or(""), r["source"].as_str().unwrap_or(""), r["outcome"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("browser_navigate", "builtin", "ok"),
            ("webmcp_echo", "page", "ok"),
            ("browser_navigate", "builtin", "ok"),
            ("webmcp_echo", "page", "forbidden")
        ],
        "{records:?}"
    );
    assert!(records.iter().all(|r| r["session"] == "cli"), "{records:?}");
    assert_eq!(records[1]["target"], format!("http://127.0.0.1:{}", server.port));
    assert!(audit(&db, &["verify"]).status.success());
    let bytes = std::fs::read(&db).expect("read the log");
    assert!(!bytes.windows(12).any(|w| w == b"TYPED-IN-CLI"), "arguments stay out of the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_http_session_has_its_own_write_window() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lumo =
        HttpLumo::start(&["--rate-limit", "2/60s", "--audit-db", dir.path().join("rate.db").to_str().expect("utf-8")])
            .await;
    // Two sessions of the same client: the window is the session's, not the client's or lumo's.
    let (a, b) = (http_session(lumo.port, "same-client").await, http_session(lumo.port, "same-client").await);
    // A write that needs no browser: stopping a recording that never started.
    let write = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"page_record","arguments":{"action":"stop"}}}"#;
    for i in 1..=2 {
        let answer = post_mcp(lumo.port, Some(&a), write).await;
        assert!(answer.contains("invalid_state"), "write {i} of session A is admitted: {answer}");
    }
    let limited = post_mcp(lumo.port, Some(&a), write).await;
    assert!(limited.contains("rate_limited"), "the third write of A: {limited}");
    let other = post_mcp(lumo.port, Some(&b), write).await;
    assert!(other.contains("invalid_state") && !other.contains("rate_limited"), "session B still writes: {other}");
}

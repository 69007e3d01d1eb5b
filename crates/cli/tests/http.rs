//! `lumo serve --http`: Streamable HTTP at /mcp, checked with raw HTTP/1.1
//! requests over a TCP stream. Origin validation, the bearer token, and the
//! refusal to listen beyond loopback without a token. No browser is started:
//! `initialize` does not need one.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{HttpLumo, free_port};
use tokio::process::Command;

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

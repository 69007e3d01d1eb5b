//! Issue 10, item 4 (result shaping), through the rmcp client against the real
//! `lumo` binary and headless Chromium: structured content that holds page data
//! is marked `untrustedData: true`; credential-shaped text and the secrets the
//! user listed (`--redact`, `LUMO_REDACT`) never reach an answer or a log line.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{FixtureServer, Lumo};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const BEARER: &str = "abcd1234efgh5678ijkl";
const GITHUB: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const LISTED: &str = "hunter2-PLAIN-771";
const FROM_ENV: &str = "env-secret-5521";

/// Every string in an answer: its text and its structured content.
fn everything(answer: &common::Answer) -> String {
    format!("{}\n{}", answer.text(), answer.structured())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_page_data_is_marked_untrusted() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let opened = lumo.open(&server.url("form.html")).await;
    let structured = opened.structured();
    assert_eq!(
        structured["untrustedData"],
        json!(true),
        "browser_navigate's url and title are the page's: {structured}"
    );
    assert!(structured["title"].is_string(), "{structured}");
    let found = lumo.ok("page_find", json!({"text": "a"})).await.structured();
    assert_eq!(found["untrustedData"], json!(true), "page_find: {found}");
    let evaluated = lumo.ok("devtools_evaluate", json!({"expression": "({a: document.title})"})).await;
    if let Value::Object(map) = evaluated.structured() {
        assert_eq!(map.get("untrustedData"), Some(&json!(true)), "devtools_evaluate: {map:?}");
    }
    // lumo's own refusals are not page data.
    let refused = lumo.fails("browser_resize", json!({"width": 1, "height": 1}), "invalid_arguments").await;
    assert!(refused.structured().get("untrustedData").is_none(), "{}", refused.structured());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_a_page_shows_are_redacted_from_answers() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let opened = lumo.open(&server.url("shaping.html")).await;
    let answers = [
        ("browser_navigate", opened),
        ("page_snapshot", lumo.ok("page_snapshot", json!({})).await),
        ("devtools_console", lumo.ok("devtools_console", json!({})).await),
        ("devtools_evaluate", lumo.ok("devtools_evaluate", json!({"expression": "document.body.innerText"})).await),
        ("browser_tabs", lumo.ok("browser_tabs", json!({"action": "list"})).await),
    ];
    for (tool, answer) in &answers {
        let all = everything(answer);
        for secret in [AWS_KEY, BEARER, GITHUB] {
            assert!(!all.contains(secret), "{tool} shows {secret}:\n{all}");
        }
    }
    let snapshot = answers[1].1.text();
    assert!(snapshot.contains("[redacted, "), "the answer says a value was there: {snapshot}");
    assert!(snapshot.contains("Bearer tokens go in the Authorization header."), "prose stays: {snapshot}");
    assert!(answers[2].1.text().contains("leaked"), "the rest of the console line stays: {}", answers[2].1.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_secrets_are_redacted_from_answers_and_logs() {
    let server = FixtureServer::start().await;
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    command.args(["serve", "--redact", LISTED]).env("LUMO_REDACT", format!("{FROM_ENV},")).env("LUMO_LOG", "trace");
    if std::env::var_os("LUMO_BROWSER").is_none() && Path::new("/usr/lib/chromium/chromium").is_file() {
        command.env("LUMO_BROWSER", "/usr/lib/chromium/chromium");
    }
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::fs::File::create(log.path()).expect("open the log"))
        .spawn()
        .expect("spawn lumo serve");
    let pid = transport.id().expect("a pid");
    let client = tokio::time::timeout(Duration::from_secs(30), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("handshake");
    let lumo = Lumo { client, pid };
    let url = server.url("shaping.html?access_token=URLTOKEN-4417");
    let answers = [
        lumo.open(&url).await,
        lumo.ok("page_snapshot", json!({})).await,
        lumo.ok("devtools_console", json!({})).await,
        lumo.ok("devtools_evaluate", json!({"expression": format!("'{LISTED}' + ' and ' + '{FROM_ENV}'")})).await,
    ];
    for answer in &answers {
        let all = everything(answer);
        assert!(!all.contains(LISTED) && !all.contains(FROM_ENV), "{}: {all}", answer.tool);
    }
    assert!(answers[3].text().contains("[redacted] and [redacted]"), "{}", answers[3].text());
    assert!(answers[1].text().contains("The vault says [redacted] today."), "{}", answers[1].text());
    lumo.stop().await;
    let logged = std::fs::read_to_string(log.path()).expect("read the log");
    assert!(logged.contains("access_token="), "the URL was logged (else this proves nothing): {}", logged.len());
    for secret in ["URLTOKEN-4417", LISTED, FROM_ENV, BEARER, AWS_KEY] {
        assert!(!logged.contains(secret), "the log shows {secret}");
    }
}

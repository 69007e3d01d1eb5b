//! `lumo.toml`: tool groups turned off, the write rate window, flags over the
//! file, and the file re-read on change — through MCP against real Chromium,
//! with the refusals checked in the audit log.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, ref_in};
use serde_json::json;

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn export(db: &Path) -> Vec<serde_json::Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["audit", "export", "--jsonl", "--audit-db"])
        .arg(db)
        .output()
        .expect("run lumo audit export");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_file_turns_groups_off_limits_writes_and_is_reread_on_change() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("lumo.toml");
    let db = dir.path().join("audit.db");
    std::fs::write(&config, "rate_limit = \"3/60s\"\n[tools]\ndisable = [\"evaluate\"]\n").expect("write lumo.toml");
    let lumo =
        Lumo::start_with(&["--config", config.to_str().expect("utf-8")], &[("LUMO_AUDIT_DB", db.as_os_str())]).await;
    assert!(!names(&lumo.tools().await).contains(&"devtools_evaluate".to_string()), "a disabled tool is not listed");
    lumo.open(&server.url("login.html")).await;
    let off = lumo.fails("devtools_evaluate", json!({"expression": "1 + 1"}), "forbidden").await;
    assert!(off.error_message().contains("turned off by policy (tool group evaluate"), "{}", off.error_message());
    let checkbox = ref_in(&lumo.snapshot().await, "checkbox \"Remember me\"");
    lumo.ok("page_click", json!({"ref": checkbox})).await;
    lumo.ok("page_click", json!({"ref": checkbox})).await;
    lumo.fails("page_click", json!({"ref": checkbox}), "rate_limited").await;

    // Change the file: evaluate back on, no rate limit. Applied on a later call, no restart.
    std::fs::write(&config, "rate_limit = \"0\"\n[tools]\ndisable = []\n").expect("rewrite lumo.toml");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = lumo.call("devtools_evaluate", json!({"expression": "1 + 1"})).await;
        if !answer.is_error() {
            break;
        }
        assert_eq!(answer.error_code(), "forbidden", "{}", answer.text());
        assert!(Instant::now() < deadline, "the changed policy file was not applied");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(names(&lumo.tools().await).contains(&"devtools_evaluate".to_string()));
    lumo.ok("page_click", json!({"ref": checkbox})).await;

    // A broken file keeps the policy in force.
    std::fs::write(&config, "rate_limit = \"lots\"\n").expect("break lumo.toml");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for _ in 0..5 {
        lumo.ok("page_click", json!({"ref": checkbox})).await;
    }
    lumo.stop().await;

    let deadline = Instant::now() + Duration::from_secs(20);
    let records = loop {
        let records = export(&db);
        if records.iter().filter(|r| r["tool"] == "page_click").count() >= 9 || Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let refused = |tool: &str, outcome: &str| records.iter().any(|r| r["tool"] == tool && r["outcome"] == outcome);
    assert!(refused("devtools_evaluate", "forbidden"), "the disabled call is audited");
    assert!(refused("page_click", "rate_limited"), "the limited call is audited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_win_over_the_policy_file_and_a_bad_file_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("lumo.toml");
    std::fs::write(&config, "[tools]\ndisable = [\"evaluate\", \"uploads\"]\n").expect("write lumo.toml");
    let db = dir.path().join("audit.db");
    let env = [("LUMO_AUDIT_DB", db.as_os_str())];
    let path = config.to_str().expect("utf-8");
    let from_file = Lumo::start_with(&["--config", path], &env).await;
    let listed = names(&from_file.tools().await);
    assert!(!listed.contains(&"devtools_evaluate".into()) && !listed.contains(&"file_upload".into()));
    from_file.stop().await;
    let overridden = Lumo::start_with(&["--config", path, "--disable", "none"], &env).await;
    let listed = names(&overridden.tools().await);
    assert!(listed.contains(&"devtools_evaluate".into()) && listed.contains(&"file_upload".into()));
    overridden.stop().await;

    std::fs::write(&config, "[tools]\ndisable = [\"everything\"]\n").expect("write lumo.toml");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--config", path])
        .env("LUMO_AUDIT_DB", &db)
        .output()
        .expect("run lumo serve");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("\"everything\" is not a tool group; the groups are evaluate"), "{stderr}");
    std::fs::write(&config, "rate_limits = \"3/60s\"\n").expect("write lumo.toml");
    let typo = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--config", path])
        .env("LUMO_AUDIT_DB", &db)
        .output()
        .expect("run lumo serve");
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert!(stderr.contains("is not valid") && stderr.contains("rate_limits"), "{stderr}");
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListChanges(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for ListChanges {
    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turning_a_group_off_in_the_file_tells_clients_the_tool_list_changed() {
    use rmcp::ServiceExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("lumo.toml");
    std::fs::write(&config, "").expect("write lumo.toml");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    command.arg("serve").arg("--config").arg(&config).env("LUMO_AUDIT_DB", dir.path().join("a.db"));
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("spawn lumo serve");
    let changes = ListChanges::default();
    let client = changes.clone().serve(transport).await.expect("MCP handshake");
    let before = client.list_all_tools().await.expect("tools/list");
    assert!(before.iter().any(|t| t.name == "file_upload"));
    std::fs::write(&config, "[tools]\ndisable = [\"uploads\"]\n").expect("rewrite lumo.toml");
    let deadline = Instant::now() + Duration::from_secs(10);
    while changes.0.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "no notifications/tools/list_changed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = client.list_all_tools().await.expect("tools/list");
    assert!(!after.iter().any(|t| t.name == "file_upload"));
    let _ = client.cancel().await;
}

/// Opens the WebMCP fixture and lists its tools (listing binds them for this session).
async fn open_page_tools(lumo: &Lumo, server: &FixtureServer) {
    lumo.open(&server.url("webmcp/basic.html")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !names(&lumo.tools().await).contains(&"webmcp_buy".to_string()) {
        assert!(Instant::now() < deadline, "the page tools did not appear");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_mode_denies_or_allows_consequential_page_tools_and_is_reread() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("lumo.toml");
    let db = dir.path().join("audit.db");
    std::fs::write(&config, "confirm = \"deny\"\n").expect("write lumo.toml");
    // Deny wins even over --allow-consequential (which only covers clients that cannot ask).
    let lumo = Lumo::start_with(
        &["--config", config.to_str().expect("utf-8"), "--allow-consequential"],
        &[("LUMO_AUDIT_DB", db.as_os_str())],
    )
    .await;
    open_page_tools(&lumo, &server).await;
    let denied = lumo.fails("webmcp_buy", json!({"item": "lamp"}), "forbidden").await;
    assert!(denied.error_message().contains("policy denies them (confirm = deny"), "{}", denied.error_message());
    let bought = lumo.ok("devtools_evaluate", json!({"expression": "String(window.bought)"})).await;
    assert!(bought.text().contains("undefined"), "a denied tool did not run: {}", bought.text());

    // allow: runs without asking (this client has no elicitation), from a later call on.
    std::fs::write(&config, "confirm = \"allow\"\n").expect("rewrite lumo.toml");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = lumo.call("webmcp_buy", json!({"item": "lamp"})).await;
        if !answer.is_error() {
            break;
        }
        assert_eq!(answer.error_code(), "forbidden", "{}", answer.text());
        assert!(Instant::now() < deadline, "the changed confirm mode was not applied");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let bought = lumo.ok("devtools_evaluate", json!({"expression": "String(window.bought)"})).await;
    assert!(bought.text().contains("lamp"), "the allowed tool ran: {}", bought.text());

    // A bad value is refused at start with what to write.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--confirm", "maybe"])
        .output()
        .expect("run lumo serve");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("write ask, allow or deny"));
}

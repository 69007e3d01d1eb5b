//! The audit log and the write rate window, end to end: a real `lumo serve`
//! driven through rmcp against headless Chromium, then `lumo audit` on the
//! SQLite file it wrote — verified intact, then edited, deleted from and
//! reordered with SQLite directly, and searched for the secrets it must not hold.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, copy_dir, http_session, post_mcp, ref_in};
use serde_json::{Value, json};

const TYPED: &str = "TYPED-SECRET-7f3a";
const SOURCE: &str = "EVAL-SOURCE-9c1e";

fn audit(db: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .arg("audit")
        .args(args)
        .arg("--audit-db")
        .arg(db)
        .output()
        .expect("run lumo audit")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every record, via `lumo audit export --jsonl`.
fn export(db: &Path, filters: &[&str]) -> Vec<Value> {
    let mut args = vec!["export", "--jsonl"];
    args.extend(filters);
    let out = audit(db, &args);
    assert!(out.status.success(), "export failed: {}", text(&out.stderr));
    text(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// Waits until the log holds `n` records (the writer thread lags the answers by a moment).
async fn wait_for_records(db: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let have = if db.is_file() { export(db, &[]).len() } else { 0 };
        if have >= n {
            return;
        }
        assert!(Instant::now() < deadline, "the log holds {have} records, expected {n}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A copy of the log (WAL folded in) to tamper with.
fn copy_of(db: &Path, name: &str) -> PathBuf {
    let copy = db.with_file_name(name);
    let conn = rusqlite::Connection::open(db).expect("open the log");
    conn.execute("VACUUM INTO ?1", [copy.to_str().expect("utf-8 path")]).expect("copy the log");
    copy
}

fn tampered(db: &Path, name: &str, sql: &str) -> Output {
    let copy = copy_of(db, name);
    rusqlite::Connection::open(&copy).expect("open the copy").execute_batch(sql).expect("tamper");
    audit(&copy, &["verify"])
}

fn assert_broken_at(out: &Output, id: i64, what: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: verify should fail, said:\n{}{stderr}", text(&out.stdout));
    assert!(stderr.contains(&format!("BROKEN at record {id}:")), "{what}: {stderr}");
}

/// Every file of the log (main file, WAL, shared memory), as bytes.
fn log_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the data dir").flatten() {
        if entry.file_name().to_string_lossy().starts_with("audit.db") {
            all.extend(std::fs::read(entry.path()).expect("read a log file"));
        }
    }
    all
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_call_session_over_all_sources_verifies_and_every_tampering_is_named() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().to_path_buf();
    // The third source: the reference provider, with a policy preset that authorizes lumo's bridge.
    let provider = dir.path().join("userscripts");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension/userscripts"), &provider);
    assert!(provider.join("kit").is_dir(), "extension/userscripts has no kit/: run scripts/setup --providers");
    std::fs::write(provider.join("lumo-policy.preset.json"), r#"{"allowlist": ["hjfgijdboblbpgomjhgpbhfiobiokomm"]}"#)
        .expect("preset");
    let load = format!("--load-extension={}", provider.display());
    // The default place: $LUMO_DATA_DIR/audit.db. No rate window here: this is about the log.
    let lumo = Lumo::start_with(&["--rate-limit", "0", &load], &[("LUMO_DATA_DIR", data_dir.as_os_str())]).await;
    let db = data_dir.join("audit.db");
    let started = Instant::now();
    let mut calls = 0usize;

    lumo.open(&server.url("login.html")).await;
    let username = ref_in(&lumo.snapshot().await, "textbox \"Username\"");
    calls += 2;
    // The provider's tools appear once its session is up (ext_providers is a call too).
    let deadline = Instant::now() + Duration::from_secs(30);
    let connected =
        |answer: Value| answer["providers"].as_array().is_some_and(|p| p.iter().any(|p| p["state"] == "connected"));
    while !connected(lumo.ok("ext_providers", json!({})).await.structured()) {
        calls += 1;
        assert!(Instant::now() < deadline, "the reference provider did not connect");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    calls += 1;
    // The provider limits writes to 30 a minute per caller; stay under it.
    let (mut writes, mut refused, mut unknown) = (0, 0, 0);
    while calls < 850 {
        let i = calls;
        match i % 20 {
            3 => drop(lumo.ok("userscripts_list", json!({})).await),
            13 if writes < 20 => {
                writes += 1;
                let code = format!("console.log('{SOURCE}-{i}')");
                drop(lumo.ok("userscripts_create", json!({"name": format!("s{i}"), "code": code})).await)
            }
            0 => drop(lumo.ok("page_type", json!({"ref": username, "text": format!("{TYPED}-{i}")})).await),
            5 => drop(lumo.ok("devtools_evaluate", json!({"expression": format!("'{SOURCE}-{i}'.length")})).await),
            10 => {
                refused += 1;
                drop(lumo.fails("page_click", json!({"ref": 12}), "invalid_arguments").await)
            }
            15 => {
                unknown += 1;
                assert!(lumo.try_call("no_such_tool", json!({})).await.is_err(), "an unknown tool is a protocol error")
            }
            17 => drop(lumo.snapshot().await),
            _ => drop(lumo.ok("page_find", json!({"text": "Sign in"})).await),
        }
        calls += 1;
    }

    lumo.open(&server.url("webmcp/basic.html")).await;
    calls += 1;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lumo.ok("webmcp_list", json!({})).await.text().contains("webmcp_echo") {
        calls += 1;
        assert!(Instant::now() < deadline, "the page tools did not appear");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    calls += 1;
    while calls < 1000 {
        let i = calls;
        match i % 4 {
            0 => drop(lumo.ok("webmcp_echo", json!({"text": format!("{TYPED}-{i}")})).await),
            // Consequential, and this client cannot be asked: refused.
            1 => drop(lumo.fails("webmcp_buy", json!({"item": format!("{TYPED}-{i}")}), "forbidden").await),
            2 => drop(lumo.call("webmcp_call", json!({"name": "no_such_page_tool", "input": {}})).await),
            _ => drop(lumo.ok("webmcp_call", json!({"name": "echo", "input": {"text": "x"}})).await),
        }
        calls += 1;
    }
    let elapsed = started.elapsed();
    lumo.stop().await;
    wait_for_records(&db, 1000).await;
    eprintln!("1000 calls in {elapsed:?}");

    let verified = audit(&db, &["verify"]);
    assert!(verified.status.success(), "verify: {}{}", text(&verified.stdout), text(&verified.stderr));
    assert!(text(&verified.stdout).contains("ok: 1000 records"), "{}", text(&verified.stdout));

    let records = export(&db, &[]);
    let count = |key: &str, value: &str| records.iter().filter(|r| r[key] == value).count();
    assert_eq!(count("outcome", "invalid_arguments"), refused, "the refused page_click calls");
    assert_eq!(count("tool", "no_such_tool"), unknown, "unknown tools are audited too");
    assert_eq!(count("outcome", "forbidden"), count("tool", "webmcp_buy"));
    assert!(count("tool", "webmcp_buy") > 30);
    assert!(count("source", "page") > 100, "page tools are recorded as source page");
    assert!(count("source", "provider") > 50, "provider tools are recorded as source provider");
    assert_eq!(count("tool", "userscripts_create"), 20);
    let created = records.iter().find(|r| r["tool"] == "userscripts_create").expect("a create record");
    assert!(
        created["target"].as_str().is_some_and(|t| t.starts_with("eghfoecghmfkmlcingapcclcakhdighl")),
        "a provider record's target is the provider's ID: {created}"
    );
    let echo = records.iter().find(|r| r["tool"] == "webmcp_echo").expect("an echo record");
    assert_eq!(echo["target"], format!("http://127.0.0.1:{}", server.port), "{echo}");
    let typed = records.iter().find(|r| r["tool"] == "page_type").expect("a page_type record");
    assert_eq!(typed["target"], format!("http://127.0.0.1:{}", server.port), "{typed}");
    assert!(typed["client"].as_str().is_some_and(|c| c.starts_with("rmcp")), "the client's initialize info: {typed}");
    assert_eq!(typed["session"], "stdio");
    assert_eq!(typed["paramsHash"].as_str().map(str::len), Some(64));
    // Filters.
    let refused = export(&db, &["--outcome", "forbidden", "--source", "page", "--since", "1h"]);
    assert_eq!(refused.len(), count("outcome", "forbidden"));
    assert!(export(&db, &["--until", "2000-01-01"]).is_empty());
    let tail = audit(&db, &["tail", "-n", "3", "--tool", "page_type"]);
    assert_eq!(text(&tail.stdout).lines().count(), 4, "{}", text(&tail.stdout));
    let shown = audit(&db, &["show", "1"]);
    assert!(text(&shown.stdout).contains("\"tool\": \"browser_navigate\""), "{}", text(&shown.stdout));

    // Neither typed text nor script source anywhere in the files.
    let bytes = log_bytes(&data_dir);
    assert!(!bytes.is_empty());
    assert!(!contains(&bytes, TYPED), "typed text reached the audit log");
    assert!(!contains(&bytes, SOURCE), "script source reached the audit log");
    assert!(contains(&bytes, "page_type"), "the search itself works");

    let edited = tampered(
        &db,
        "edited.db",
        "UPDATE records SET outcome = CASE outcome WHEN 'ok' THEN 'forbidden' ELSE 'ok' END WHERE id = 511;",
    );
    assert!(text(&edited.stderr).contains("altered"), "{}", text(&edited.stderr));
    assert_broken_at(&edited, 511, "edited outcome");
    let edited_time = tampered(&db, "edited2.db", "UPDATE records SET at_ms = at_ms - 1 WHERE id = 700;");
    assert_broken_at(&edited_time, 700, "edited time");
    let deleted = tampered(&db, "deleted.db", "DELETE FROM records WHERE id = 500;");
    assert!(text(&deleted.stderr).contains("record 500 is missing"), "{}", text(&deleted.stderr));
    assert_broken_at(&deleted, 501, "deleted record");
    let swapped = tampered(
        &db,
        "swapped.db",
        "UPDATE records SET id = -1 WHERE id = 400; UPDATE records SET id = 400 WHERE id = 401; UPDATE records SET id = 401 WHERE id = -1;",
    );
    assert_broken_at(&swapped, 400, "reordered records");
    let cut = tampered(&db, "cut.db", "DELETE FROM records WHERE id > 990;");
    assert_broken_at(&cut, 1000, "deleted newest records");
    // The copies themselves are faithful.
    let intact = copy_of(&db, "intact.db");
    assert!(audit(&intact, &["verify"]).status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thirty_first_write_in_a_burst_is_rate_limited_and_audited() {
    let server = FixtureServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("a.db");
    // The seed's window: 30 writes per 60 s per client.
    let lumo = Lumo::start_with(&["--rate-limit", "30/60s"], &[("LUMO_AUDIT_DB", db.as_os_str())]).await;
    lumo.open(&server.url("login.html")).await;
    let checkbox = ref_in(&lumo.snapshot().await, "checkbox \"Remember me\"");
    for i in 2..=30 {
        let answer = lumo.call("page_click", json!({"ref": checkbox})).await;
        assert!(!answer.is_error(), "write {i} was admitted: {}", answer.text());
    }
    let refused = lumo.fails("page_click", json!({"ref": checkbox}), "rate_limited").await;
    let retry = refused.structured()["error"]["retryAfterMs"].as_u64().expect("retryAfterMs");
    assert!((1..=60_000).contains(&retry), "{retry}");
    assert!(refused.error_message().contains("retry in"), "{}", refused.error_message());
    // Reads are not counted.
    lumo.ok("page_find", json!({"text": "Sign in"})).await;
    lumo.stop().await;
    wait_for_records(&db, 33).await;

    let limited = export(&db, &["--outcome", "rate_limited"]);
    assert_eq!(limited.len(), 1, "{limited:?}");
    assert_eq!(limited[0]["tool"], "page_click");
    assert_eq!(limited[0]["id"], 32);
    assert!(audit(&db, &["verify"]).status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_and_filters_explain_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = audit(&dir.path().join("none.db"), &["verify"]);
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("there is no audit log at"), "{}", text(&missing.stderr));
    let bad_rate = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--rate-limit", "lots"])
        .output()
        .expect("run lumo serve");
    assert!(!bad_rate.status.success());
    assert!(text(&bad_rate.stderr).contains("N/WINDOW"), "{}", text(&bad_rate.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_are_audited_apart_by_client_and_hashed_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("http.db");
    let port = common::free_port();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .env("LUMO_AUDIT_DB", &db)
        .env_remove("LUMO_TOKEN")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lumo serve --http");
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "lumo did not listen");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let a = http_session(port, "audit-http-a").await;
    let b = http_session(port, "audit-http-b").await;
    // Refused before any browser is needed: the arguments are wrong.
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"page_click","arguments":{"ref":12}}}"#;
    for session in [&a, &b] {
        let answer = post_mcp(port, Some(session), call).await;
        assert!(answer.contains("invalid_arguments"), "{answer}");
    }
    // SIGTERM: lumo stops cleanly and flushes the log.
    let pid = child.id().expect("pid").to_string();
    let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait()).await.expect("lumo exits").expect("wait");
    assert!(status.success(), "{status}");

    let records = export(&db, &[]);
    assert_eq!(records.len(), 2, "{records:?}");
    let sessions: Vec<&str> = records.iter().filter_map(|r| r["session"].as_str()).collect();
    assert!(sessions.iter().all(|s| s.starts_with("http:") && s.len() == 21), "{sessions:?}");
    assert_ne!(sessions[0], sessions[1], "two sessions, two labels");
    let clients: Vec<&str> = records.iter().filter_map(|r| r["client"].as_str()).collect();
    assert_eq!(clients, ["audit-http-a/1.0", "audit-http-b/1.0"]);
    let bytes = log_bytes_of(&db);
    assert!(!contains(&bytes, &a) && !contains(&bytes, &b), "raw session ids are not stored");
}

fn log_bytes_of(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        all.extend(std::fs::read(PathBuf::from(path)).unwrap_or_default());
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_drops_the_oldest_and_what_is_kept_still_verifies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kept.db");
    // `lumo call` of an unknown tool needs no browser and is still audited; retention runs at start.
    for _ in 0..5 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["call", "no_such_tool", "{}", "--audit-keep", "2", "--audit-db"])
            .arg(&db)
            .output()
            .expect("run lumo call");
        assert!(!out.status.success());
    }
    let ids: Vec<i64> = export(&db, &[]).iter().filter_map(|r| r["id"].as_i64()).collect();
    assert_eq!(ids, [3, 4, 5]);
    let verified = audit(&db, &["verify"]);
    assert!(verified.status.success(), "{}", text(&verified.stderr));
    assert!(
        text(&verified.stdout).contains("ok: 3 records, hash chain intact, kept from after record 2"),
        "{}",
        text(&verified.stdout)
    );
    // Without the anchor the kept records do not chain from the start.
    let broken = tampered(&db, "no-anchor.db", "DELETE FROM meta WHERE key LIKE 'anchor_%';");
    assert_broken_at(&broken, 3, "anchor removed");
}

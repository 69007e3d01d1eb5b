//! Provider extensions end to end: the real `lumo serve` in launched mode (it
//! loads the bridge and the providers into its own headless Chromium and
//! pairs the bridge itself), driven by rmcp's client, against the reference
//! provider (`extension/userscripts`) and the broken test providers
//! (`extension/test-providers/*`, built by `scripts/setup --providers`).
//!
//! The test reaches lumo's browser too (`--browser-arg=--remote-debugging-port=0`)
//! to do what a user or MV3 would: flip a provider's policy, stop its worker.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Lumo;
use lumo_cdp::Connection;
use serde_json::{Value, json};

fn extension(path: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension").join(path);
    assert!(dir.join("kit").is_dir(), "{} has no kit/: run scripts/setup --providers", dir.display());
    dir.canonicalize().expect("extension folder").display().to_string()
}

const BRIDGE: &str = "hjfgijdboblbpgomjhgpbhfiobiokomm";

/// lumo serving MCP on stdio, its browser reachable by the test.
struct Rig {
    lumo: Lumo,
    cdp: Connection,
    dir: tempfile::TempDir,
}

impl Rig {
    async fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let profile = dir.path().join("profile");
        let audit = dir.path().join("audit.db");
        let mut all: Vec<String> = vec![
            "--user-data-dir".into(),
            profile.display().to_string(),
            "--browser-arg=--remote-debugging-port=0".into(),
            "--audit-db".into(),
            audit.display().to_string(),
            "--config".into(),
            dir.path().join("lumo.toml").display().to_string(),
        ];
        std::fs::write(dir.path().join("lumo.toml"), "").expect("empty policy");
        all.extend(args.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let lumo = Lumo::start_with(&refs, &[]).await;
        // The configured providers make lumo start its browser at once.
        let port_file = profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Some(port) =
                std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next().map(str::to_string))
            {
                break port;
            }
            assert!(Instant::now() < deadline, "lumo's browser did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let cdp =
            lumo_cdp::connect_endpoint(&format!("http://127.0.0.1:{port}")).await.expect("connect to lumo's browser");
        Self { lumo, cdp, dir }
    }

    /// `ext_providers` (probing again), as the structured list.
    async fn providers(&self) -> Vec<Value> {
        let answer = self.lumo.ok("ext_providers", json!({})).await;
        answer.structured()["providers"].as_array().cloned().expect("a providers list")
    }

    async fn provider(&self, namespace_or_id: &str) -> Value {
        let all = self.providers().await;
        all.iter()
            .find(|p| p["id"] == namespace_or_id || p["namespace"] == namespace_or_id)
            .cloned()
            .unwrap_or_else(|| panic!("no {namespace_or_id} in {all:#?}"))
    }

    /// Sets fields of a kit provider's stored policy (what its options page does).
    async fn policy(&self, id: &str, patch: Value) {
        let expression = format!(
            "chrome.storage.local.get('lumo.policy').then((o) => chrome.storage.local.set({{'lumo.policy': {{...(o['lumo.policy'] || {{}}), ...{patch}}}}})).then(() => true)"
        );
        lumo_host::providers::in_worker(&self.cdp, id, &expression).await.expect("set the provider's policy");
    }

    async fn eval_in(&self, id: &str, expression: &str) -> Value {
        lumo_host::providers::in_worker(&self.cdp, id, expression).await.expect("evaluate in the provider's worker")
    }

    /// Stops extension `id`'s service worker, as MV3 does when it is idle.
    async fn stop_worker(&self, id: &str) {
        let targets = self.cdp.call("Target.getTargets", json!({}), None).await.expect("targets");
        let target = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "service_worker" && t["url"].as_str().unwrap_or_default().contains(id))
            .and_then(|t| t["targetId"].as_str())
            .expect("the provider's worker runs")
            .to_string();
        self.cdp.call("Target.closeTarget", json!({"targetId": target}), None).await.expect("closeTarget");
    }

    /// Stops lumo (its audit records reach the disk) and reads them back.
    async fn stop_and_audit(self) -> (Vec<Value>, PathBuf, tempfile::TempDir) {
        self.lumo.stop().await;
        let db = self.dir.path().join("audit.db");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["audit", "export", "--jsonl", "--audit-db"])
            .arg(&db)
            .output()
            .expect("lumo audit export");
        let records =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        (records, db, self.dir)
    }
}

fn state(p: &Value) -> (String, String) {
    (p["state"].as_str().unwrap_or_default().to_string(), p["kind"].as_str().unwrap_or_default().to_string())
}

/// Every row of the seed's state table, reached for real and shown with its message.
#[tokio::test(flavor = "multi_thread")]
async fn every_row_of_the_state_table() {
    let rig = Rig::start(&[
        "--provider",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "--load-extension",
        &extension("test-providers/probe-silent"),
        "--load-extension",
        &extension("test-providers/probe-not-ok"),
        "--load-extension",
        &extension("test-providers/probe-incomplete"),
        "--load-extension",
        &extension("test-providers/not-ready"),
        "--load-extension",
        &extension("userscripts"),
    ])
    .await;
    let started = Instant::now();
    let all = rig.providers().await;
    let took = started.elapsed();
    let by_order: Vec<(String, String)> = all.iter().map(state).collect();
    let messages: Vec<&str> = all.iter().map(|p| p["message"].as_str().unwrap_or_default()).collect();
    assert_eq!(all.len(), 6, "{all:#?}");
    // 1. sendMessage rejected: not installed.
    assert_eq!(by_order[0], ("error".into(), "not_installed".into()));
    assert_eq!(messages[0], "The extension is not installed, or has no agent endpoint.");
    // 2. No answer: timeout after 1500 ms, the raw message.
    assert_eq!(by_order[1], ("error".into(), "timeout".into()));
    assert!(messages[1].contains("1500"), "{}", messages[1]);
    assert!(took >= Duration::from_millis(1500), "the silent provider was waited for ({took:?})");
    // 3. ok:false: the protocol error.
    assert_eq!(by_order[2], ("error".into(), "protocol_error".into()));
    // 4. Missing service or status.
    assert_eq!(by_order[3], ("error".into(), "incomplete_response".into()));
    assert_eq!(messages[3], "Incomplete probe response.");
    // 8. ready:false with the provider's reason.
    assert_eq!(by_order[4], ("error".into(), "not_ready".into()));
    assert_eq!(messages[4], "The test provider is not ready, on purpose.");
    // 6. A fresh reference provider: lumo is pending approval.
    let userscripts = all[5]["id"].as_str().expect("id").to_string();
    assert_eq!(by_order[5], ("error".into(), "pending_approval".into()));
    assert_eq!(messages[5], "Waiting for your approval in the provider.");
    // 7. Not on the allow list (denied).
    rig.policy(&userscripts, json!({"pending": [], "denied": [BRIDGE]})).await;
    let p = rig.provider(&userscripts).await;
    assert_eq!(state(&p), ("error".into(), "not_authorized".into()), "{p}");
    assert_eq!(p["message"], "The caller is not on the provider's allow list.");
    // 5. Agent access off.
    rig.policy(&userscripts, json!({"enabled": false, "denied": [], "allowlist": [BRIDGE]})).await;
    let p = rig.provider(&userscripts).await;
    assert_eq!(state(&p), ("error".into(), "disabled".into()), "{p}");
    assert_eq!(p["message"], "Agent access is turned off in the provider.");
    let tools: Vec<String> = rig.lumo.tools().await.into_iter().map(|t| t.name.to_string()).collect();
    assert!(!tools.iter().any(|t| t.starts_with("userscripts_")), "no tools while disabled: {tools:?}");
    // 9. All passed: connected, with the tool count, and the tools listed.
    rig.policy(&userscripts, json!({"enabled": true})).await;
    let p = rig.provider(&userscripts).await;
    assert_eq!(state(&p).0, "connected", "{p}");
    assert_eq!(p["message"], "7 tools available");
    assert_eq!(p["toolCount"], 7);
    let tools: Vec<String> = rig.lumo.tools().await.into_iter().map(|t| t.name.to_string()).collect();
    for tool in ["userscripts_list", "userscripts_create", "userscripts_delete"] {
        assert!(tools.contains(&tool.to_string()), "{tool} listed: {tools:?}");
    }
    rig.lumo.stop().await;
}

/// A UUID anywhere in `v`.
fn uuid_in(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s.len() == 36 && s.matches('-').count() == 4 => Some(s.clone()),
        Value::Object(m) => m.values().find_map(uuid_in),
        Value::Array(a) => a.iter().find_map(uuid_in),
        _ => None,
    }
}

/// The reference provider's tools through lumo's gate: shaped, audited with
/// source=provider (no script source anywhere), the policy switch effective on the
/// next call without a reconnect, a stopped worker recovered with a new
/// initialize, the provider's own 30-writes window; and the added latency.
#[tokio::test(flavor = "multi_thread")]
async fn reference_provider_through_the_gate() {
    let rig = Rig::start(&["--load-extension", &extension("userscripts")]).await;
    let id = rig.providers().await[0]["id"].as_str().expect("id").to_string();
    rig.policy(&id, json!({"pending": [], "allowlist": [BRIDGE]})).await;
    let probe_started = Instant::now();
    let p = rig.provider(&id).await;
    let probe_and_connect = probe_started.elapsed();
    assert_eq!(state(&p).0, "connected", "{p}");
    let inits = |p: &Value| p["initializations"].as_u64().expect("initializations");
    let first = inits(&p);

    // A write, shaped as provider data and audited with its target.
    let source = "console.log('lumo-secret-source-4711')";
    let created = rig.lumo.ok("userscripts_create", json!({"name": "t", "code": source})).await;
    assert_eq!(created.structured()["untrustedData"], true, "{:?}", created.structured());
    assert!(created.text().contains("<untrusted "), "provider text is fenced: {}", created.text());
    let script = uuid_in(&created.structured()).expect("the new script's id");
    let got = rig.lumo.ok("userscripts_get", json!({"id": script})).await;
    assert!(got.page_text().contains("lumo-secret-source-4711"), "{}", got.text());

    // A destructive provider tool is consequential: this client cannot confirm it, so it does not run.
    let refused = rig.lumo.fails("userscripts_delete", json!({"id": script}), "forbidden").await;
    assert!(refused.error_message().contains("consequential provider tool"), "{}", refused.text());
    rig.lumo.ok("userscripts_get", json!({"id": script})).await;

    // Business failure: isError with the provider's code, fenced.
    let missing =
        rig.lumo.fails("userscripts_get", json!({"id": "00000000-0000-4000-8000-000000000000"}), "not_found").await;
    assert!(missing.structured()["providerResult"].is_object(), "{:?}", missing.structured());

    // The policy switch takes effect on the very next call, on the same port.
    rig.policy(&id, json!({"writes": false})).await;
    let refused = rig.lumo.call("userscripts_set_enabled", json!({"id": script, "enabled": true})).await;
    assert!(refused.is_error(), "writes off: {}", refused.text());
    rig.policy(&id, json!({"writes": true})).await;
    rig.lumo.ok("userscripts_set_enabled", json!({"id": script, "enabled": false})).await;
    let p = rig.lumo.ok("ext_providers", json!({"refresh": false})).await.structured()["providers"][0].clone();
    assert_eq!(inits(&p), first, "no reconnect for a policy switch");

    // Latency: a built-in tool, then a warm provider call, then the first call after the worker stopped.
    let timed = async |tool: &str, args: Value| {
        let t = Instant::now();
        rig.lumo.ok(tool, args).await;
        t.elapsed()
    };
    let mut builtin = Vec::new();
    let mut warm = Vec::new();
    for _ in 0..5 {
        builtin.push(timed("ext_providers", json!({"refresh": false})).await);
        warm.push(timed("userscripts_list", json!({})).await);
    }
    // The worker stops mid-session: the next call reconnects and initializes again.
    rig.stop_worker(&id).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cold = timed("userscripts_list", json!({})).await;
    let p = rig.lumo.ok("ext_providers", json!({"refresh": false})).await.structured()["providers"][0].clone();
    assert_eq!(inits(&p), first + 1, "a new port, a new initialize: {p}");
    builtin.sort();
    warm.sort();
    eprintln!(
        "LATENCY built-in median {:?}; provider warm median {:?}; first call after a worker stop (probe + port + initialize + tools/list + call) {cold:?}; probe + connect on ext_providers {probe_and_connect:?}",
        builtin[2], warm[2]
    );

    // The provider's own window: 30 writes per caller per minute (lumo's default window is wider).
    // Admitted so far: create and one set_enabled (the one refused by policy never reached the window).
    for n in 3..=30 {
        let answer = rig.lumo.call("userscripts_set_enabled", json!({"id": script, "enabled": false})).await;
        assert!(!answer.is_error(), "write {n} of 30: {}", answer.text());
    }
    let last = rig.lumo.call("userscripts_set_enabled", json!({"id": script, "enabled": false})).await;
    assert!(last.is_error(), "the 31st write: {}", last.text());
    assert_eq!(last.error_code(), "rate_limited", "{}", last.text());

    let provider_audit = rig
        .eval_in(&id, "chrome.storage.local.get('lumo.audit').then((o) => JSON.stringify(o['lumo.audit'] || []))")
        .await;
    let provider_audit = provider_audit.as_str().unwrap_or_default().to_string();
    assert!(provider_audit.contains(&script), "the provider audited the writes: {provider_audit}");
    assert!(!provider_audit.contains("lumo-secret-source"), "no script source in the provider's audit");

    // Audit: source=provider, target = extension ID and the script's UUID; no script source anywhere.
    let (records, db, _dir) = rig.stop_and_audit().await;
    let provider_records: Vec<&Value> = records.iter().filter(|r| r["source"] == "provider").collect();
    assert!(provider_records.iter().any(|r| r["tool"] == "userscripts_create"), "{records:#?}");
    assert!(
        provider_records.iter().any(|r| r["target"] == format!("{id}/{script}")),
        "target names the extension and the script: {provider_records:#?}"
    );
    let bytes = std::fs::read(db).expect("audit db");
    assert!(!String::from_utf8_lossy(&bytes).contains("lumo-secret-source"), "no script source in lumo's audit");
}

/// Provider calls cannot go around lumo's gate: lumo's schema validation and its
/// own rate window refuse before the provider is reached (its audit shows it).
#[tokio::test(flavor = "multi_thread")]
async fn provider_calls_cannot_bypass_the_gate() {
    let rig =
        Rig::start(&["--load-extension", &extension("test-providers/no-rate-limit"), "--rate-limit", "2/60s"]).await;
    let p = rig.providers().await[0].clone();
    assert_eq!(state(&p).0, "connected", "{p}");
    let id = p["id"].as_str().expect("id").to_string();
    let audit_len = async || {
        rig.eval_in(&id, "chrome.storage.local.get('lumo.audit').then((o) => (o['lumo.audit'] || []).length)")
            .await
            .as_u64()
            .unwrap_or(0)
    };
    // Validation: the provider's schema, checked by lumo.
    rig.lumo.fails("noratelimit_echo", json!({"text": 5}), "invalid_arguments").await;
    // Rate window: lumo's (2 writes a minute here), though this provider has none.
    rig.lumo.ok("noratelimit_write", json!({})).await;
    rig.lumo.ok("noratelimit_write", json!({})).await;
    let before = audit_len().await;
    rig.lumo.fails("noratelimit_write", json!({}), "rate_limited").await;
    assert_eq!(audit_len().await, before, "the refused write never reached the provider");
    let (records, _, _dir) = rig.stop_and_audit().await;
    let outcomes: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["source"] == "provider")
        .map(|r| {
            (r["tool"].as_str().unwrap_or_default().to_string(), r["outcome"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    assert!(outcomes.contains(&("noratelimit_echo".into(), "invalid_arguments".into())), "{outcomes:?}");
    assert!(outcomes.contains(&("noratelimit_write".into(), "rate_limited".into())), "{outcomes:?}");
}

/// Name rules: first come first served on a namespace (the second refused,
/// visibly, never overriding), over 64 tools, names over the limits, reserved namespaces.
#[tokio::test(flavor = "multi_thread")]
async fn namespaces_and_name_limits() {
    let rig = Rig::start(&[
        "--load-extension",
        &extension("test-providers/dup-namespace"),
        "--load-extension",
        &extension("userscripts"),
        "--load-extension",
        &extension("test-providers/too-many-tools"),
        "--load-extension",
        &extension("test-providers/long-names"),
        "--load-extension",
        &extension("test-providers/reserved-namespace"),
    ])
    .await;
    let all = rig.providers().await;
    let (impostor, userscripts) =
        (all[0]["id"].as_str().expect("id").to_string(), all[1]["id"].as_str().expect("id").to_string());
    rig.policy(&userscripts, json!({"pending": [], "allowlist": [BRIDGE]})).await;
    let all = rig.providers().await;
    assert_eq!(state(&all[0]).0, "connected", "first come: {:#?}", all[0]);
    assert_eq!(state(&all[1]), ("refused".into(), "namespace_taken".into()), "{:#?}", all[1]);
    let message = all[1]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&impostor) && message.contains("userscripts"), "names the holder: {message}");
    let tools: Vec<String> = rig.lumo.tools().await.into_iter().map(|t| t.name.to_string()).collect();
    let ours: Vec<&String> = tools.iter().filter(|t| t.starts_with("userscripts_")).collect();
    assert_eq!(ours.len(), 3, "only the first claimant's tools: {ours:?}");
    let too_many = &all[2];
    assert_eq!(too_many["toolCount"], 64, "{too_many:#?}");
    let refused = too_many["refusedTools"].as_array().expect("refused");
    assert!(
        !refused.is_empty() && refused[0]["reason"].as_str().unwrap_or_default().contains("at most 64"),
        "{refused:?}"
    );
    let long = &all[3];
    let reasons: Vec<&str> =
        long["refusedTools"].as_array().into_iter().flatten().filter_map(|r| r["reason"].as_str()).collect();
    assert!(!reasons.is_empty(), "long names refused with a reason: {long:#?}");
    let reserved = &all[4];
    assert!(
        state(reserved) == ("refused".into(), "namespace_reserved".into()) || state(reserved).1 == "namespace_invalid",
        "{reserved:#?}"
    );
    assert!(
        tools.iter().all(|t| t.len() <= 64 && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
        "{tools:?}"
    );
    rig.lumo.stop().await;
}

/// A provider added at run time (`ext_provider_add`) to a lumo started without any:
/// the ID is checked, the bridge comes up in lumo's browser then, and the state is shown.
#[tokio::test(flavor = "multi_thread")]
async fn a_provider_added_at_run_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.db");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let lumo = Lumo::start_with(&["--audit-db", audit.to_str().expect("utf-8")], &[("TMPDIR", tmp.as_os_str())]).await;
    let none = lumo.ok("ext_providers", json!({})).await;
    assert_eq!(none.structured()["providers"], json!([]), "{}", none.text());
    let bad = lumo.fails("ext_provider_add", json!({"id": "not-an-id"}), "invalid_arguments").await;
    assert!(bad.error_message().contains("32 letters"), "{}", bad.text());
    let added = lumo.ok("ext_provider_add", json!({"id": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"})).await;
    let p = &added.structured()["providers"][0];
    assert_eq!(state(p), ("error".into(), "not_installed".into()), "{p}");
    let bridge_dirs = || {
        std::fs::read_dir(&tmp)
            .expect("tmp")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("lumo-bridge-"))
            .count()
    };
    assert_eq!(bridge_dirs(), 1, "the bridge extension is written to a temporary folder");
    lumo.stop().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while bridge_dirs() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(bridge_dirs(), 0, "lumo removes the bridge's folder when it exits");
}

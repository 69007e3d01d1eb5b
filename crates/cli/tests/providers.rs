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
            if let Some(port) = std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next().map(str::to_string)) {
                break port;
            }
            assert!(Instant::now() < deadline, "lumo's browser did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let cdp = lumo_cdp::connect_endpoint(&format!("http://127.0.0.1:{port}")).await.expect("connect to lumo's browser");
        Self { lumo, cdp, dir }
    }

    /// `ext_providers` (probing again), as the structured list.
    async fn providers(&self) -> Vec<Value> {
        let answer = self.lumo.ok("ext_providers", json!({})).await;
        answer.structured()["providers"].as_array().cloned().expect("a providers list")
    }

    async fn provider(&self, namespace_or_id: &str) -> Value {
        let all = self.providers().await;
        all.iter().find(|p| p["id"] == namespace_or_id || p["namespace"] == namespace_or_id).cloned().unwrap_or_else(|| panic!("no {namespace_or_id} in {all:#?}"))
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

    fn audit(&self) -> Vec<Value> {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
            .args(["audit", "export", "--jsonl", "--audit-db"])
            .arg(self.dir.path().join("audit.db"))
            .output()
            .expect("lumo audit export");
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    fn audit_db(&self) -> PathBuf {
        self.dir.path().join("audit.db")
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

//! A provider whose tool list changes at run time, end to end: the real `lumo
//! serve` in launched mode loads `extension/test-providers/list-changing`
//! (built by `scripts/setup --providers`) into its headless Chromium; the
//! provider's `notifications/tools/list_changed` makes lumo list its tools again
//! and send its own `notifications/tools/list_changed` to the MCP client (rmcp).

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;

/// Counts the `notifications/tools/list_changed` lumo sends.
#[derive(Clone)]
struct Listener {
    changes: Arc<watch::Sender<u64>>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }
}

type Client = RunningService<RoleClient, Listener>;

async fn names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.expect("tools/list").into_iter().map(|t| t.name.to_string()).collect()
}

async fn call(client: &Client, name: &str, args: Value) -> rmcp::model::CallToolResult {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{name} did not answer"))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or_default()
}

/// Waits for the next list_changed after `seen` whose `tools/list` satisfies `wanted`:
/// the notification must come, and the list must then show the change.
async fn changed_until(
    client: &Client,
    changes: &mut watch::Receiver<u64>,
    wanted: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        tokio::time::timeout_at(deadline, changes.changed())
            .await
            .expect("lumo sent notifications/tools/list_changed")
            .expect("the client runs");
        let now = names(client).await;
        if wanted(&now) {
            return now;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_tool_list_changes_reach_the_mcp_client() {
    let provider = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension/test-providers/list-changing");
    assert!(provider.join("kit").is_dir(), "{} has no kit/: run scripts/setup --providers", provider.display());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("lumo.toml"), "").expect("empty policy");
    let mut command = common::lumo_command();
    command
        .arg("serve")
        .arg("--load-extension")
        .arg(provider.canonicalize().expect("provider folder"))
        .arg("--audit-db")
        .arg(dir.path().join("audit.db"))
        .arg("--config")
        .arg(dir.path().join("lumo.toml"))
        .env("TMPDIR", dir.path());
    let (tx, mut changes) = watch::channel(0u64);
    let listener = Listener { changes: Arc::new(tx) };
    let transport = TokioChildProcess::new(command).expect("spawn lumo serve");
    let client = tokio::time::timeout(Duration::from_secs(30), listener.serve(transport))
        .await
        .expect("lumo answers initialize")
        .expect("MCP handshake");

    // Connected: its first tools/list (the announcement of it may come now too).
    let providers = call(&client, "ext_providers", json!({})).await;
    assert_eq!(structured(&providers)["providers"][0]["state"], "connected", "{}", text(&providers));
    let before = names(&client).await;
    assert!(before.contains(&"listchanging_grow".to_string()), "{before:?}");
    assert!(!before.iter().any(|n| n == "listchanging_extra"), "{before:?}");
    changes.mark_unchanged();

    // The provider adds a tool while answering a call.
    let grown = call(&client, "listchanging_grow", json!({})).await;
    assert_ne!(grown.is_error, Some(true), "{}", text(&grown));
    assert_eq!(structured(&grown)["added"], true, "{}", text(&grown));
    changed_until(&client, &mut changes, |n| n.iter().any(|t| t == "listchanging_extra")).await;
    let extra = call(&client, "listchanging_extra", json!({"text": "hello-4711"})).await;
    assert_ne!(extra.is_error, Some(true), "{}", text(&extra));
    assert_eq!(structured(&extra)["extra"], "hello-4711", "{}", text(&extra));

    // And removes it again.
    let shrunk = call(&client, "listchanging_shrink", json!({})).await;
    assert_eq!(structured(&shrunk)["removed"], true, "{}", text(&shrunk));
    let after = changed_until(&client, &mut changes, |n| !n.iter().any(|t| t == "listchanging_extra")).await;
    assert!(after.contains(&"listchanging_grow".to_string()), "the other tools stay: {after:?}");
    let gone = client
        .call_tool(
            CallToolRequestParams::new("listchanging_extra")
                .with_arguments(json!({"text": "x"}).as_object().cloned().expect("object")),
        )
        .await;
    assert!(gone.is_err(), "a removed tool is unknown: {gone:?}");
    let _ = tokio::time::timeout(Duration::from_secs(10), client.cancel()).await;
}

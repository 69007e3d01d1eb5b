//! lumo serves every MCP protocol era rmcp speaks: an rmcp client pinned to each
//! revision lists the tools and runs a browser tool over stdio.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_era_lists_and_calls_tools() {
    // A web page: lumo refuses top-level data: URLs.
    let server = common::FixtureServer::start().await;
    for version in [
        ProtocolVersion::V_2024_11_05,
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2026_07_28,
    ] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
        command.arg("serve");
        let transport = TokioChildProcess::new(command).expect("spawn lumo serve");
        let mut config = ClientConfig::default();
        config.protocol_version = version.clone();
        let client = tokio::time::timeout(Duration::from_secs(30), config.serve(transport))
            .await
            .expect("lumo answers within 30 s")
            .unwrap_or_else(|e| panic!("{version}: handshake failed: {e}"));
        let tools = client.list_all_tools().await.unwrap_or_else(|e| panic!("{version}: tools/list: {e}"));
        assert!(tools.iter().any(|t| t.name == "page_snapshot"), "{version}: {} tools", tools.len());
        let args = json!({"url": server.url("login.html")});
        let mut call = CallToolRequestParams::new("browser_navigate");
        call.arguments = args.as_object().cloned();
        let result = client.call_tool(call).await.unwrap_or_else(|e| panic!("{version}: tools/call: {e}"));
        assert_eq!(result.is_error, Some(false), "{version}: {result:?}");
        client.cancel().await.expect("close the session");
    }
}

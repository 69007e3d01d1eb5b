//! `lumo providers check`: the provider contract's invariants, exercised one
//! by one against a real provider in the browser lumo launches.
//!
//! Each invariant passes or fails on its own, naming what was seen. A second,
//! throwaway extension ("stranger") probes too, so the check can see how the
//! provider treats a caller it has not authorized, and one that claims to be
//! lumo by name.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lumo_host::providers::{PortFate, Providers, in_worker, load_unpacked};
use lumo_protocol::{ClientInfo, ExtensionId, HostState, MCP_PORT_NAME, ProbeOutcome, ProbeRequest, ProbeResponse};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// One invariant's verdict.
#[derive(Debug, Serialize)]
pub(crate) struct Check {
    pub(crate) invariant: &'static str,
    pub(crate) pass: bool,
    pub(crate) detail: String,
}

fn verdict(invariant: &'static str, pass: bool, detail: impl Into<String>) -> Check {
    Check { invariant, pass, detail: detail.into() }
}

const BRIDGE: &str = lumo_host::bridge::EXTENSION_ID;

/// The stranger: a second extension whose only job is to probe as someone lumo's provider never authorized.
const STRANGER_MANIFEST: &str = r#"{"manifest_version": 3, "name": "lumo check: stranger", "version": "1.0", "background": {"service_worker": "worker.js"}}"#;

pub(crate) async fn run(hub: &Arc<Providers>, id: Option<ExtensionId>) -> Vec<Check> {
    let mut out = Vec::new();
    if let Err(why) = hub.ensure_bridge().await {
        out.push(verdict("bridge", false, why));
        return out;
    }
    let Some(id) = id.or_else(|| hub.views().first().and_then(|v| ExtensionId::new(v.id.clone()).ok())) else {
        out.push(verdict("bridge", false, "no provider to check"));
        return out;
    };
    let Some(cdp) = hub.browser().await else {
        out.push(verdict("bridge", false, "the check needs the browser lumo launches"));
        return out;
    };

    // 1. The probe's shape.
    let request = ProbeRequest {
        id: "check-1".into(),
        client: ClientInfo {
            id: ExtensionId::new(BRIDGE).expect("pinned ID"),
            name: "Lumo".into(),
            version: "check".into(),
        },
    };
    let first = hub.link().probe(&id, &request).await;
    let lumo_authorized = match &first {
        Ok(ProbeOutcome::Response(ProbeResponse::Reply(reply)))
            if reply.service.is_some() && reply.status.is_some() =>
        {
            let status = reply.status.expect("checked");
            out.push(verdict("probe_shape", true, format!("ok:true with service and status ({status:?})")));
            status.authorized
        }
        Ok(other) => {
            out.push(verdict(
                "probe_shape",
                false,
                format!("the answer is not a complete L0 response: {}", describe(other)),
            ));
            false
        }
        Err(e) => {
            out.push(verdict("probe_shape", false, e.to_string()));
            false
        }
    };

    // 2 and 3. A caller the provider never authorized, claiming lumo's ID and name.
    match stranger_probe(&cdp, &id).await {
        Err(why) => {
            out.push(verdict("ok_true_on_policy_failure", false, why.clone()));
            out.push(verdict("authorization_by_sender_id", false, why));
        }
        Ok(answer) => {
            let ok = answer["ok"] == json!(true);
            let authorized = answer["status"]["authorized"].as_bool();
            out.push(verdict(
                "ok_true_on_policy_failure",
                ok && authorized == Some(false),
                format!("an unauthorized caller got {answer}"),
            ));
            let by_id = if !lumo_authorized {
                verdict(
                    "authorization_by_sender_id",
                    false,
                    "cannot tell: the provider does not authorize lumo's bridge either (approve it in the provider)",
                )
            } else {
                verdict(
                    "authorization_by_sender_id",
                    authorized == Some(false),
                    format!(
                        "a caller naming itself lumo ({BRIDGE}, \"Lumo\") but with another sender ID got authorized={authorized:?}"
                    ),
                )
            };
            out.push(by_id);
        }
    }

    // Everything else needs L1.
    let view = hub.refresh(&id).await;
    let connected = view.as_ref().is_some_and(|v| v.state == "connected");
    let l1_names =
        ["name_rules", "port_name", "is_error_on_business_failure", "reinitialize_after_worker_restart", "rate_limit"];
    let Some(view) = view.filter(|_| connected) else {
        let why = hub.views().into_iter().find(|v| v.id == id.as_str()).map(|v| v.message).unwrap_or_default();
        for name in l1_names {
            out.push(verdict(name, false, format!("L1 not reached: {why}")));
        }
        return out;
    };

    // 4. Name rules.
    let refused: Vec<String> = view.refused_tools.iter().map(|r| format!("{}: {}", r.name, r.reason)).collect();
    out.push(verdict(
        "name_rules",
        refused.is_empty(),
        if refused.is_empty() {
            format!("{} tools under {:?}", view.tool_count, view.namespace.unwrap_or_default())
        } else {
            refused.join("; ")
        },
    ));

    // 5. Only a port named lumo:mcp speaks MCP.
    let wrong = hub.try_port(&id, "lumo:wrong", Duration::from_millis(1500)).await;
    let right = hub.try_port(&id, MCP_PORT_NAME, Duration::from_secs(5)).await;
    out.push(verdict(
        "port_name",
        matches!(wrong, Ok(PortFate::Closed | PortFate::Silent)) && right == Ok(PortFate::Answered),
        format!("a port named \"lumo:wrong\": {wrong:?}; named \"lumo:mcp\": {right:?}"),
    ));

    let tools = hub.tool_names(&id);
    // 6. A business failure is an isError result.
    match business_failure(&tools) {
        None => out.push(verdict(
            "is_error_on_business_failure",
            false,
            "no tool to provoke a business failure with (a tool taking a UUID id, or one named fail)",
        )),
        Some((tool, args)) => {
            let answer = hub.call_raw(&id, &tool, args).await;
            let detail = format!("{tool}: {}", summary(&answer));
            let pass = answer.as_ref().is_ok_and(|r| r.is_error == Some(true));
            out.push(verdict("is_error_on_business_failure", pass, detail));
        }
    }

    // 7. A stopped worker: the next call opens a new port and initializes again.
    let before = hub.initializations(&id);
    let restarted = restart_worker(&cdp, &id).await;
    let closed = until(Duration::from_secs(5), async || !hub.session_open(&id).await).await;
    let read = tools.iter().find(|(_, t)| no_required(t)).map(|(_, t)| t.name.to_string());
    match (restarted, read) {
        (Err(why), _) => out.push(verdict("reinitialize_after_worker_restart", false, why)),
        (_, None) => {
            out.push(verdict("reinitialize_after_worker_restart", false, "no tool without required arguments to call"))
        }
        (Ok(()), Some(tool)) => {
            let answer = hub.call_raw(&id, &tool, Map::new()).await;
            let after = hub.initializations(&id);
            out.push(verdict(
                "reinitialize_after_worker_restart",
                answer.is_ok() && after == before + 1 && closed,
                format!(
                    "port closed: {closed}; {tool} after the restart: {}; initialize ran {} time(s) more",
                    summary(&answer),
                    after - before
                ),
            ));
        }
    }

    // 8. 30 writes a minute per caller: the 31st is rate_limited.
    match tools.iter().find(|(_, t)| is_write(t) && (no_required(t) || uuid_args(t).is_some())) {
        None => out.push(verdict("rate_limit", false, "no write tool callable without real data")),
        Some((_, tool)) => {
            let args = if no_required(tool) { Map::new() } else { uuid_args(tool).unwrap_or_default() };
            let mut last = None;
            for _ in 0..31 {
                last = Some(hub.call_raw(&id, &tool.name, args.clone()).await);
            }
            let code = last
                .as_ref()
                .and_then(|a| a.as_ref().ok())
                .and_then(|r| r.structured_content.as_ref())
                .and_then(|s| s["error"]["code"].as_str().map(str::to_string));
            out.push(verdict(
                "rate_limit",
                code.as_deref() == Some("rate_limited"),
                format!("the 31st {} within a minute: {}", tool.name, last.map(|a| summary(&a)).unwrap_or_default()),
            ));
        }
    }
    out
}

fn summary(answer: &Result<rmcp::model::CallToolResult, String>) -> String {
    match answer {
        Ok(r) => {
            let code = r.structured_content.as_ref().and_then(|s| s["error"]["code"].as_str()).unwrap_or("-");
            format!("isError={:?} code={code}", r.is_error.unwrap_or(false))
        }
        Err(e) => format!("failed: {e}"),
    }
}

fn required(tool: &rmcp::model::Tool) -> Vec<String> {
    tool.input_schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn no_required(tool: &rmcp::model::Tool) -> bool {
    required(tool).is_empty()
}

fn is_write(tool: &rmcp::model::Tool) -> bool {
    tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
}

/// Arguments naming a random UUID, when every required argument is one (`id`-like).
fn uuid_args(tool: &rmcp::model::Tool) -> Option<Map<String, Value>> {
    let required = required(tool);
    let properties = tool.input_schema.get("properties")?.as_object()?;
    if required.is_empty() {
        return None;
    }
    let mut args = Map::new();
    for name in required {
        let schema = properties.get(&name)?;
        let looks_uuid = schema["type"] == "string"
            && (schema["format"] == "uuid" || schema["pattern"].as_str().is_some_and(|p| p.contains("[0-9a-f]{8}")));
        if !looks_uuid {
            return None;
        }
        args.insert(name, Value::from(random_uuid()));
    }
    Some(args)
}

fn business_failure(tools: &[(String, rmcp::model::Tool)]) -> Option<(String, Map<String, Value>)> {
    let read_with_uuid = tools.iter().find(|(_, t)| !is_write(t) && uuid_args(t).is_some());
    if let Some((_, t)) = read_with_uuid {
        return Some((t.name.to_string(), uuid_args(t).unwrap_or_default()));
    }
    tools.iter().find(|(_, t)| t.name == "fail" && no_required(t)).map(|(_, t)| (t.name.to_string(), Map::new()))
}

fn random_uuid() -> String {
    let mut b = [0u8; 16];
    let _ = getrandom::fill(&mut b);
    let h = b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!("{}-{}-4{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

async fn stranger_probe(cdp: &lumo_cdp::Connection, provider: &ExtensionId) -> Result<Value, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("manifest.json"), STRANGER_MANIFEST).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("worker.js"), "// Probes on behalf of `lumo providers check`.\n")
        .map_err(|e| e.to_string())?;
    let stranger = load_unpacked(cdp, dir.path()).await?;
    let probe = json!({"channel": "lumo:probe", "version": 1, "id": "check-stranger", "client": {"id": BRIDGE, "name": "Lumo", "version": "check"}});
    let expression = format!(
        "Promise.race([chrome.runtime.sendMessage({}, {probe}), new Promise((r) => setTimeout(() => r({{timeout: true}}), 1500))]).catch((e) => ({{rejected: String(e)}}))",
        Value::from(provider.as_str())
    );
    in_worker(cdp, stranger.as_str(), &expression).await
}

async fn restart_worker(cdp: &lumo_cdp::Connection, id: &ExtensionId) -> Result<(), String> {
    let targets = cdp.call("Target.getTargets", json!({}), None).await.map_err(|e| e.to_string())?;
    let prefix = format!("chrome-extension://{}/", id.as_str());
    let target = targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["type"] == "service_worker" && t["url"].as_str().unwrap_or_default().starts_with(&prefix))
        .and_then(|t| t["targetId"].as_str())
        .ok_or("the provider's service worker is not running")?;
    cdp.call("Target.closeTarget", json!({"targetId": target}), None)
        .await
        .map_err(|e| format!("cannot stop the provider's worker: {e}"))?;
    Ok(())
}

/// How a probe outcome reads in the check's report.
fn describe(outcome: &ProbeOutcome) -> String {
    match outcome {
        ProbeOutcome::Response(ProbeResponse::Reply(_)) => "ok:true".into(),
        other => HostState::from_probe(other.clone()).user_message(),
    }
}

/// Waits up to `within` for `done`, polling.
async fn until(within: Duration, mut done: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done().await {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

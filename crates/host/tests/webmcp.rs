//! WebMCP page tools through the gate and over MCP, against real Chromium:
//! dynamic tools/list, list_changed, validation, consequential confirmation.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lumo_browser::{BrowserSource, Session};
use lumo_host::{Catalog, Gate, LumoServer};
use lumo_testkit::{FixtureServer, Gated, assert_answer};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn session() -> Arc<Session> {
    Arc::new(Session::new(BrowserSource::Launch(Default::default())))
}

async fn call(gate: &Gate, name: &str, args: Value) -> lumo_host::GateOutput {
    gate.call(name, args, CancellationToken::new()).await.unwrap()
}

async fn open(gate: &Gate, session: &Session, url: &str) {
    assert!(!call(gate, "browser_navigate", json!({"url": url})).await.is_error);
    assert!(session.wait_for_page_tools(9, Duration::from_secs(10)).await.unwrap() >= 9);
    // Only what was listed can be called.
    gate.list();
}

fn code(out: &lumo_host::GateOutput) -> Value {
    out.structured.as_ref().map(|s| s["error"]["code"].clone()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn the_gate_lists_validates_and_guards_page_tools() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let Gated { session, gate } = Gated::new();
    open(&gate, &session, &format!("{base}/basic.html")).await;

    // Built-ins first, then page tools by name.
    let names: Vec<String> = gate.specs().into_iter().map(|s| s.name).collect();
    let first_page = names.iter().position(|n| n == "webmcp_big").unwrap();
    assert!(names[..first_page].contains(&"webmcp_list".to_string()));
    let page: Vec<&String> = names[first_page..].iter().collect();
    let mut sorted = page.clone();
    sorted.sort();
    assert_eq!(page, sorted);
    assert!(names.iter().all(|n| n.len() <= 64));

    // The page's inputSchema is enforced by the gate (Chromium does not).
    assert_answer!(call(&gate, "webmcp_echo", json!({"text": 5})).await, error "invalid_arguments");
    assert_answer!(call(&gate, "webmcp_call", json!({"name": "echo", "input": {}})).await, error "invalid_arguments");

    // Results are fenced as untrusted.
    let out = call(&gate, "webmcp_echo", json!({"text": "hi"})).await;
    assert!(!out.is_error && out.text.contains("<untrusted"), "{}", out.text);
    assert_eq!(out.structured, Some(json!({"echo": "hi", "untrustedData": true})));

    // Consequential: refused without a way to ask, naming the setting; also through webmcp_call.
    let out = call(&gate, "webmcp_buy", json!({"item": "tv"})).await;
    assert!(out.is_error && code(&out) == "forbidden" && out.text.contains("--allow-consequential"), "{}", out.text);
    assert_answer!(call(&gate, "webmcp_call", json!({"name": "buy", "input": {"item": "tv"}})).await, error "forbidden");
    // A webmcp_ name never listed is an unknown tool (a protocol error), not stale.
    let unknown = gate.call("webmcp_nope", json!({}), CancellationToken::new()).await;
    assert!(matches!(unknown, Err(lumo_host::CallError::UnknownTool(_))), "{unknown:?}");
    session.shutdown().await;

    let Gated { session, gate } = Gated::with(|gate| gate.allow_consequential(true));
    open(&gate, &session, &format!("{base}/basic.html")).await;
    let out = call(&gate, "webmcp_buy", json!({"item": "tv"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.structured, Some(json!({"ok": true, "bought": "tv", "untrustedData": true})));
    session.shutdown().await;
}

#[derive(Clone)]
struct Client {
    list_changed: Arc<AtomicUsize>,
    answers: Arc<std::sync::Mutex<Vec<ElicitationAction>>>,
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        let action = self.answers.lock().unwrap().pop().unwrap_or(ElicitationAction::Decline);
        let content = matches!(action, ElicitationAction::Accept).then(|| json!({}));
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.capabilities = ClientCapabilities::builder().enable_elicitation().build();
        info
    }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn mcp_clients_see_list_changes_and_confirm_consequential_tools() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session();
    let gate = Arc::new(Gate::new(Catalog::builtin(session.clone())));
    let (server_io, client_io) = tokio::io::duplex(1 << 22);
    let server = tokio::spawn(LumoServer::new(gate.clone()).serve(tokio::io::split(server_io)));
    let handler = Client {
        list_changed: Arc::default(),
        // Popped from the end: accept first, then decline.
        answers: Arc::new(std::sync::Mutex::new(vec![ElicitationAction::Decline, ElicitationAction::Accept])),
        asked: Arc::default(),
    };
    let client = handler.clone().serve(tokio::io::split(client_io)).await.unwrap();
    let _server = server.await.unwrap().unwrap();

    let before = client.list_all_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name.starts_with("webmcp_e")));
    let nav = CallToolRequestParams::new("browser_navigate")
        .with_arguments(args(json!({"url": format!("{base}/basic.html")})));
    client.call_tool(nav).await.unwrap();

    // Debounced notification once the page's tools settle.
    let mut waited = 0;
    while handler.list_changed.load(Ordering::SeqCst) == 0 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(handler.list_changed.load(Ordering::SeqCst) >= 1, "tools/list_changed was sent");
    let tools = client.list_all_tools().await.unwrap();
    let echo = tools.iter().find(|t| t.name == "webmcp_echo").unwrap();
    assert_eq!(echo.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    let buy = tools.iter().find(|t| t.name == "webmcp_buy").unwrap();
    assert_eq!(buy.annotations.as_ref().and_then(|a| a.destructive_hint), Some(true));

    // Consequential: the user is asked; accept runs it, decline refuses.
    let buy = || CallToolRequestParams::new("webmcp_buy").with_arguments(args(json!({"item": "tv"})));
    let accepted = client.call_tool(buy()).await.unwrap();
    assert_ne!(accepted.is_error, Some(true), "{:?}", accepted.content);
    assert_eq!(accepted.structured_content, Some(json!({"ok": true, "bought": "tv", "untrustedData": true})));
    let declined = client.call_tool(buy()).await.unwrap();
    assert_eq!(declined.is_error, Some(true));
    assert_eq!(declined.structured_content.unwrap()["error"]["code"], "forbidden");
    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert!(asked[0].contains("buy") && asked[0].contains(&base) && asked[0].contains("tv"), "{}", asked[0]);

    // The page changes its tools: another notification, and the list follows.
    let seen = handler.list_changed.load(Ordering::SeqCst);
    let click = CallToolRequestParams::new("devtools_evaluate")
        .with_arguments(args(json!({"expression": "document.getElementById('toggle').click()"})));
    client.call_tool(click).await.unwrap();
    let mut waited = 0;
    while handler.list_changed.load(Ordering::SeqCst) == seen && waited < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(handler.list_changed.load(Ordering::SeqCst) > seen);
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "webmcp_extra"));

    client.cancel().await.unwrap();
    session.shutdown().await;
}

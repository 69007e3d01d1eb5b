//! WebMCP page tools against real Chromium: pages from `fixtures/webmcp/`
//! served on 127.0.0.1 (WebMCP needs a secure context).

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use lumo_browser::{BrowserSource, Session, ToolOutput, ToolResult, builtin_tools, page_tool};
use lumo_cdp::LaunchOptions;
use lumo_protocol::ErrorCode;
use lumo_testkit::FixtureServer;
use serde_json::{Value, json};

fn session_with(extra_args: Vec<String>) -> Arc<Session> {
    Arc::new(Session::new(BrowserSource::Launch(LaunchOptions { extra_args, ..LaunchOptions::default() })))
}

async fn builtin(session: &Arc<Session>, name: &str, args: Value) -> ToolResult {
    let tools = builtin_tools();
    let tool = tools.iter().find(|t| t.spec.name == name).unwrap();
    tool.call(session.clone(), args).await
}

async fn open(session: &Arc<Session>, url: &str, tools: usize) {
    builtin(session, "browser_navigate", json!({"url": url})).await.unwrap();
    let n = session.wait_for_page_tools(tools, Duration::from_secs(10)).await.unwrap();
    assert!(n >= tools, "only {n} tools on {url}");
}

async fn eval(session: &Arc<Session>, expression: &str) -> Value {
    let out = builtin(session, "devtools_evaluate", json!({"expression": expression})).await.unwrap();
    let body = out.page_text.unwrap_or_default();
    serde_json::from_str(&body).unwrap_or(Value::String(body))
}

/// The page tool bindings of a session's (one) agent.
fn bindings(session: &Arc<Session>) -> Arc<lumo_browser::PageBindings> {
    static ALL: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<usize, Arc<lumo_browser::PageBindings>>>,
    > = std::sync::LazyLock::new(Default::default);
    ALL.lock().unwrap().entry(Arc::as_ptr(session) as usize).or_default().clone()
}

/// The agent is shown the tools (tools/list or webmcp_list).
fn list(session: &Arc<Session>) {
    bindings(session).bind(&session.page_tools());
}

/// Calls a page tool by its exposed or page name, as the catalog would
/// (listing the tools first when the agent never saw that name).
async fn call(session: &Arc<Session>, name: &str, input: Value) -> ToolResult {
    let resolved = match session.resolve_page_tool(name, &bindings(session)) {
        Err(lumo_browser::Unresolved::NotListed) => {
            list(session);
            session.resolve_page_tool(name, &bindings(session))
        }
        other => other,
    };
    let tool = match resolved {
        Ok(tool) => tool,
        Err(lumo_browser::Unresolved::Failed(failure)) => return Err(failure.into()),
        Err(lumo_browser::Unresolved::NotListed) => panic!("no page tool {name}"),
    };
    page_tool(&tool).call(session.clone(), input).await
}

async fn wait_for(session: &Arc<Session>, mut cond: impl FnMut(&[lumo_browser::PageTool]) -> bool) -> bool {
    for _ in 0..100 {
        if cond(&session.page_tools()) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn names(session: &Session) -> Vec<String> {
    session.page_tools().iter().map(|t| t.name.clone()).collect()
}

fn page_json(out: &ToolOutput) -> Value {
    serde_json::from_str(out.page_text.as_deref().unwrap_or("null")).unwrap()
}

#[tokio::test]
async fn discovery_follows_registration_and_page_state() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/basic.html"), 9).await;
    let tools = session.page_tools();
    let by = |n: &str| tools.iter().find(|t| t.name == n).cloned().unwrap();
    assert_eq!(by("search.products").exposed.as_deref(), Ok("webmcp_search_products"));
    assert!(by("echo").read_only && !by("echo").consequential);
    assert!(by("buy").consequential && by("buy").hints().destructive);
    assert!(by("search.products").untrusted_content);
    assert!(by("subscribe").declarative, "the <form toolname> is a tool");
    assert_eq!(by("echo").origin, base);
    assert!(by("echo").main_frame);

    // A button registers and unregisters a tool.
    eval(&session, "document.getElementById('toggle').click()").await;
    assert!(wait_for(&session, |t| t.iter().any(|t| t.name == "extra")).await, "extra registered");
    eval(&session, "document.getElementById('toggle').click()").await;
    assert!(wait_for(&session, |t| !t.iter().any(|t| t.name == "extra")).await, "extra unregistered");
    // Context-bound registration: aborting the signal unregisters.
    eval(&session, "document.getElementById('abort').click()").await;
    assert!(wait_for(&session, |t| !t.iter().any(|t| t.name == "scoped")).await, "scoped unregistered");

    // webmcp_list shows them.
    let listed = builtin(&session, "webmcp_list", json!({})).await.unwrap();
    let list = listed.structured.unwrap();
    assert!(list["tools"].as_array().unwrap().iter().any(|t| t["exposedName"] == "webmcp_echo"));

    // A reload drops the old document's tools (Chromium sends no toolsRemoved) and the new ones come back once.
    builtin(&session, "browser_navigate", json!({"go": "reload"})).await.unwrap();
    assert!(wait_for(&session, |t| t.len() == 9).await, "after reload: {:?}", names(&session));
    session.shutdown().await;
}

#[tokio::test]
async fn invocation_results_errors_and_big_outputs() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/basic.html"), 9).await;

    let out = call(&session, "webmcp_echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(out.structured, Some(json!({"echo": "hi"})));
    assert_eq!(page_json(&out), json!({"echo": "hi"}));

    let out = call(&session, "search.products", json!({"q": "tea", "limit": 1})).await.unwrap();
    assert_eq!(out.structured, Some(json!({"items": ["tea 1"]})));

    // The page's error text is page content: it comes as fenced page text, never in lumo's own message.
    let err = call(&session, "webmcp_fail", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::OperationFailed);
    assert!(!err.message.contains("the shop is closed"), "{}", err.message);
    assert!(err.page_text.unwrap_or_default().contains("the shop is closed"));

    let out = call(&session, "webmcp_big", json!({"n": 20000})).await.unwrap();
    assert_eq!(out.structured.unwrap()["rows"].as_array().unwrap().len(), 20000);

    // webmcp_call runs only what the calling session listed: the host routes it with that
    // session's bindings; on its own it has none.
    let err = builtin(&session, "webmcp_call", json!({"name": "echo", "input": {"text": "x"}})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{}", err.message);
    session.shutdown().await;
}

#[tokio::test]
async fn a_dropped_call_cancels_the_invocation() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/basic.html"), 9).await;
    let slow = call(&session, "webmcp_slow", json!({"ms": 30000}));
    assert!(tokio::time::timeout(Duration::from_millis(800), slow).await.is_err(), "slow must still run");
    let mut aborted = Value::Null;
    for _ in 0..40 {
        aborted = eval(&session, "window.slowAborted || 0").await;
        if aborted == json!(1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(eval(&session, "window.slowStarted || 0").await, json!(1));
    assert_eq!(aborted, json!(1), "WebMCP.cancelInvocation aborted the tool's signal");
    session.shutdown().await;
}

#[tokio::test]
async fn navigation_and_stale_context() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/basic.html"), 9).await;
    // The agent is shown the tools (tools/list or webmcp_list).
    list(&session);

    // A tool that navigates: the answer says so.
    let out = call(&session, "webmcp_go_away", json!({})).await.unwrap();
    assert!(out.text.contains("navigated the page"), "{}", out.text);
    // Where it went is the page's (a URL can carry a token): page text, fenced by the gate.
    assert!(out.page_text.as_deref().unwrap_or_default().contains("other.html"), "{out:?}");
    assert!(!out.text.contains("other.html"), "{}", out.text);
    assert!(
        wait_for(&session, |t| t.len() == 1 && t[0].description.contains("different")).await,
        "{:?}",
        names(&session)
    );

    // other.html registers an `echo` too: the old name must not run it.
    let err = call(&session, "webmcp_echo", json!({"text": "x"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleContext, "{}", err.message);
    let err = call(&session, "webmcp_buy", json!({"item": "x"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleContext, "{}", err.message);

    // Listed again: the new echo runs.
    list(&session);
    let out = call(&session, "webmcp_echo", json!({"text": "x"})).await.unwrap();
    assert_eq!(out.structured, Some(json!({"other": "x"})));

    // A handle bound before a reload is stale after it, even with the same name.
    let bound = session.resolve_page_tool("webmcp_echo", &bindings(&session)).unwrap();
    builtin(&session, "browser_navigate", json!({"go": "reload"})).await.unwrap();
    assert!(wait_for(&session, |t| t.len() == 1).await);
    let err = page_tool(&bound).call(session.clone(), json!({"text": "x"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleContext, "{}", err.message);
    let err = call(&session, "webmcp_echo", json!({"text": "x"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleContext, "{}", err.message);
    session.shutdown().await;
}

#[tokio::test]
async fn declarative_form_tool() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/basic.html"), 9).await;
    let out = call(&session, "webmcp_subscribe", json!({"email": "a@example.com"})).await.unwrap();
    let s = out.structured.unwrap();
    assert_eq!(s["declarative"], true);
    assert!(out.text.contains("Form tool"), "{}", out.text);
    if s["navigated"] == false {
        assert_eq!(eval(&session, "document.querySelector('input[name=email]').value").await, json!("a@example.com"));
    }
    session.shutdown().await;
}

#[tokio::test]
async fn iframes_and_duplicate_names() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/frames.html"), 8).await;
    let tools = session.page_tools();
    let dups: Vec<_> = tools.iter().filter(|t| t.name == "dup").collect();
    assert_eq!(dups.len(), 3, "main + two iframes");
    assert!(dups[0].main_frame && dups[0].exposed.is_ok(), "the main frame registered first");
    assert!(dups[1..].iter().all(|t| t.exposed.as_ref().is_err_and(|e| e.contains("first come first served"))));
    let under = tools.iter().find(|t| t.name == "dup_x").unwrap();
    assert!(under.exposed.is_err(), "dup_x collides with dup.x after mapping");
    assert!(tools.iter().any(|t| t.name.len() == 60 && t.exposed.as_ref().is_err_and(|e| e.contains("64"))));
    let out = call(&session, "webmcp_dup", json!({})).await.unwrap();
    assert_eq!(out.structured, Some(json!({"from": "main"})));
    let out = call(&session, "webmcp_child_allowed", json!({})).await.unwrap();
    assert_eq!(out.structured, Some(json!({"from": "child allowed"})));
    // A removed iframe takes its tools along.
    eval(&session, "document.getElementById('allowed').remove()").await;
    assert!(wait_for(&session, |t| !t.iter().any(|t| t.name == "child_allowed")).await);
    session.shutdown().await;
}

#[tokio::test]
async fn without_the_feature_there_is_no_model_context() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec!["--disable-features=WebMCP".into()]);
    builtin(&session, "browser_navigate", json!({"url": format!("{base}/basic.html")})).await.unwrap();
    assert!(!session.webmcp_available().await.unwrap(), "--disable-features=WebMCP turns it off");
    assert_eq!(session.wait_for_page_tools(1, Duration::from_secs(1)).await.unwrap(), 0);
    session.shutdown().await;

    let session = session_with(vec![]);
    builtin(&session, "browser_navigate", json!({"url": format!("{base}/basic.html")})).await.unwrap();
    assert!(session.webmcp_available().await.unwrap());
    session.shutdown().await;
}

#[tokio::test]
async fn tools_of_a_cross_origin_frame_are_listed_and_run_in_its_own_process() {
    let server = FixtureServer::builder().folder("webmcp").start().await;
    let base = server.base();
    let session = session_with(vec![]);
    open(&session, &format!("{base}/cross.html"), 2).await;
    let port = base.rsplit(':').next().unwrap();
    let tools = session.page_tools();
    let plain = tools.iter().find(|t| t.name == "child_plain").cloned().unwrap();
    assert!(!plain.main_frame);
    assert_eq!(plain.origin, format!("http://localhost:{port}"));
    let out = call(&session, "webmcp_child_plain", json!({})).await.unwrap();
    assert_eq!(page_json(&out), json!({"from": "child plain"}));
    session.shutdown().await;
}

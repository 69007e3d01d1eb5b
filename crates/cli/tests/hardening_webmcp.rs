//! Issue 8, WebMCP page tools: each fix pinned through a real MCP client (rmcp
//! over stdio, pinned to 2025-06-18 and 2026-07-28; the Python `mcp` SDK over
//! Streamable HTTP) or the `lumo webmcp` CLI, against real Chromium.
//!
//! The pages are served cacheable (`Cache-Control: max-age`): the
//! back/forward cache keeps only pages not sent `no-store`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Answer, FixtureServer, Lumo, lumo_command};
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Serves `fixtures/webmcp/` on 127.0.0.1 (so also as `localhost`), cacheable.
async fn serve() -> FixtureServer {
    FixtureServer::builder().folder("webmcp").cache_control("max-age=60").start().await
}

/// `lumo serve` on stdio, with an rmcp client pinned to `version`.
async fn stdio_client(version: ProtocolVersion) -> RunningService<RoleClient, ClientConfig> {
    let mut command = lumo_command();
    command.arg("serve");
    let transport = TokioChildProcess::new(command).expect("spawn lumo serve");
    let mut config = ClientConfig::default();
    config.protocol_version = version;
    tokio::time::timeout(Duration::from_secs(30), config.serve(transport))
        .await
        .expect("lumo answers within 30 s")
        .expect("the MCP session starts")
}

async fn call(client: &RunningService<RoleClient, ClientConfig>, name: &str, args: Value) -> Answer {
    try_call(client, name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"))
}

async fn try_call(
    client: &RunningService<RoleClient, ClientConfig>,
    name: &str,
    args: Value,
) -> Result<Answer, rmcp::service::ServiceError> {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = args.as_object().cloned();
    let result = tokio::time::timeout(Duration::from_secs(90), client.call_tool(params)).await.expect("answers")?;
    Ok(Answer { tool: name.to_string(), result })
}

/// `window.ran` of the page: how often its `transfer` ran ("undefined" before its script did).
async fn ran(client: &RunningService<RoleClient, ClientConfig>) -> String {
    call(client, "devtools_evaluate", json!({"expression": "String(window.ran)"})).await.page_text().trim().to_string()
}

/// Opens a page that registers `transfer` from an inline script and waits for it, without listing.
async fn open_transfer(client: &RunningService<RoleClient, ClientConfig>, url: &str) {
    assert!(!call(client, "browser_navigate", json!({"url": url})).await.is_error());
    for _ in 0..100 {
        if ran(client).await == "0" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} did not register its tool");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_page_tool_is_refused_and_unlisted_names_are_unknown_over_stdio() {
    let server = serve().await;
    let port = server.port;
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2026_07_28] {
        let client = stdio_client(version.clone()).await;
        open_transfer(&client, &format!("http://127.0.0.1:{port}/transfer.html")).await;

        // Item 14: never listed → a plain unknown tool, not "stale … list them again".
        let unknown = try_call(&client, "webmcp_transfer", json!({})).await;
        let error = unknown.expect_err("a never-listed page tool is unknown").to_string();
        assert!(error.contains("unknown tool") && !error.contains("stale"), "{version}: {error}");
        let through_call = call(&client, "webmcp_call", json!({"name": "transfer", "input": {}})).await;
        assert!(through_call.is_error(), "{version}: {}", through_call.text());
        assert_eq!(through_call.error_code(), "not_found", "{version}: {}", through_call.text());
        assert_eq!(ran(&client).await, "0", "{version}: nothing ran");

        // Item 1: listed on 127.0.0.1, then the page is another origin's with a tool of the same name.
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "webmcp_transfer"), "{version}");
        open_transfer(&client, &format!("http://localhost:{port}/transfer.html")).await;
        let stale = call(&client, "webmcp_transfer", json!({"amount": 1})).await;
        assert_eq!(stale.error_code(), "stale_context", "{version}: {}", stale.text());
        assert_eq!(ran(&client).await, "0", "{version}: localhost's transfer must not run");
        // A name that was listed and is simply gone is stale too; one never seen is unknown.
        let never = try_call(&client, "webmcp_nope", json!({})).await;
        assert!(never.expect_err("unknown").to_string().contains("unknown tool"), "{version}");

        client.list_all_tools().await.expect("tools/list");
        let fresh = call(&client, "webmcp_transfer", json!({"amount": 1})).await;
        assert!(!fresh.is_error(), "{version}: {}", fresh.text());
        assert_eq!(fresh.structured()["ranOn"], format!("localhost:{port}"), "{version}");
        let _ = client.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_call_only_what_they_listed_and_get_tool_never_binds() {
    let server = serve().await;
    let port = server.port;
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(python.is_file(), "the Python mcp SDK is missing: run scripts/setup --tests");
    let http_port = common::free_port();
    let mut lumo = lumo_command()
        .args(["serve", "--http", &format!("127.0.0.1:{http_port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lumo serve --http");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", http_port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hardening_webmcp_http.py");
    let out = tokio::time::timeout(
        Duration::from_secs(240),
        tokio::process::Command::new(python)
            .arg(script)
            .arg(format!("http://127.0.0.1:{http_port}/mcp"))
            .arg(port.to_string())
            .output(),
    )
    .await
    .expect("the Python client finishes within 240 s")
    .expect("run the Python client");
    let _ = lumo.kill().await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("all ok"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_tool_descriptions_schemas_and_counts_are_bounded() {
    let server = serve().await;
    let port = server.port;
    let lumo = Lumo::start().await;
    lumo.open(&format!("http://127.0.0.1:{port}/flood.html")).await;
    // 1,001 registrations: wait until they are all in.
    let mut listed = Value::Null;
    for _ in 0..100 {
        listed = lumo.ok("webmcp_list", json!({})).await.structured();
        if listed["tools"].as_array().map_or(0, Vec::len) + listed["refusedCount"].as_u64().unwrap_or(0) as usize
            >= 1001
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(listed["tools"].as_array().map(Vec::len), Some(64), "64 exposed per tab");
    assert_eq!(listed["refusedCount"], 937, "the rest refused visibly");
    let refused = listed["refused"].as_array().expect("refused list");
    assert!(refused[0]["refused"].as_str().is_some_and(|r| r.contains("inputSchema is")), "{}", refused[0]);
    assert!(refused[1]["refused"].as_str().is_some_and(|r| r.contains("64 page tools")), "{}", refused[1]);

    let tools = lumo.tools().await;
    let size = serde_json::to_string(&tools).expect("serialize").len();
    assert!(size < 300_000, "tools/list is {size} bytes");
    let page: Vec<_> = tools.iter().filter(|t| t.name.starts_with("webmcp_tool_")).collect();
    assert_eq!(page.len(), 64);
    assert!(!tools.iter().any(|t| t.name == "webmcp_huge_schema"));
    for t in page {
        let d = t.description.as_deref().unwrap_or_default();
        assert!(d.starts_with("[page tool \"tool_") && d.contains(&format!("from http://127.0.0.1:{port}")), "{d}");
        assert!(d.chars().count() < 1300 && d.contains("cut by lumo"), "{} chars: {d}", d.chars().count());
    }
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_tools_survive_a_back_forward_cache_restore() {
    let server = serve().await;
    let port = server.port;
    let lumo = Lumo::start().await;
    lumo.open(&format!("http://127.0.0.1:{port}/bf-a.html")).await;
    lumo.open(&format!("http://127.0.0.1:{port}/bf-b.html")).await;
    lumo.ok("browser_navigate", json!({"go": "back"})).await;
    let mut names = Vec::new();
    for _ in 0..50 {
        let listed = lumo.ok("webmcp_list", json!({})).await.structured();
        names = listed["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .map(str::to_string)
            .collect();
        if !names.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(names, ["alpha"], "A's tool is back and B's is gone");
    let answer = lumo.ok("webmcp_alpha", json!({})).await;
    assert_eq!(
        answer.structured(),
        json!({"page": "a", "restored": true, "untrustedData": true}),
        "restored from the cache: {}",
        answer.text()
    );
    lumo.stop().await;
}

/// Opens `shapes.html` and lists its tools (so they can be called).
async fn open_shapes(lumo: &Lumo, port: u16) {
    lumo.open(&format!("http://127.0.0.1:{port}/shapes.html")).await;
    for _ in 0..50 {
        if lumo.ok("webmcp_list", json!({})).await.structured()["tools"].as_array().map_or(0, Vec::len) >= 6 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("shapes.html did not register its tools");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_reported_failures_are_errors_and_mcp_shaped_answers_are_unwrapped() {
    let server = serve().await;
    let port = server.port;
    let lumo = Lumo::start().await;
    open_shapes(&lumo, port).await;

    // Item 11: {ok:false, isError:true, error} is a failure, the page's code and message fenced.
    let refused = lumo.fails("webmcp_refuse", json!({}), "operation_failed").await;
    assert!(refused.page_text().contains("INSUFFICIENT_FUNDS"), "{}", refused.text());
    assert!(refused.page_text().contains("not enough money on the card"), "{}", refused.text());
    assert!(!refused.text().split("<untrusted").next().unwrap_or_default().contains("INSUFFICIENT_FUNDS"));
    assert_eq!(
        refused.structured()["pageError"],
        json!({"code": "INSUFFICIENT_FUNDS", "message": "not enough money on the card"})
    );

    // Item 12: MCP's own shape: text as (fenced) text, images as images, isError honoured.
    let text = lumo.ok("webmcp_mcp_text", json!({})).await;
    assert_eq!(text.page_text(), "hello from an MCP-shaped tool", "{}", text.text());
    assert!(!text.text().contains("\"content\""), "not double-wrapped: {}", text.text());
    let image = lumo.ok("webmcp_mcp_image", json!({})).await;
    assert_eq!(image.page_text(), "a red pixel");
    let images = image.images();
    assert_eq!(images.len(), 1, "{}", image.text());
    assert_eq!(images[0].0, "image/png");
    assert!(images[0].1.starts_with("iVBORw0KGgo") && !image.text().contains("iVBORw0KGgo"));
    let error = lumo.fails("webmcp_mcp_error", json!({}), "operation_failed").await;
    assert_eq!(error.page_text(), "the cart is empty");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_tool_that_moves_the_page_says_so() {
    let server = serve().await;
    let port = server.port;
    let lumo = Lumo::start().await;
    open_shapes(&lumo, port).await;
    let pushed = lumo.ok("webmcp_push", json!({})).await;
    assert!(pushed.text().contains("The page's URL changed"), "{}", pushed.text());
    // The URL is the page's (it can carry a token): inside the fence, not in lumo's words.
    let new_url = format!("url: http://127.0.0.1:{port}/shapes.html?step=2");
    assert!(pushed.page_text().contains(&new_url), "{}", pushed.text());
    assert_eq!(pushed.text().matches("shapes.html?step=2").count(), 1, "{}", pushed.text());
    let moved = lumo.ok("webmcp_move", json!({})).await;
    assert!(moved.text().contains("The page navigated"), "{}", moved.text());
    let page = moved.page_text();
    assert!(page.contains(&format!("url before: http://127.0.0.1:{port}/shapes.html?step=2")), "{}", moved.text());
    assert!(page.contains(&format!("url: http://127.0.0.1:{port}/done.html")), "{}", moved.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_tool_reports_the_document_title_not_a_url_placeholder() {
    let server = serve().await;
    let port = server.port;
    let lumo = Lumo::start().await;
    lumo.open(&format!("http://127.0.0.1:{port}/ocean-form.html")).await;
    for _ in 0..50 {
        if lumo.ok("webmcp_list", json!({})).await.structured()["tools"].as_array().map_or(0, Vec::len) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let answer = lumo.ok("webmcp_open_door", json!({"door": "blue"})).await;
    assert_eq!(answer.structured()["title"], "The ocean behind the door", "{}", answer.text());
    assert_eq!(answer.structured()["url"], format!("http://127.0.0.1:{port}/ocean.html?door=blue"));
    assert!(answer.page_text().contains("title: The ocean behind the door"), "{}", answer.text());
    lumo.stop().await;
}

/// Runs `lumo webmcp …` and returns (exit code, stdout, stderr).
async fn lumo_cli(args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(120), lumo_command().args(args).output())
        .await
        .expect("lumo finishes within 120 s")
        .expect("run lumo");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webmcp_list_waits_for_late_registrations_and_counts_the_missing() {
    let server = serve().await;
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/staggered.html");
    // Tools come at 0, 100, 600 and 1,500 ms: all six are listed.
    let (code, stdout, stderr) = lumo_cli(&["webmcp", "list", &url, "--json"]).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let tools: Value = serde_json::from_str(&stdout).expect("JSON");
    let mut names: Vec<&str> = tools.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    names.sort();
    assert_eq!(names, ["t0a", "t0b", "t100", "t1500", "t600a", "t600b"], "{stderr}");
    // Seven expected, six registered: say so, not "unsupported". The page takes
    // longer to load (3.5 s) than --wait: the wait counts from when the page is
    // open, not from lumo's start (a browser slow to start or a page slow to load
    // used to eat the wait, and the late tools went missing).
    let slow = format!("{url}?delay=3500");
    let (code, stdout, stderr) = lumo_cli(&["webmcp", "list", &slow, "--wait-for-tools", "7", "--wait", "3"]).await;
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("registered 6 of the 7 expected") && !stderr.contains("unsupported"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webmcp_call_exits_non_zero_on_a_page_failure() {
    let server = serve().await;
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/shapes.html");
    let (code, stdout, stderr) = lumo_cli(&["webmcp", "call", &url, "refuse"]).await;
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stdout.contains("INSUFFICIENT_FUNDS"), "{stdout}");
    let (code, stdout, stderr) = lumo_cli(&["webmcp", "call", &url, "mcp_text"]).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("hello from an MCP-shaped tool"), "{stdout}");
}

/// Runs lumo with stdout a pipe whose reading end is already closed (`lumo … | head` after head quit).
fn run_into_closed_pipe(args: &[&str]) -> (i32, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    if std::env::var_os("LUMO_BROWSER").is_none() && Path::new("/usr/lib/chromium/chromium").is_file() {
        command.env("LUMO_BROWSER", "/usr/lib/chromium/chromium");
    }
    let mut child = command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn lumo");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("lumo ends");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_into_a_closed_pipe_exits_quietly() {
    let server = serve().await;
    let port = server.port;
    let (code, stderr) = tokio::task::spawn_blocking(|| run_into_closed_pipe(&["tools"])).await.expect("join");
    assert!(code == 0 && !stderr.contains("panicked"), "lumo tools: exit {code}\n{stderr}");
    let url = format!("http://127.0.0.1:{port}/shapes.html");
    let (code, stderr) =
        tokio::task::spawn_blocking(move || run_into_closed_pipe(&["webmcp", "call", &url, "mcp_text"]))
            .await
            .expect("join");
    assert!(code == 0 && !stderr.contains("panicked"), "lumo webmcp call: exit {code}\n{stderr}");
}

//! The devtools and network tools (devtools_console, devtools_evaluate,
//! network_requests, network_request) called at the library level against a
//! real headless Chromium and inline pages from the test kit's fixture server,
//! and the size and order of every built-in tool's schema.

use std::time::{Duration, Instant};

use lumo_browser::builtin_tools;
use lumo_protocol::ErrorCode;
use lumo_testkit::golden::golden_tool_names;
use lumo_testkit::{Browser, FixtureServer, Route};
use serde_json::json;

#[tokio::test]
async fn devtools_console_and_evaluate() {
    let server = FixtureServer::builder()
        .no_files()
        .route(
            "/",
            Route::html(
                r#"<title>devtools</title><h1 id="h">Heading</h1>
        <script>
          window.pageVar = 42;
          console.log('hello', 1, {a: 1});
          console.info('info line');
          console.debug('debug line');
          console.warn('careful');
          console.error('bad thing');
          console.log('again'); console.log('again'); console.log('again');
          console.log('x'.repeat(1000));
          setTimeout(() => { throw new Error('boom'); }, 0);
        </script>"#,
            ),
        )
        .start()
        .await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    b.ok("page_wait", json!({"time_ms": 100})).await;

    let out = b.ok("devtools_console", json!({})).await;
    let log = out.page_text.unwrap_or_default();
    assert!(out.text.starts_with("10 console messages, newest last:"), "{}", out.text);
    assert!(log.contains("[log] hello 1 {a: 1} (/:4)"), "{log}");
    assert!(log.contains("[info] info line") && log.contains("[debug] debug line"), "{log}");
    assert!(log.contains("[warning] careful") && log.contains("[error] bad thing"), "{log}");
    assert!(log.contains("[log] again (") && log.contains(") ×3"), "{log}");
    assert!(log.contains("Uncaught Error: boom") || log.contains("Error: boom"), "{log}");
    assert!(log.lines().all(|l| l.len() < 500), "{log}");
    assert!(log.lines().last().unwrap_or_default().contains("boom"), "{log}");

    let out = b.ok("devtools_console", json!({"level": "warning"})).await;
    let log = out.page_text.unwrap_or_default();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(!log.contains("[log]") && log.contains("[warning]") && log.contains("boom"), "{log}");
    let out = b.ok("devtools_console", json!({"limit": 1, "clear": true})).await;
    assert!(out.text.starts_with("Last 1 of 10"), "{}", out.text);
    assert!(out.page_text.unwrap_or_default().contains("boom"));
    let out = b.ok("devtools_console", json!({})).await;
    assert_eq!(out.text, "No console messages.");
    b.fails("devtools_console", json!({"limit": 0}), ErrorCode::InvalidArguments, "limit:").await;
    b.fails("devtools_console", json!({"level": "loud"}), ErrorCode::InvalidArguments, "loud").await;

    let out = b.ok("devtools_evaluate", json!({"expression": "1 + 2"})).await;
    assert_eq!(out.text, "Result (number):");
    assert_eq!(out.page_text.as_deref(), Some("3"));
    // The page's own world: its globals are visible.
    assert_eq!(b.eval("pageVar").await, "42");
    assert_eq!(
        b.eval("({a: 1, b: [1, 'two', null], f() {}})").await,
        r#"{"a":1,"b":[1,"two",null],"f":"[Function f]"}"#
    );
    assert_eq!(b.eval("await new Promise((r) => setTimeout(() => r('late'), 20))").await, "late");
    assert_eq!(b.eval("(() => { const a = {n: 1}; a.self = a; return a; })()").await, r#"{"n":1,"self":"[Circular]"}"#);
    assert_eq!(b.eval("document.querySelectorAll('h1')").await, r#"["<h1#h>"]"#);
    assert_eq!(b.eval("Promise.resolve(7)").await, "7");
    assert_eq!(b.eval("''").await, "\"\"");
    assert_eq!(b.eval("undefined").await, "undefined");
    assert_eq!(b.eval("10n ** 20n").await, "100000000000000000000n");
    let out = b.ok("devtools_evaluate", json!({"function": "() => document.title"})).await;
    assert_eq!(out.page_text.as_deref(), Some("devtools"));

    let heading = b.found_ref("heading", "Heading").await;
    let out = b
        .ok(
            "devtools_evaluate",
            json!({"function": "function (el) { return [this === el, el.id, window.pageVar]; }", "ref": heading}),
        )
        .await;
    assert_eq!(out.page_text.as_deref(), Some("[true,\"h\",42]"));

    let out = b.ok("devtools_evaluate", json!({"expression": "'é'.repeat(50000)", "max_bytes": 1001})).await;
    let body = out.page_text.unwrap_or_default();
    assert!(body.starts_with("éé") && body.contains("\n[cut at 1001 bytes of about 100.0 KB"), "{body}");
    assert!(body.len() < 1200);
    let out = b
        .ok("devtools_evaluate", json!({"expression": "Array.from({length: 10000}, (_, i) => i)", "max_bytes": 100}))
        .await;
    assert!(out.page_text.unwrap_or_default().contains("[cut at 100 bytes"));

    b.fails("devtools_evaluate", json!({"expression": "throw new Error('nope')"}), ErrorCode::OperationFailed, "nope")
        .await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "Promise.reject(new TypeError('later'))"}),
        ErrorCode::OperationFailed,
        "later",
    )
    .await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "missingName"}),
        ErrorCode::OperationFailed,
        "missingName is not defined",
    )
    .await;
    b.fails("devtools_evaluate", json!({}), ErrorCode::InvalidArguments, "exactly one").await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "1", "function": "() => 1"}),
        ErrorCode::InvalidArguments,
        "exactly one",
    )
    .await;
    b.fails("devtools_evaluate", json!({"expression": "1", "ref": heading}), ErrorCode::InvalidArguments, "ref:").await;
    b.fails("devtools_evaluate", json!({"function": "el => el", "ref": "h1"}), ErrorCode::InvalidArguments, "ref:")
        .await;
    b.fails("devtools_evaluate", json!({"expression": " "}), ErrorCode::InvalidArguments, "expression:").await;
    b.fails("devtools_evaluate", json!({"expression": "1", "max_bytes": 5}), ErrorCode::InvalidArguments, "max_bytes:")
        .await;
    b.fails(
        "devtools_evaluate",
        json!({"function": "el => el", "ref": "e99999"}),
        ErrorCode::NotFound,
        "never given out",
    )
    .await;
    b.close().await;
}

#[tokio::test]
async fn network_requests_list_filter_and_detail() {
    let big: String = format!("[{}]", (0..2000).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let server = FixtureServer::builder()
        .no_files()
        .route("/", Route::html(
            r#"<title>network</title><img src="/missing.png">
            <script>
              fetch('/data.json').then((r) => r.json()).then((d) => { document.title = 'got ' + d.items.length; });
              fetch('/echo', {method: 'POST', body: JSON.stringify({q: 'lumo'}), headers: {'Content-Type': 'application/json'}});
            </script>"#))
        .route("/data.json", Route::json(r#"{"items":[1,2,3]}"#))
        .route("/big.json", Route::json(big))
        .route("/echo", Route::echo("application/json"))
        .route("/hop", Route::redirect("/data.json?hopped"))
        .route("/pixel.png", Route::new("image/png", "\u{89}PNG\r\n\u{1a}\n\0\0\0"))
        .start()
        .await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    b.ok("page_wait", json!({"network_idle": true})).await;

    let out = b.ok("network_requests", json!({})).await;
    let list = out.page_text.unwrap_or_default();
    assert!(
        out.text.ends_with("requests since the page loaded (newest last; details: network_request {id}):"),
        "{}",
        out.text
    );
    let doc = list.lines().find(|l| l.contains(" document ")).unwrap_or_else(|| panic!("{list}"));
    assert!(doc.starts_with("#") && doc.contains(" GET 200 document http://127.0.0.1:"), "{doc}");
    assert!(list.lines().any(|l| l.contains("GET 404 image") && l.contains("/missing.png (")), "{list}");
    let data = list.lines().find(|l| l.contains("/data.json")).unwrap_or_else(|| panic!("{list}"));
    assert!(data.contains(" GET 200 fetch ") && data.ends_with(" B)"), "{data}");
    let data_id = data[1..data.find(' ').unwrap_or(1)].to_string();

    let out = b.ok("network_requests", json!({"type": "FETCH"})).await;
    let fetches = out.page_text.unwrap_or_default();
    assert_eq!(fetches.lines().count(), 2, "{fetches}");
    assert!(fetches.lines().all(|l| l.contains(" fetch ")), "{fetches}");
    let out = b.ok("network_requests", json!({"url": "data\\.json$"})).await;
    assert_eq!(out.page_text.unwrap_or_default().lines().count(), 1);
    let out = b.ok("network_requests", json!({"status": "4xx"})).await;
    let missing = out.page_text.unwrap_or_default();
    assert!(missing.contains("/missing.png") && !missing.contains("data.json"), "{missing}");
    let out = b.ok("network_requests", json!({"status": 404, "type": "image,xhr"})).await;
    assert!(out.page_text.unwrap_or_default().contains("/missing.png"));
    let out = b.ok("network_requests", json!({"status": "failed"})).await;
    assert!(out.text.starts_with("No matching requests"), "{}", out.text);
    let out = b.ok("network_requests", json!({"limit": 1})).await;
    assert!(out.text.starts_with("Last 1 of "), "{}", out.text);

    let out = b.ok("network_request", json!({"id": format!("#{data_id}"), "body": true})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(
        detail
            .starts_with(&format!("#{data_id} GET {base}/data.json\nstatus: 200, type: fetch, mime: application/json")),
        "{detail}"
    );
    assert!(detail.contains("response headers:\n") && detail.contains("  X-Fixture: yes"), "{detail}");
    assert!(
        detail.contains("request headers:\n  Referer: ") && detail.contains("  (not shown: User-Agent"),
        "{detail}"
    );
    assert!(detail.ends_with("body (17 B):\n{\"items\":[1,2,3]}"), "{detail}");
    let out = b.ok("network_request", json!({"id": data_id.parse::<u64>().expect("number")})).await;
    assert!(!out.page_text.unwrap_or_default().contains("body"));

    let out = b.ok("network_requests", json!({"url": "/echo"})).await;
    let echo = out.page_text.unwrap_or_default();
    let echo_id = echo[1..echo.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": echo_id, "body": true})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(detail.contains(" POST ") && detail.contains("post data (12 B):\n{\"q\":\"lumo\"}"), "{detail}");
    assert!(detail.ends_with("body (12 B):\n{\"q\":\"lumo\"}"), "{detail}");

    b.eval("fetch('/big.json'); fetch('/pixel.png'); 1").await;
    b.ok("page_wait", json!({"network_idle": true})).await;
    let out = b.ok("network_requests", json!({"url": "big"})).await;
    let line = out.page_text.unwrap_or_default();
    let big_id = line[1..line.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": big_id, "body": true, "max_bytes": 100})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(
        detail.contains("body (8.9 KB):\n[0,1,2,") && detail.ends_with("[cut at 100 bytes; raise max_bytes for more]"),
        "{detail}"
    );
    let out = b.ok("network_requests", json!({"url": "pixel"})).await;
    let line = out.page_text.unwrap_or_default();
    let pixel_id = line[1..line.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": pixel_id, "body": true})).await;
    assert!(out.page_text.unwrap_or_default().contains("of image/png (binary, not shown)"));

    // A redirect is one entry (its last hop), and it does not keep the network busy.
    b.eval("fetch('/hop'); 1").await;
    let started = Instant::now();
    b.ok("page_wait", json!({"network_idle": true, "timeout_ms": 3000})).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    let out = b.ok("network_requests", json!({"url": "hop"})).await;
    let hops = out.page_text.unwrap_or_default();
    assert!(
        hops.lines().count() == 1 && hops.contains("GET 200 fetch ") && hops.contains("/data.json?hopped"),
        "{hops}"
    );

    b.fails("network_request", json!({"id": 99999}), ErrorCode::NotFound, "network_requests").await;
    b.fails("network_request", json!({"id": "abc"}), ErrorCode::InvalidArguments, "id:").await;
    b.fails("network_request", json!({"id": 1, "max_bytes": 1}), ErrorCode::InvalidArguments, "max_bytes:").await;
    b.fails("network_requests", json!({"url": "("}), ErrorCode::InvalidArguments, "url:").await;
    b.fails("network_requests", json!({"type": "bogus"}), ErrorCode::InvalidArguments, "type:").await;
    b.fails("network_requests", json!({"status": "6xx"}), ErrorCode::InvalidArguments, "status:").await;
    b.fails("network_requests", json!({"status": true}), ErrorCode::InvalidArguments, "status:").await;
    b.fails("network_requests", json!({"limit": 0}), ErrorCode::InvalidArguments, "limit:").await;

    // A new page starts a new list.
    b.open(&format!("{base}/data.json")).await;
    let out = b.ok("network_requests", json!({})).await;
    assert_eq!(out.page_text.unwrap_or_default().lines().count(), 1);
    b.close().await;
}

/// Every built-in tool keeps its schema small and closed, and lumo-browser
/// defines them in the order of the golden list (`tests/golden/tools.json`).
#[test]
fn builtin_tool_schemas_are_small_closed_and_in_golden_order() {
    let tools = builtin_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
    let golden = golden_tool_names();
    let listed: Vec<&str> = golden.iter().map(String::as_str).filter(|n| names.contains(n)).collect();
    assert_eq!(
        names,
        listed,
        "the built-in tools and their order in tests/golden/tools.json differ; if intended, bless: {}",
        lumo_testkit::golden::BLESS
    );
    for tool in &tools {
        let name = &tool.spec.name;
        let bytes = tool.spec.input_schema.to_string().len() + tool.spec.description.len() + name.len();
        assert!(bytes < 1200, "{name}: {bytes} bytes: {}", tool.spec.input_schema);
        assert_eq!(tool.spec.input_schema["additionalProperties"], json!(false), "{name}");
    }
}

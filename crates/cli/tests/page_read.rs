//! Tools that read the page, family by family (snapshot, find, wait, network,
//! devtools, screenshot, webmcp_list), over stdio MCP: the real `lumo`
//! binary, a real headless Chromium, the pages in `fixtures/` and rmcp's
//! client. Each test starts its own lumo, so a red test's name is the family
//! that broke.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, assert_answer, ref_in, try_ref_in};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_refs_are_stable_scoped_interactive_and_go_stale_on_reload() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let opened = lumo.open(&server.url("login.html")).await;
    assert_eq!(opened.structured()["title"], "Login — lumo fixture");
    assert_answer!(opened, starts_with "Opened:");
    assert!(opened.page_text().starts_with("url: http://127.0.0.1:"), "the URL is page data: {}", opened.text());

    // The snapshot: page content fenced as untrusted, refs on what can be acted on.
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.starts_with("Snapshot:"), "{snapshot}");
    assert!(snapshot.contains(&format!("\nurl: {}\n", server.url("login.html"))), "{snapshot}");
    assert!(snapshot.contains("<untrusted ") && snapshot.contains("</untrusted "), "{snapshot}");
    assert!(snapshot.contains("\ntitle: Login — lumo fixture\n"), "the title line is document.title:\n{snapshot}");
    // A heading has no ref in the snapshot (its section is right below it): page_find gives one.
    assert!(snapshot.contains("\n# Sign in\n"), "{snapshot}");
    let heading =
        lumo.ok("page_find", json!({"role": "heading", "text": "Sign in"})).await.ref_of("heading \"Sign in\"");
    let form = ref_in(&snapshot, "form \"Sign in\"");
    let username = ref_in(&snapshot, "textbox \"Username\"");
    let password = ref_in(&snapshot, "textbox \"Password\"");
    let remember = ref_in(&snapshot, "checkbox \"Remember me\"");
    let submit = ref_in(&snapshot, "button \"Sign in\"");
    let refs = [&heading, &form, &username, &password, &remember, &submit];
    assert_eq!(refs.iter().collect::<BTreeSet<_>>().len(), refs.len(), "refs must differ: {refs:?}");

    // The same element keeps its ref across snapshots.
    let again = lumo.snapshot().await;
    // (The title line may catch up with the document between the two: compare the trees.)
    let tree = |s: &str| s.lines().filter(|l| !l.starts_with("title: ")).collect::<Vec<_>>().join("\n");
    assert_eq!(tree(&again), tree(&snapshot), "two snapshots of an unchanged page differ");
    assert_eq!(ref_in(&again, "button \"Sign in\""), submit);

    // A subtree by ref: the form and what is inside it, not the heading above it.
    let subtree = lumo.ok("page_snapshot", json!({"ref": form})).await.text();
    assert!(subtree.contains(&format!("textbox \"Username\" [{username}]")), "{subtree}");
    assert!(subtree.contains(&format!("button \"Sign in\" [{submit}]")), "{subtree}");
    assert!(!subtree.lines().any(|l| l.trim_start().starts_with('#')), "the subtree holds only the form:\n{subtree}");

    // Interactive: a flat list of actionable elements, no text lines.
    let interactive = lumo.ok("page_snapshot", json!({"interactive": true})).await;
    let body = interactive.page_text();
    assert!(body.contains(&format!("checkbox \"Remember me\" [{remember}]")), "{body}");
    let tree: Vec<&str> = body.lines().filter(|l| !l.starts_with("url: ") && !l.starts_with("title: ")).collect();
    assert!(tree.len() >= 4, "{body}");
    for line in tree {
        assert!(line.contains("[e"), "an interactive snapshot line without a ref: {line}");
        assert!(!line.starts_with(' '), "interactive snapshots are flat: {line}");
    }

    // Log in (page_act.rs checks each step), so the reload below has state to lose.
    lumo.ok("page_type", json!({"ref": username, "text": "alice"})).await;
    lumo.ok("page_type", json!({"ref": password, "text": "secret"})).await;
    lumo.ok("page_click", json!({"ref": submit})).await;
    assert!(lumo.snapshot().await.contains("Welcome, alice"), "the login worked");

    // Stale ref: the reload replaces every element; old refs fail as stale_ref, never hit a new element.
    let reloaded = lumo.ok("browser_navigate", json!({"go": "reload"})).await;
    assert_answer!(reloaded, starts_with "Reloaded.");
    let stale = lumo.fails("page_click", json!({"ref": submit}), "stale_ref").await;
    assert!(stale.error_message().contains(&submit), "{}", stale.error_message());
    lumo.fails("page_snapshot", json!({"ref": form}), "stale_ref").await;
    lumo.fails("page_type", json!({"ref": username, "text": "x"}), "stale_ref").await;
    let fresh = lumo.snapshot().await;
    let new_submit = ref_in(&fresh, "button \"Sign in\"");
    assert_ne!(new_submit, submit, "refs never repeat across documents");
    assert!(!fresh.contains("Welcome"), "{fresh}");
    lumo.ok("page_click", json!({"ref": new_submit})).await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_by_text_role_regex_and_limit() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("login.html")).await;
    let snapshot = lumo.snapshot().await;
    let (form, password, submit) = (
        ref_in(&snapshot, "form \"Sign in\""),
        ref_in(&snapshot, "textbox \"Password\""),
        ref_in(&snapshot, "button \"Sign in\""),
    );
    // page_find: by text and by role.
    let found = lumo.ok("page_find", json!({"text": "sign in", "role": "button"})).await;
    assert_eq!(found.structured()["total"], 1, "{}", found.text());
    assert_eq!(found.ref_of("button \"Sign in\""), submit);
    assert_answer!(found, contains format!("in form \"Sign in\" [{form}]"));
    let textboxes = lumo.ok("page_find", json!({"role": "textbox"})).await;
    assert_eq!(textboxes.structured()["total"], 2, "{}", textboxes.text());
    assert_eq!(textboxes.ref_of("textbox \"Password\""), password);
    let none = lumo.ok("page_find", json!({"text": "no such words anywhere"})).await;
    assert_eq!(none.structured()["total"], 0);
    assert_answer!(none, starts_with "No match");
    lumo.fails("page_find", json!({"regex": "("}), "invalid_arguments").await;
    lumo.fails("page_find", json!({}), "invalid_arguments").await;

    // A long page: one row among 1,000, its button, limits and regexes.
    lumo.open(&server.url("long-list.html")).await;
    let row = lumo.ok("page_find", json!({"text": "Row 777"})).await;
    assert_eq!(row.structured()["total"], 1, "{}", row.text());
    assert_answer!(row, contains "cell \"Row 777\"");
    let button = lumo.ok("page_find", json!({"text": "Select 777", "role": "button"})).await;
    assert_eq!(button.structured()["total"], 1, "{}", button.text());
    assert!(button.ref_of("button \"Select 777\"").starts_with('e'));

    // Limits and regexes.
    let buttons = lumo.ok("page_find", json!({"role": "button", "limit": 3})).await;
    assert_eq!(buttons.structured()["total"], 1000);
    assert_answer!(buttons, starts_with "1000 matches, first 3:");
    assert_eq!(buttons.page_text().lines().count(), 3, "{}", buttons.text());
    let nineties = lumo.ok("page_find", json!({"regex": "^Row 99\\d$"})).await;
    assert_eq!(nineties.structured()["total"], 10, "{}", nineties.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webmcp_list_and_call_on_a_page_without_tools() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("login.html")).await;
    // WebMCP: this page registers no tools.
    let page_tools = lumo.ok("webmcp_list", json!({})).await;
    assert_answer!(page_tools, contains "registered no WebMCP tools");
    let unknown = lumo.call("webmcp_call", json!({"name": "no_such_page_tool", "input": {}})).await;
    assert!(unknown.is_error(), "{}", unknown.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_of_a_long_page_keeps_to_the_budget() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("long-list.html")).await;

    let started = Instant::now();
    let full = lumo.ok("page_snapshot", json!({})).await;
    let took = started.elapsed();
    assert!(full.text().contains("\n Row 1|"), "{}", &full.text()[..2000.min(full.text().len())]);
    assert!(full.page_text().len() <= 100_500, "the default budget is 100 kB: {} bytes", full.page_text().len());
    assert!(took < Duration::from_secs(10), "a snapshot of 6,000 elements took {took:?}");

    // A small budget cuts the snapshot and says so.
    let cut = lumo.ok("page_snapshot", json!({"max_bytes": 2000})).await;
    let body = cut.page_text();
    assert!(body.contains("[truncated at the 2000-byte budget"), "{body}");
    // The budget covers the tree; the url and title lines come on top.
    let kept = body.split("\n[truncated at").next().unwrap_or_default();
    let kept: Vec<&str> = kept.lines().filter(|l| !l.starts_with("url: ") && !l.starts_with("title: ")).collect();
    let kept = kept.join("\n");
    assert!(kept.len() <= 2000, "{} bytes kept over a 2000-byte budget", kept.len());

    // A subtree of the table is the table only.
    let table = ref_in(&full.text(), "table \"Rows\"");
    let sub = lumo.ok("page_snapshot", json!({"ref": table, "max_bytes": 500})).await.text();
    assert!(sub.contains("table \"Rows\"") && !sub.lines().any(|l| l.starts_with('#')), "{sub}");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_reaches_into_shadow_dom_and_frames() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;

    lumo.open(&server.url("shadow.html")).await;
    let snapshot = lumo.snapshot().await;
    let button = ref_in(&snapshot, "button \"Shadow button\"");
    let input = ref_in(&snapshot, "textbox \"Shadow input\"");
    lumo.ok("page_type", json!({"ref": input, "text": "deep"})).await;
    let clicked = lumo.ok("page_click", json!({"ref": button})).await;
    assert_answer!(clicked, contains "Shadow clicked with deep");
    let found = lumo.ok("page_find", json!({"text": "Shadow button"})).await;
    assert_eq!(found.ref_of("button \"Shadow button\""), button);

    // Frames: same-origin content is in the snapshot and can be acted on; a cross-origin frame is listed.
    lumo.open(&server.url("frames.html")).await;
    let snapshot = lumo.snapshot().await;
    let same = ref_in(&snapshot, "iframe \"Same-origin frame\"");
    assert!(try_ref_in(&snapshot, "iframe \"Cross-origin frame\"").is_some(), "{snapshot}");
    let child = ref_in(&snapshot, "button \"Child button\"");
    let frame_line = snapshot.lines().position(|l| l.contains(&format!("[{same}]"))).expect("the frame's line");
    let child_line = snapshot.lines().position(|l| l.contains(&format!("[{child}]"))).expect("the button's line");
    assert_eq!(child_line, frame_line + 2, "the child's content is nested under its frame:\n{snapshot}");
    assert!(snapshot.contains("Inside the child frame."), "{snapshot}");
    lumo.ok("page_click", json!({"ref": child})).await;
    let status =
        lumo.eval("document.getElementById('same').contentDocument.getElementById('child-status').textContent").await;
    assert!(status.starts_with("Child clicked at 127.0.0.1:"), "{status}");
    let found = lumo.ok("page_find", json!({"text": "Child button"})).await;
    assert_eq!(found.ref_of("button \"Child button\""), child);
    // The frame's subtree by ref.
    let sub = lumo.ok("page_snapshot", json!({"ref": same})).await.text();
    assert!(sub.contains(&format!("[{child}]")), "{sub}");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_late_text_refs_and_timeouts() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    // Content that appears later.
    lumo.open(&server.url("slow.html")).await;
    let early = lumo.ok("page_find", json!({"text": "Late button"})).await;
    assert_eq!(early.structured()["total"], 0, "{}", early.text());
    let waited = lumo.ok("page_wait", json!({"text": "Loaded late"})).await;
    assert_answer!(waited, starts_with "Text \"Loaded late\" is on the page");
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains("button \"Late button\""), "{snapshot}");
    let late = ref_in(&snapshot, "button \"Late button\"");
    let timeout = lumo.fails("page_wait", json!({"text": "never there", "timeout_ms": 300}), "timeout").await;
    assert!(timeout.error_message().contains("never there"), "{}", timeout.error_message());
    lumo.ok("page_wait", json!({"ref": late, "timeout_ms": 1000})).await;
    lumo.fails("page_wait", json!({"ref_gone": late, "timeout_ms": 300}), "timeout").await;
    let both = lumo.fails("page_wait", json!({"text": "a", "time_ms": 5}), "invalid_arguments").await;
    assert!(both.error_message().contains("text, time_ms"), "{}", both.error_message());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_requests_list_filter_and_detail() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    // Chromium asks an origin for /favicon.ico once (a 404 here), on the first page: let
    // that be another page, so the 4xx filter below finds nothing on slow.html.
    lumo.open(&server.url("console.html")).await;
    lumo.ok("page_wait", json!({"network_idle": true, "timeout_ms": 5000})).await;
    lumo.open(&server.url("slow.html")).await;
    lumo.ok("page_wait", json!({"text": "Loaded late"})).await;
    let snapshot = lumo.snapshot().await;
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "button \"Fetch slowly\"")})).await;
    lumo.ok("page_wait", json!({"text": "Fetched 3 items", "timeout_ms": 5000})).await;
    lumo.ok("page_wait", json!({"network_idle": true, "timeout_ms": 5000})).await;
    let requests = lumo.ok("network_requests", json!({})).await;
    assert!(
        requests.page_text().contains(&format!("GET 200 document {}", server.url("slow.html"))),
        "{}",
        requests.text()
    );
    let fetches = lumo.ok("network_requests", json!({"type": "fetch"})).await;
    let line = fetches.page_text();
    assert_eq!(line.lines().count(), 1, "{}", fetches.text());
    assert!(line.contains("POST 200 fetch") && line.contains("data.json?delay=800"), "{line}");
    let id: u64 = line
        .trim_start_matches('#')
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a #id first on {line:?}"));
    let detail = lumo.ok("network_request", json!({"id": id, "body": true})).await;
    let detail = detail.page_text();
    assert!(detail.contains("status: 200") && detail.contains("mime: application/json"), "{detail}");
    assert!(detail.contains("post data") && detail.contains(r#"{"want":"items"}"#), "{detail}");
    assert!(detail.contains("lumo-data-json"), "the body is shown:\n{detail}");
    let by_text_id = lumo.ok("network_request", json!({"id": format!("#{id}")})).await;
    assert!(!by_text_id.page_text().contains("lumo-data-json"), "no body unless asked");
    lumo.fails("network_request", json!({"id": 99_999}), "not_found").await;
    let missing = lumo.ok("network_requests", json!({"status": "4xx"})).await;
    assert_answer!(missing, starts_with "No matching requests");
    lumo.fails("network_requests", json!({"url": "("}), "invalid_arguments").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devtools_console_and_evaluate() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("console.html")).await;
    // The uncaught error is thrown from a timer: wait for it to land.
    lumo.ok("page_wait", json!({"time_ms": 200})).await;
    let console = lumo.ok("devtools_console", json!({})).await;
    assert_answer!(console, starts_with "6 console messages");
    for line in [
        "[debug] debug message from console.html",
        "[log] log message from console.html 42",
        "[info] info message from console.html",
        "[warning] warning message from console.html",
        "[error] error message from console.html",
        "[error] Error: uncaught boom from console.html",
    ] {
        assert!(console.page_text().contains(line), "missing {line:?} in:\n{}", console.text());
    }
    let warnings = lumo.ok("devtools_console", json!({"level": "warning"})).await;
    assert_answer!(warnings, starts_with "3 console messages at that level or above");
    assert!(!warnings.page_text().contains("[log]"), "{}", warnings.text());
    let last = lumo.ok("devtools_console", json!({"limit": 1, "clear": true})).await;
    assert_answer!(last, starts_with "Last 1 of 6");
    let empty = lumo.ok("devtools_console", json!({})).await;
    assert_answer!(empty, starts_with "No console messages");

    // devtools_evaluate: a function on a ref's element, JSON results, thrown errors.
    lumo.open(&server.url("pointer.html")).await;
    let snapshot = lumo.snapshot().await;
    let scroller = ref_in(&snapshot, "region \"Scroller\"");
    let tag = lumo.ok("devtools_evaluate", json!({"function": "el => el.id", "ref": scroller})).await;
    assert_eq!(tag.page_text(), "scroller");
    let object =
        lumo.ok("devtools_evaluate", json!({"expression": "({a: 1, list: [1, 2], node: document.body})"})).await;
    assert_answer!(object, starts_with "Result (object");
    assert_eq!(object.page_text(), r#"{"a":1,"list":[1,2],"node":"<body>"}"#);
    let awaited =
        lumo.ok("devtools_evaluate", json!({"expression": "await new Promise(r => setTimeout(() => r(7), 50))"})).await;
    assert_eq!(awaited.page_text(), "7");
    let thrown = lumo.call("devtools_evaluate", json!({"expression": "throw new Error('nope')"})).await;
    assert!(thrown.is_error(), "{}", thrown.text());
    assert_answer!(thrown, contains "nope");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshot_of_a_resized_viewport_full_page_and_element() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("navigate.html")).await;
    // Resize, then screenshots of the viewport, the full page and an element.
    let resized = lumo.ok("browser_resize", json!({"width": 800, "height": 600})).await;
    assert_eq!(resized.text(), "Viewport is 800×600.");
    assert_eq!(lumo.eval("innerWidth + 'x' + innerHeight").await, "800x600");
    let shot = lumo.ok("page_screenshot", json!({})).await;
    assert_answer!(shot, starts_with "Screenshot of the viewport: 800×600 PNG");
    let images = shot.images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].0, "image/png");
    assert!(images[0].1.starts_with("iVBORw0KGgo"), "the data is a base64 PNG");
    let jpeg = lumo.ok("page_screenshot", json!({"full_page": true, "format": "jpeg", "quality": 40})).await;
    assert_eq!(jpeg.images()[0].0, "image/jpeg");
    assert!(jpeg.images()[0].1.starts_with("/9j/"), "the data is a base64 JPEG");
    let heading =
        lumo.ok("page_find", json!({"role": "heading", "text": "Navigation"})).await.ref_of("heading \"Navigation\"");
    let element = lumo.ok("page_screenshot", json!({"ref": heading})).await;
    assert_answer!(element, starts_with format!("Screenshot of {heading}: "));
    let small = lumo.ok("page_screenshot", json!({"full_page": true, "max_bytes": 10_000})).await;
    assert!(small.images()[0].1.len() <= 10_000, "{}", small.text());
    lumo.fails("page_screenshot", json!({"ref": heading, "full_page": true}), "invalid_arguments").await;
    lumo.stop().await;
}

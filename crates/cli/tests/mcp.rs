//! End-to-end tests of `lumo serve` over stdio MCP: the real binary, a real
//! headless Chromium, the pages in `fixtures/` served locally, and rmcp's
//! client. Every tool is called at least once; each test shares one lumo for
//! several checks to keep the run short.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, browser_pid, ref_in, try_ref_in};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

/// Every tool lumo lists, each exercised by a test in this file. A new tool
/// fails `tool_list_is_deterministic_and_strict` until it is added here (and tested).
const COVERED_TOOLS: &[&str] = &[
    "browser_navigate",
    "browser_tabs",
    "browser_resize",
    "page_snapshot",
    "page_find",
    "page_click",
    "page_hover",
    "page_drag",
    "page_type",
    "page_fill_form",
    "page_select",
    "page_check",
    "page_press_key",
    "page_scroll",
    "page_wait",
    "page_screenshot",
    // Covered by tests/record.rs.
    "page_record",
    "page_dialog",
    "file_upload",
    "devtools_console",
    "devtools_evaluate",
    "network_requests",
    "network_request",
    "webmcp_list",
    "webmcp_call",
];

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every object schema with properties, at any depth, must refuse unknown fields.
fn assert_closed_objects(tool: &str, path: &str, schema: &Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") {
                assert_eq!(
                    map.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{tool}: the object schema at {path} must have additionalProperties: false"
                );
            }
            for (key, value) in map {
                assert_closed_objects(tool, &format!("{path}/{key}"), value);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                assert_closed_objects(tool, &format!("{path}/{i}"), value);
            }
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_list_is_deterministic_and_strict() {
    // No browser is needed: listing and argument validation happen before any tool runs.
    let lumo = Lumo::start().await;
    let first = lumo.tools().await;
    let second = lumo.tools().await;
    let as_json = |tools: &[rmcp::model::Tool]| serde_json::to_value(tools).expect("tools serialize");
    assert_eq!(as_json(&first), as_json(&second), "two tools/list answers differ");

    let names: Vec<&str> = first.iter().map(|t| t.name.as_ref()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "duplicate tool names in {names:?}");
    for tool in &first {
        let name = tool.name.as_ref();
        assert!(valid_tool_name(name), "tool name {name:?} does not match ^[a-zA-Z0-9_-]{{1,64}}$");
        assert!(COVERED_TOOLS.contains(&name), "{name} is listed but not covered by these tests: add it");
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()), "{name} has no description");
        assert!(tool.annotations.is_some(), "{name} has no annotations");
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object", "{name}: the input schema is not an object schema");
        assert_eq!(schema["additionalProperties"], false, "{name}: additionalProperties must be false");
        assert_closed_objects(name, "", &schema);
    }
    for name in COVERED_TOOLS {
        assert!(unique.contains(name), "{name} is no longer listed");
    }

    // `lumo tools --json` lists the same tools, in the same order, with the same schemas.
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["tools", "--json"])
        .output()
        .await
        .expect("run lumo tools --json");
    assert!(output.status.success(), "lumo tools --json failed: {}", String::from_utf8_lossy(&output.stderr));
    let cli: Vec<Value> = serde_json::from_slice(&output.stdout).expect("lumo tools --json prints a JSON array");
    let cli_names: Vec<&str> = cli.iter().map(|t| t["name"].as_str().unwrap_or_default()).collect();
    assert_eq!(cli_names, names, "lumo tools --json and tools/list disagree on the order");
    for (listed, printed) in first.iter().zip(&cli) {
        assert_eq!(Value::Object((*listed.input_schema).clone()), printed["inputSchema"], "{}", listed.name);
    }

    // An unknown tool is a protocol error, not a tool result.
    match lumo.try_call("no_such_tool", json!({})).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{error:?}");
            assert!(error.message.contains("no_such_tool"), "the error should name the tool: {error:?}");
        }
        other => panic!("an unknown tool should be a protocol error, got {other:?}"),
    }

    // Bad arguments: an isError result with code invalid_arguments whose message names the field.
    let bad: &[(&str, Value, &str)] = &[
        ("page_click", json!({"ref": "e1", "bogus": 1}), "bogus"),
        ("page_click", json!({"ref": 4}), "ref"),
        ("page_click", json!({}), "ref"),
        ("browser_navigate", json!({"url": 5}), "url"),
        ("browser_navigate", json!({"url": "example.com"}), "url"),
        ("browser_navigate", json!({"url": "https://example.com", "wait": true}), "wait"),
        ("browser_resize", json!({"width": "wide", "height": 600}), "width"),
        ("browser_resize", json!({"width": 50, "height": 600}), "width"),
        ("browser_tabs", json!({"action": "explode"}), "action"),
        ("page_snapshot", json!({"max_bytes": "big"}), "max_bytes"),
        ("page_snapshot", json!({"max_bytes": 10}), "max_bytes"),
        ("page_snapshot", json!({"ref": "button-1"}), "ref"),
        ("page_type", json!({"ref": "e1", "text": 42}), "text"),
        ("page_fill_form", json!({"fields": [{"ref": "e1", "value": {"x": 1}}]}), "fields[0].value"),
        ("page_fill_form", json!({"fields": [{"ref": "e1", "valu": "x"}]}), "valu"),
        ("page_fill_form", json!({"fields": []}), "fields"),
        ("page_select", json!({"ref": "e1", "values": "Rust"}), "values"),
        ("page_check", json!({"ref": "e1", "checked": "yes"}), "checked"),
        ("page_press_key", json!({"key": "Hyper+x"}), "key"),
        ("page_scroll", json!({"dy": "down"}), "dy"),
        ("page_wait", json!({"time_ms": 60000}), "time_ms"),
        ("page_wait", json!({"timeout_ms": 0, "text": "x"}), "timeout_ms"),
        ("page_screenshot", json!({"format": "gif"}), "format"),
        ("page_screenshot", json!({"quality": 50}), "quality"),
        ("page_dialog", json!({"accept": "yes"}), "accept"),
        ("file_upload", json!({"paths": ["relative.txt"]}), "paths[0]"),
        ("file_upload", json!({"paths": "/tmp/x"}), "paths"),
        ("devtools_console", json!({"level": "loud"}), "level"),
        ("devtools_evaluate", json!({"expression": "1", "ref": "e1"}), "ref"),
        ("network_requests", json!({"status": true}), "status"),
        ("network_request", json!({"id": "abc"}), "id"),
        ("page_hover", json!({"ref": "e1", "x": 3}), "x"),
        ("page_drag", json!({"from": "e1"}), "to"),
        ("page_find", json!({"text": "x", "limit": 0}), "limit"),
    ];
    for (tool, args, field) in bad {
        let answer = lumo.fails(tool, args.clone(), "invalid_arguments").await;
        let message = answer.error_message();
        assert!(message.contains(field), "{tool} {args}: the message should name {field:?}: {message}");
        assert!(answer.text().contains("invalid_arguments"), "{tool}: the text should carry the code");
        assert_eq!(answer.structured()["ok"], false, "{tool}: the error envelope has ok: false");
    }
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_snapshot_refs_and_stale_ref() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let opened = lumo.open(&server.url("login.html")).await;
    assert_eq!(opened.structured()["title"], "Login — lumo fixture");
    assert!(opened.text().starts_with("Opened:"), "{}", opened.text());
    assert!(opened.page_text().starts_with("url: http://127.0.0.1:"), "the URL is page data: {}", opened.text());

    // The snapshot: page content fenced as untrusted, refs on what can be acted on.
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.starts_with("Snapshot:"), "{snapshot}");
    assert!(snapshot.contains(&format!("\nurl: {}\n", server.url("login.html"))), "{snapshot}");
    assert!(snapshot.contains("<untrusted ") && snapshot.contains("</untrusted "), "{snapshot}");
    assert!(snapshot.contains("\ntitle: Login — lumo fixture\n"), "the title line is document.title:\n{snapshot}");
    let heading = ref_in(&snapshot, "heading \"Sign in\"");
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
    assert!(!subtree.contains("heading"), "the subtree holds only the form:\n{subtree}");

    // Interactive: a flat list of actionable elements, no text lines.
    let interactive = lumo.ok("page_snapshot", json!({"interactive": true})).await;
    let body = interactive.page_text();
    assert!(body.contains(&format!("checkbox \"Remember me\" [{remember}]")), "{body}");
    for line in body.lines().filter(|l| l.starts_with("- ")) {
        assert!(line.contains(" [e"), "an interactive snapshot line without a ref: {line}");
        assert!(!line.starts_with("  "), "interactive snapshots are flat: {line}");
    }
    assert!(!body.contains("- text:"), "{body}");

    // page_find: by text and by role.
    let found = lumo.ok("page_find", json!({"text": "sign in", "role": "button"})).await;
    assert_eq!(found.structured()["total"], 1, "{}", found.text());
    assert_eq!(found.ref_of("button \"Sign in\""), submit);
    assert!(found.text().contains(&format!("in form \"Sign in\" [{form}]")), "{}", found.text());
    let textboxes = lumo.ok("page_find", json!({"role": "textbox"})).await;
    assert_eq!(textboxes.structured()["total"], 2, "{}", textboxes.text());
    assert_eq!(textboxes.ref_of("textbox \"Password\""), password);
    let none = lumo.ok("page_find", json!({"text": "no such words anywhere"})).await;
    assert_eq!(none.structured()["total"], 0);
    assert!(none.text().starts_with("No match"), "{}", none.text());
    lumo.fails("page_find", json!({"regex": "("}), "invalid_arguments").await;
    lumo.fails("page_find", json!({}), "invalid_arguments").await;

    // WebMCP: this page registers no tools.
    let page_tools = lumo.ok("webmcp_list", json!({})).await;
    assert!(page_tools.text().contains("registered no WebMCP tools"), "{}", page_tools.text());
    let unknown = lumo.call("webmcp_call", json!({"name": "no_such_page_tool", "input": {}})).await;
    assert!(unknown.is_error(), "{}", unknown.text());

    // A wrong password shows the error, without navigating.
    lumo.ok("page_type", json!({"ref": username, "text": "alice"})).await;
    let typed = lumo.ok("page_type", json!({"ref": password, "text": "wrong", "submit": true})).await;
    assert!(typed.text().contains("Typed 5 characters") && typed.text().contains("pressed Enter"), "{}", typed.text());
    assert!(typed.text().contains("Wrong username or password."), "the answer shows what changed:\n{}", typed.text());
    assert!(!typed.text().contains("Navigated"), "{}", typed.text());

    // The right one: type replaces, check, click.
    lumo.ok("page_type", json!({"ref": password, "text": "secret"})).await;
    assert_eq!(lumo.eval("document.getElementById('password').value").await, "secret");
    let checked = lumo.ok("page_check", json!({"ref": remember})).await;
    assert!(checked.text().starts_with("Checked checkbox \"Remember me\""), "{}", checked.text());
    let again = lumo.ok("page_check", json!({"ref": remember, "checked": true})).await;
    assert!(again.text().contains("already checked"), "{}", again.text());
    let clicked = lumo.ok("page_click", json!({"ref": submit})).await;
    assert!(clicked.text().starts_with(&format!("Clicked button \"Sign in\" [{submit}].")), "{}", clicked.text());
    assert!(clicked.text().contains("Welcome, alice (remembered)"), "{}", clicked.text());
    let after = lumo.snapshot().await;
    assert!(after.contains("Welcome, alice (remembered)"), "{after}");
    assert!(!after.contains("textbox \"Username\""), "the form is hidden after the login:\n{after}");
    // Acting on a hidden element is refused, not clicked through.
    lumo.fails("page_click", json!({"ref": submit}), "invalid_state").await;

    // Stale ref: the reload replaces every element; old refs fail as stale_ref, never hit a new element.
    let reloaded = lumo.ok("browser_navigate", json!({"go": "reload"})).await;
    assert!(reloaded.text().starts_with("Reloaded."), "{}", reloaded.text());
    let stale = lumo.fails("page_click", json!({"ref": submit}), "stale_ref").await;
    assert!(stale.error_message().contains(&submit), "{}", stale.error_message());
    lumo.fails("page_snapshot", json!({"ref": form}), "stale_ref").await;
    lumo.fails("page_type", json!({"ref": username, "text": "x"}), "stale_ref").await;
    let fresh = lumo.snapshot().await;
    let new_submit = ref_in(&fresh, "button \"Sign in\"");
    assert_ne!(new_submit, submit, "refs never repeat across documents");
    assert!(!fresh.contains("Welcome"), "{fresh}");
    lumo.ok("page_click", json!({"ref": new_submit})).await;

    // History.
    lumo.open(&server.url("form.html")).await;
    let back = lumo.ok("browser_navigate", json!({"go": "back"})).await;
    assert!(back.text().contains("login.html"), "{}", back.text());
    let forward = lumo.ok("browser_navigate", json!({"go": "forward"})).await;
    assert!(forward.text().contains("form.html"), "{}", forward.text());
    lumo.fails("browser_navigate", json!({"go": "forward"}), "invalid_state").await;
    lumo.fails("browser_navigate", json!({"url": "https://a.example", "go": "back"}), "invalid_arguments").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_fill_select_upload_and_submit() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("form.html")).await;
    let snapshot = lumo.ok("page_snapshot", json!({"interactive": true})).await.text();
    let r = |needle: &str| ref_in(&snapshot, needle);
    let fields = json!([
        {"ref": r("textbox \"Full name\""), "value": "Ada Lovelace"},
        {"ref": r("textbox \"Email\""), "value": "ada@example.com"},
        {"ref": r("textbox \"Password\""), "value": "pw123"},
        {"ref": r("spinbutton \"Age\""), "value": 36},
        {"ref": r("textbox \"Birthday\""), "value": "1815-12-10"},
        {"ref": r("slider \"Volume\""), "value": 80},
        {"ref": r("textbox \"Favourite colour\""), "value": "#ff0000"},
        {"ref": r("checkbox \"Subscribe to the newsletter\""), "value": true},
        {"ref": r("radio \"Team\""), "value": true},
        {"ref": r("combobox \"Country"), "value": "Japan"},
        {"ref": r("textbox \"Comments\""), "value": "First line"},
        {"ref": r("textbox \"Bio\""), "value": "Mathematician"},
    ]);
    let filled = lumo.ok("page_fill_form", json!({"fields": fields})).await;
    assert!(filled.text().starts_with("Filled 12 field(s)"), "{}", filled.text());

    // A multiple select by label and by value.
    let languages = r("listbox \"Languages");
    let selected = lumo.ok("page_select", json!({"ref": languages, "values": ["Rust", "go"]})).await;
    assert!(selected.text().contains(r#"["Rust","Go"]"#), "{}", selected.text());
    let missing = lumo.fails("page_select", json!({"ref": languages, "values": ["Cobol"]}), "not_found").await;
    assert!(missing.error_message().contains("Python"), "the error lists the options: {}", missing.error_message());
    lumo.fails("page_select", json!({"ref": r("combobox \"Country"), "values": ["France", "Japan"]}), "invalid_state")
        .await;
    lumo.fails("page_select", json!({"ref": r("textbox \"Email\""), "values": ["x"]}), "invalid_state").await;

    // A file input by ref.
    let file = std::env::temp_dir().join(format!("lumo-e2e-{}-notes.txt", std::process::id()));
    std::fs::write(&file, "some notes\n").expect("write the upload file");
    let attachment = r("button \"Attachment\"");
    let path = file.to_str().expect("a UTF-8 temp path").to_string();
    let uploaded = lumo.ok("file_upload", json!({"ref": attachment, "paths": [path]})).await;
    assert!(uploaded.text().contains("Chose 1 file(s)"), "{}", uploaded.text());
    lumo.fails("file_upload", json!({"ref": attachment, "paths": [path, path]}), "invalid_arguments").await;
    lumo.fails("page_fill_form", json!({"fields": [{"ref": attachment, "value": path}]}), "invalid_arguments").await;
    lumo.fails("page_type", json!({"ref": r("checkbox \"Subscribe"), "text": "x"}), "invalid_state").await;
    lumo.fails("page_check", json!({"ref": r("radio \"Team\""), "checked": false}), "invalid_state").await;
    lumo.fails("page_check", json!({"ref": r("textbox \"Email\"")}), "invalid_state").await;

    // Append, then submit and read what the page received.
    lumo.ok("page_type", json!({"ref": r("textbox \"Comments\""), "text": ", second", "append": true})).await;
    lumo.ok("page_click", json!({"ref": r("button \"Submit\"")})).await;
    let out = lumo.eval("document.getElementById('out').textContent").await;
    let got: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("#out is not JSON ({e}): {out}"));
    let expected = json!({
        "text": "Ada Lovelace",
        "email": "ada@example.com",
        "password": "pw123",
        "number": "36",
        "date": "1815-12-10",
        "range": "80",
        "color": "#ff0000",
        "newsletter": true,
        "plan": "team",
        "country": "jp",
        "languages": ["rust", "go"],
        "comments": "First line, second",
        "bio": "Mathematician",
        "attachment": [file.file_name().and_then(|n| n.to_str()).expect("a file name")],
    });
    for (key, want) in expected.as_object().expect("an object") {
        assert_eq!(&got[key], want, "#out.{key} in {out}");
    }
    // The snapshot shows the values (a password masked).
    let after = lumo.ok("page_snapshot", json!({"interactive": true})).await.text();
    assert!(after.contains("= \"Ada Lovelace\""), "{after}");
    assert!(after.contains("= \"•••••\"") && !after.contains("pw123"), "passwords are masked:\n{after}");
    assert!(after.contains("radio \"Team\"") && after.contains("checked"), "{after}");
    let _ = std::fs::remove_file(&file);
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_list_budget_find_and_scroll() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("long-list.html")).await;

    let started = Instant::now();
    let full = lumo.ok("page_snapshot", json!({})).await;
    let took = started.elapsed();
    assert!(full.text().contains("- row: Row 1 | "), "{}", &full.text()[..2000.min(full.text().len())]);
    assert!(full.page_text().len() <= 100_500, "the default budget is 100 kB: {} bytes", full.page_text().len());
    assert!(took < Duration::from_secs(10), "a snapshot of 6,000 elements took {took:?}");

    // A small budget cuts the snapshot and says so.
    let cut = lumo.ok("page_snapshot", json!({"max_bytes": 2000})).await;
    let body = cut.page_text();
    assert!(body.contains("[truncated at the 2000-byte budget"), "{body}");
    // The budget covers the tree; the title line comes on top.
    let kept = body.split("\n[truncated at").next().unwrap_or_default();
    let kept =
        kept.split_once('\n').map_or(kept, |(title, tree)| if title.starts_with("title: ") { tree } else { kept });
    assert!(kept.len() <= 2000, "{} bytes kept over a 2000-byte budget", kept.len());

    // Find a row, then its button, then click it.
    let row = lumo.ok("page_find", json!({"text": "Row 777"})).await;
    assert_eq!(row.structured()["total"], 1, "{}", row.text());
    assert!(row.text().contains("cell \"Row 777\""), "{}", row.text());
    let button = lumo.ok("page_find", json!({"text": "Select 777", "role": "button"})).await;
    assert_eq!(button.structured()["total"], 1, "{}", button.text());
    let select = button.ref_of("button \"Select 777\"");
    let clicked = lumo.ok("page_click", json!({"ref": select})).await;
    assert!(clicked.text().contains("Selected Row 777"), "{}", clicked.text());
    assert_eq!(lumo.eval("document.getElementById('status').textContent").await, "Selected Row 777");

    // Limits and regexes.
    let buttons = lumo.ok("page_find", json!({"role": "button", "limit": 3})).await;
    assert_eq!(buttons.structured()["total"], 1000);
    assert!(buttons.text().starts_with("1000 matches, first 3:"), "{}", buttons.text());
    assert_eq!(buttons.page_text().lines().count(), 3, "{}", buttons.text());
    let nineties = lumo.ok("page_find", json!({"regex": "^Row 99\\d$"})).await;
    assert_eq!(nineties.structured()["total"], 10, "{}", nineties.text());

    // A subtree of the table is the table only.
    let table = ref_in(&full.text(), "table \"Rows\"");
    let sub = lumo.ok("page_snapshot", json!({"ref": table, "max_bytes": 500})).await.text();
    assert!(sub.contains("table \"Rows\"") && !sub.contains("heading"), "{sub}");

    // Scrolling (the click above scrolled row 777 into view).
    let top = lumo.ok("page_scroll", json!({"to": "top"})).await;
    assert!(top.text().starts_with("Page scrolled to 0px of "), "{}", top.text());
    let down = lumo.ok("page_scroll", json!({"dy": 500})).await;
    assert!(down.text().contains("Page scrolled to 500px"), "{}", down.text());
    let bottom = lumo.ok("page_scroll", json!({"to": "bottom"})).await;
    let y: f64 = lumo.eval("scrollY").await.parse().expect("scrollY is a number");
    assert!(y > 10_000.0, "scrolled to the bottom, scrollY = {y}: {}", bottom.text());
    lumo.ok("page_scroll", json!({"to": "top"})).await;
    assert_eq!(lumo.eval("scrollY").await, "0");
    let into_view = lumo.ok("page_scroll", json!({"ref": select})).await;
    assert!(into_view.text().contains("is in view"), "{}", into_view.text());
    let inside: bool = lumo
        .eval("(() => { const r = document.querySelector('#row-777').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()")
        .await
        .parse()
        .expect("a boolean");
    assert!(inside, "row 777 should be in the viewport");
    lumo.fails("page_scroll", json!({}), "invalid_arguments").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shadow_dom_and_frames() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;

    lumo.open(&server.url("shadow.html")).await;
    let snapshot = lumo.snapshot().await;
    let button = ref_in(&snapshot, "button \"Shadow button\"");
    let input = ref_in(&snapshot, "textbox \"Shadow input\"");
    lumo.ok("page_type", json!({"ref": input, "text": "deep"})).await;
    let clicked = lumo.ok("page_click", json!({"ref": button})).await;
    assert!(clicked.text().contains("Shadow clicked with deep"), "{}", clicked.text());
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

/// The answer says a dialog of `kind` is open, with its message, and how to answer it.
fn assert_dialog_notice(answer: &common::Answer, kind: &str, message: &str) {
    let text = answer.text();
    assert!(text.contains("dialog") && text.contains(kind), "no notice of the {kind} dialog:\n{text}");
    assert!(text.contains(message), "the notice carries the dialog's message {message:?}:\n{text}");
    assert!(text.contains("page_dialog"), "the notice says how to answer:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_alert_confirm_prompt() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("dialog.html")).await;
    let snapshot = lumo.snapshot().await;
    let (alert, confirm, prompt) = (
        ref_in(&snapshot, "button \"Alert\""),
        ref_in(&snapshot, "button \"Confirm\""),
        ref_in(&snapshot, "button \"Prompt\""),
    );
    let result = "document.getElementById('result').textContent";

    lumo.fails("page_dialog", json!({"accept": true}), "invalid_state").await;

    // alert: the click reports the open dialog; the page is blocked until it is answered.
    let clicked = lumo.ok("page_click", json!({"ref": alert})).await;
    assert_dialog_notice(&clicked, "alert", "Hello from alert");
    let blocked = lumo.fails("page_snapshot", json!({}), "invalid_state").await;
    assert!(blocked.error_message().contains("page_dialog"), "{}", blocked.error_message());
    lumo.fails("page_dialog", json!({"accept": true, "prompt_text": "x"}), "invalid_arguments").await;
    let answered = lumo.ok("page_dialog", json!({"accept": true})).await;
    assert!(answered.text().contains("Accepted the alert dialog."), "{}", answered.text());
    assert!(answered.text().contains("dialog message: \"Hello from alert\""), "{}", answered.text());
    assert_eq!(lumo.eval(result).await, "alert closed");

    // confirm: dismiss, then accept.
    lumo.ok("page_click", json!({"ref": confirm})).await;
    let dismissed = lumo.ok("page_dialog", json!({"accept": false})).await;
    assert!(dismissed.text().contains("Dismissed the confirm dialog."), "{}", dismissed.text());
    assert_eq!(lumo.eval(result).await, "confirm: false");
    lumo.ok("page_click", json!({"ref": confirm})).await;
    lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(lumo.eval(result).await, "confirm: true");

    // prompt: with text, with its default, dismissed.
    let clicked = lumo.ok("page_click", json!({"ref": prompt})).await;
    assert_dialog_notice(&clicked, "prompt", "Your name?");
    let answered = lumo.ok("page_dialog", json!({"accept": true, "prompt_text": "Grace"})).await;
    assert!(answered.text().contains("with 5 characters"), "{}", answered.text());
    assert_eq!(lumo.eval(result).await, "prompt: Grace");
    lumo.ok("page_click", json!({"ref": prompt})).await;
    let default = lumo.ok("page_dialog", json!({"accept": true})).await;
    assert!(default.text().contains("with its default value"), "{}", default.text());
    assert_eq!(lumo.eval(result).await, "prompt: Anonymous");
    lumo.ok("page_click", json!({"ref": prompt})).await;
    lumo.ok("page_dialog", json!({"accept": false})).await;
    assert_eq!(lumo.eval(result).await, "prompt: null");

    // A dialog opened by evaluated code.
    let evaluated = lumo.ok("devtools_evaluate", json!({"expression": "confirm('from code')"})).await;
    assert_dialog_notice(&evaluated, "confirm", "from code");
    lumo.fails("devtools_evaluate", json!({"expression": "1"}), "invalid_state").await;
    lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(lumo.eval("1 + 1").await, "2");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_navigation_tabs_resize_and_screenshots() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let dir = std::env::temp_dir();
    let a = dir.join(format!("lumo-e2e-{}-a.txt", std::process::id()));
    let b = dir.join(format!("lumo-e2e-{}-b.txt", std::process::id()));
    std::fs::write(&a, "aaa").expect("write a");
    std::fs::write(&b, "bbbbb").expect("write b");
    let (a_path, b_path) = (a.display().to_string(), b.display().to_string());

    // file_upload: by ref (several files), and through the file chooser a click opens.
    lumo.open(&server.url("upload.html")).await;
    let snapshot = lumo.snapshot().await;
    let files = ref_in(&snapshot, "button \"Files\"");
    let single = ref_in(&snapshot, "button \"One file\"");
    let chosen = lumo.ok("file_upload", json!({"ref": files, "paths": [a_path, b_path]})).await;
    assert!(chosen.text().contains("Chose 2 file(s)"), "{}", chosen.text());
    let shown = lumo.eval("document.getElementById('chosen').textContent").await;
    assert!(shown.contains("a.txt (3 B)") && shown.contains("b.txt (5 B)"), "{shown}");
    lumo.fails("file_upload", json!({"ref": single, "paths": [a_path, b_path]}), "invalid_arguments").await;
    lumo.fails("file_upload", json!({"paths": ["/no/such/file.txt"], "ref": single}), "invalid_arguments").await;
    lumo.fails("file_upload", json!({"paths": [a_path]}), "invalid_arguments").await;
    let clicked = lumo.ok("page_click", json!({"ref": single})).await;
    assert!(clicked.text().contains("file chooser") && clicked.text().contains("file_upload"), "{}", clicked.text());
    let answered = lumo.ok("file_upload", json!({"paths": [b_path]})).await;
    assert!(answered.text().contains("in the file chooser"), "{}", answered.text());
    let shown = lumo.eval("document.getElementById('chosen').textContent").await;
    assert!(shown.starts_with("single: ") && shown.contains("b.txt"), "{shown}");

    // A navigation the page starts later, and a wait for it.
    lumo.open(&server.url("navigate.html")).await;
    let snapshot = lumo.snapshot().await;
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "button \"Go to login later\"")})).await;
    let waited = lumo.ok("page_wait", json!({"text": "Remember me", "timeout_ms": 5000})).await;
    assert!(waited.text().starts_with("Text \"Remember me\" is on the page"), "{}", waited.text());
    assert!(lumo.snapshot().await.contains(&format!("\nurl: {}\n", server.url("login.html"))));
    lumo.ok("browser_navigate", json!({"go": "back"})).await;

    // A link with target=_blank opens a tab; select it, read it, close it.
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains(&format!("\nurl: {}\n", server.url("navigate.html"))), "{snapshot}");
    lumo.ok("page_click", json!({"ref": ref_in(&snapshot, "link \"Open login in a new tab\"")})).await;
    let mut listed = String::new();
    for _ in 0..50 {
        listed = lumo.ok("browser_tabs", json!({"action": "list"})).await.text();
        if listed.starts_with("2 tab(s)") && listed.contains(&server.url("login.html")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listed.starts_with("2 tab(s)"), "{listed}");
    assert!(listed.contains("*0 ") && listed.contains(&server.url("login.html")), "{listed}");
    let selected = lumo.ok("browser_tabs", json!({"action": "select", "index": 1})).await;
    assert!(selected.text().contains("*1 "), "{}", selected.text());
    let other = lumo.snapshot().await;
    assert!(other.contains(&format!("\nurl: {}\n", server.url("login.html"))), "{other}");
    let closed = lumo.ok("browser_tabs", json!({"action": "close"})).await;
    assert!(closed.text().starts_with("1 tab(s)"), "{}", closed.text());
    assert!(closed.text().contains("*0 "), "{}", closed.text());
    lumo.fails("browser_tabs", json!({"action": "select", "index": 7}), "not_found").await;
    lumo.fails("browser_tabs", json!({"action": "select"}), "invalid_arguments").await;
    let opened = lumo.ok("browser_tabs", json!({"action": "new"})).await;
    assert!(opened.text().starts_with("2 tab(s)") && opened.text().contains("*1 "), "{}", opened.text());
    lumo.ok("browser_tabs", json!({"action": "close", "index": 1})).await;
    let started = Instant::now();
    let opened = lumo.ok("browser_tabs", json!({"action": "new", "url": server.url("login.html")})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "opening a tab took {:?}", started.elapsed());
    assert!(opened.text().contains("*1 ") && opened.text().contains(&server.url("login.html")), "{}", opened.text());
    assert!(lumo.snapshot().await.contains("button \"Sign in\""), "the new tab is the current one");
    lumo.ok("browser_tabs", json!({"action": "close"})).await;

    // Resize, then screenshots of the viewport, the full page and an element.
    let resized = lumo.ok("browser_resize", json!({"width": 800, "height": 600})).await;
    assert_eq!(resized.text(), "Viewport is 800×600.");
    assert_eq!(lumo.eval("innerWidth + 'x' + innerHeight").await, "800x600");
    let shot = lumo.ok("page_screenshot", json!({})).await;
    assert!(shot.text().starts_with("Screenshot of the viewport: 800×600 PNG"), "{}", shot.text());
    let images = shot.images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].0, "image/png");
    assert!(images[0].1.starts_with("iVBORw0KGgo"), "the data is a base64 PNG");
    let jpeg = lumo.ok("page_screenshot", json!({"full_page": true, "format": "jpeg", "quality": 40})).await;
    assert_eq!(jpeg.images()[0].0, "image/jpeg");
    assert!(jpeg.images()[0].1.starts_with("/9j/"), "the data is a base64 JPEG");
    let snapshot = lumo.snapshot().await;
    let heading = ref_in(&snapshot, "heading \"Navigation\"");
    let element = lumo.ok("page_screenshot", json!({"ref": heading})).await;
    assert!(element.text().starts_with(&format!("Screenshot of {heading}: ")), "{}", element.text());
    let small = lumo.ok("page_screenshot", json!({"full_page": true, "max_bytes": 10_000})).await;
    assert!(small.images()[0].1.len() <= 10_000, "{}", small.text());
    lumo.fails("page_screenshot", json!({"ref": heading, "full_page": true}), "invalid_arguments").await;

    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pointer_hover_drag_keys() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("pointer.html")).await;
    let snapshot = lumo.snapshot().await;
    let hover = ref_in(&snapshot, "button \"Hover me\"");
    let hovered = lumo.ok("page_hover", json!({"ref": hover})).await;
    assert!(hovered.text().starts_with("Hovered button \"Hover me\""), "{}", hovered.text());
    assert!(hovered.text().contains("Hovered!"), "{}", hovered.text());

    let dragged = lumo
        .ok(
            "page_drag",
            json!({"from": ref_in(&snapshot, "button \"Drag me\""), "to": ref_in(&snapshot, "region \"Drop zone\"")}),
        )
        .await;
    assert!(dragged.text().starts_with("Dragged button \"Drag me\""), "{}", dragged.text());
    assert_eq!(lumo.eval("document.getElementById('drag-status').textContent").await, "Dropped on target");

    let key = "document.getElementById('key-status').textContent";
    lumo.ok("page_press_key", json!({"key": "Control+a"})).await;
    assert_eq!(lumo.eval(key).await, "Key: a with Control");
    let pressed = lumo.ok("page_press_key", json!({"key": "Escape", "ref": hover})).await;
    assert!(pressed.text().starts_with("Pressed Escape on button \"Hover me\""), "{}", pressed.text());
    assert_eq!(lumo.eval(key).await, "Key: Escape");
    assert_eq!(lumo.eval("document.activeElement.id").await, "hover-me");
    lumo.fails("page_press_key", json!({"key": "NotAKey"}), "invalid_arguments").await;

    // Scrolling an element's own box.
    let scroller = ref_in(&snapshot, "region \"Scroller\"");
    let scrolled = lumo.ok("page_scroll", json!({"ref": scroller, "dy": 50})).await;
    assert!(scrolled.text().contains("scrolled to 50px of 300px"), "{}", scrolled.text());

    // devtools_evaluate: a function on a ref's element, JSON results, thrown errors.
    let tag = lumo.ok("devtools_evaluate", json!({"function": "el => el.id", "ref": scroller})).await;
    assert_eq!(tag.page_text(), "scroller");
    let object =
        lumo.ok("devtools_evaluate", json!({"expression": "({a: 1, list: [1, 2], node: document.body})"})).await;
    assert!(object.text().starts_with("Result (object"), "{}", object.text());
    assert_eq!(object.page_text(), r#"{"a":1,"list":[1,2],"node":"<body>"}"#);
    let awaited =
        lumo.ok("devtools_evaluate", json!({"expression": "await new Promise(r => setTimeout(() => r(7), 50))"})).await;
    assert_eq!(awaited.page_text(), "7");
    let thrown = lumo.call("devtools_evaluate", json!({"expression": "throw new Error('nope')"})).await;
    assert!(thrown.is_error(), "{}", thrown.text());
    assert!(thrown.text().contains("nope"), "{}", thrown.text());
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_network_and_waits() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;

    lumo.open(&server.url("console.html")).await;
    // The uncaught error is thrown from a timer: wait for it to land.
    lumo.ok("page_wait", json!({"time_ms": 200})).await;
    let console = lumo.ok("devtools_console", json!({})).await;
    assert!(console.text().starts_with("6 console messages"), "{}", console.text());
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
    assert!(warnings.text().starts_with("3 console messages at that level or above"), "{}", warnings.text());
    assert!(!warnings.page_text().contains("[log]"), "{}", warnings.text());
    let last = lumo.ok("devtools_console", json!({"limit": 1, "clear": true})).await;
    assert!(last.text().starts_with("Last 1 of 6"), "{}", last.text());
    let empty = lumo.ok("devtools_console", json!({})).await;
    assert!(empty.text().starts_with("No console messages"), "{}", empty.text());

    // Content that appears later, and a slow fetch.
    lumo.open(&server.url("slow.html")).await;
    let early = lumo.ok("page_find", json!({"text": "Late button"})).await;
    assert_eq!(early.structured()["total"], 0, "{}", early.text());
    let waited = lumo.ok("page_wait", json!({"text": "Loaded late"})).await;
    assert!(waited.text().starts_with("Text \"Loaded late\" is on the page"), "{}", waited.text());
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains("button \"Late button\""), "{snapshot}");
    let late = ref_in(&snapshot, "button \"Late button\"");
    let timeout = lumo.fails("page_wait", json!({"text": "never there", "timeout_ms": 300}), "timeout").await;
    assert!(timeout.error_message().contains("never there"), "{}", timeout.error_message());
    lumo.ok("page_wait", json!({"ref": late, "timeout_ms": 1000})).await;
    lumo.fails("page_wait", json!({"ref_gone": late, "timeout_ms": 300}), "timeout").await;
    let both = lumo.fails("page_wait", json!({"text": "a", "time_ms": 5}), "invalid_arguments").await;
    assert!(both.error_message().contains("text, time_ms"), "{}", both.error_message());

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
    assert!(missing.text().starts_with("No matching requests"), "{}", missing.text());
    lumo.fails("network_requests", json!({"url": "("}), "invalid_arguments").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_crash_is_reported_then_recovered() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    assert_eq!(browser_pid(lumo.pid), None, "the browser starts on the first browser tool call");
    lumo.open(&server.url("login.html")).await;
    let pid = browser_pid(lumo.pid).expect("a Chromium child of lumo with --remote-debugging-pipe");

    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().expect("run kill");
    assert!(killed.success(), "kill -9 {pid}");
    // Let lumo notice the lost connection.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let crashed = lumo.fails("page_snapshot", json!({}), "unavailable").await;
    assert!(crashed.error_message().contains("browser"), "{}", crashed.error_message());
    // The next call starts a new browser.
    lumo.open(&server.url("login.html")).await;
    let snapshot = lumo.snapshot().await;
    assert!(snapshot.contains("button \"Sign in\""), "{snapshot}");
    let again = browser_pid(lumo.pid).expect("a new Chromium");
    assert_ne!(again, pid, "a new browser process");
    lumo.stop().await;
}

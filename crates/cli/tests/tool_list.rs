//! The tool list and argument checking over stdio MCP, no browser needed:
//! `tools/list` is deterministic, strict (closed object schemas, valid names,
//! descriptions, annotations) and the golden one; `lumo tools --json` agrees;
//! unknown tools are protocol errors and bad arguments tool errors that name
//! the field.

mod common;

use std::collections::BTreeSet;

use common::Lumo;
use lumo_testkit::golden::golden_tool_names;
use rmcp::service::ServiceError;
use serde_json::{Value, json};

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
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()), "{name} has no description");
        assert!(tool.annotations.is_some(), "{name} has no annotations");
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object", "{name}: the input schema is not an object schema");
        assert_eq!(schema["additionalProperties"], false, "{name}: additionalProperties must be false");
        assert_closed_objects(name, "", &schema);
    }
    // The live list is the golden one (tests/golden/tools.json, which golden.rs pins in full).
    assert_eq!(names, golden_tool_names(), "tools/list and the golden file differ: run the golden test for a diff");

    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lumo_tools_json_lists_the_same_tools_as_tools_list() {
    let lumo = Lumo::start().await;
    let first = lumo.tools().await;
    let names: Vec<&str> = first.iter().map(|t| t.name.as_ref()).collect();
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

    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_protocol_error() {
    let lumo = Lumo::start().await;
    // An unknown tool is a protocol error, not a tool result.
    match lumo.try_call("no_such_tool", json!({})).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{error:?}");
            assert!(error.message.contains("no_such_tool"), "the error should name the tool: {error:?}");
        }
        other => panic!("an unknown tool should be a protocol error, got {other:?}"),
    }

    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_tool_errors_naming_the_field() {
    let lumo = Lumo::start().await;
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

//! The golden tool list, `tests/golden/tools.json`: the exact `tools/list`
//! result of a fresh `lumo serve`, which the Python end-to-end test, the
//! TypeScript tests and the bench read too. A tool added, removed or changed
//! fails here with a diff until the file is blessed:
//! `LUMO_BLESS=1 cargo test -p lumo-cli --test golden`.

use std::path::Path;

use lumo_testkit::golden::{self, BLESS, check_golden, golden_tools, pretty};
use serde_json::Value;

/// The golden tool list; while blessing, what lumo lists now (the file may not be written yet).
async fn golden_or_live() -> Value {
    if golden::blessing() { golden::fresh_tools_list().await } else { golden_tools() }
}

fn names_of(tools: &Value) -> Vec<String> {
    tools["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str().map(str::to_string)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_matches_the_golden_file() {
    let live = golden::fresh_tools_list().await;
    assert!(live["tools"].as_array().is_some_and(|t| !t.is_empty()), "tools/list answered {live}");
    check_golden("tools.json", &pretty(&live));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lumo_tools_json_matches_the_golden_file() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["tools", "--json"])
        .output()
        .await
        .expect("run lumo tools --json");
    assert!(output.status.success(), "lumo tools --json failed: {}", String::from_utf8_lossy(&output.stderr));
    let printed: Vec<Value> = serde_json::from_slice(&output.stdout).expect("lumo tools --json prints a JSON array");
    let golden = golden_or_live().await;
    let listed = golden["tools"].as_array().expect("the golden file holds {\"tools\": [...]}");
    let names = |tools: &[Value]| tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_string()).collect();
    let (printed_names, golden_names): (Vec<String>, Vec<String>) = (names(&printed), names(listed));
    assert_eq!(
        printed_names, golden_names,
        "lumo tools --json must list what tools/list of `lumo serve` lists (tests/golden/tools.json; {BLESS} rewrites that file)"
    );
    for (tool, want) in printed.iter().zip(listed) {
        for field in ["description", "inputSchema", "annotations"] {
            let (got, want) = (&tool[field], &want[field]);
            if field == "annotations" {
                // tools/list may add a title; the three hints must agree.
                for hint in ["readOnlyHint", "destructiveHint", "openWorldHint"] {
                    assert_eq!(got[hint], want[hint], "{}: {hint}", tool["name"]);
                }
            } else {
                assert_eq!(got, want, "{}: {field} differs from the golden file; if intended: {BLESS}", tool["name"]);
            }
        }
    }
}

/// Every `.rs` file under `crates/*/tests`.
fn rust_test_sources() -> Vec<(String, String)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&crates)
        .expect("read crates/")
        .flatten()
        .map(|e| e.path().join("tests"))
        .filter(|d| d.is_dir())
        .collect();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a tests folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read a test source");
                found.push((path.display().to_string(), text));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_tool_is_called_by_a_rust_test() {
    let sources = rust_test_sources();
    let called = |name: &str| {
        let quoted = format!("\"{name}\"");
        sources.iter().any(|(path, text)| !path.ends_with("golden.rs") && text.contains(&quoted))
    };
    let untested: Vec<String> = names_of(&golden_or_live().await).into_iter().filter(|n| !called(n)).collect();
    assert!(
        untested.is_empty(),
        "listed in tests/golden/tools.json but called by no test under crates/*/tests: {untested:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_tool_is_in_the_readme() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).expect("read README.md");
    let missing: Vec<String> = names_of(&golden_or_live().await)
        .into_iter()
        .filter(|name| ![" ", "`", " {"].iter().any(|end| readme.contains(&format!("`{name}{end}"))))
        .collect();
    assert!(missing.is_empty(), "tools listed by lumo but not in the README's tool tables: {missing:?}");
}

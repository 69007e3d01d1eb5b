//! Golden files in `tests/golden/`: wire formats pinned in the repository and
//! read by every test suite (Rust, Python, TypeScript, the bench). A test
//! compares what lumo says now with the file and fails with a diff; setting
//! `LUMO_BLESS=1` writes the file instead (rmcp's `tests/test_message_schema/`
//! does the same).
//!
//! `tests/golden/tools.json` is the `tools/list` result of a fresh `lumo serve`
//! (no config file, no `LUMO_*` settings); bless it with
//! `LUMO_BLESS=1 cargo test -p lumo-cli --test golden`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::fixtures::repo_root;
use crate::mcp::lumo_bin;

/// The command that rewrites the golden files from what lumo says now.
pub const BLESS: &str = "LUMO_BLESS=1 cargo test -p lumo-cli --test golden";

/// `tests/golden/<name>`.
pub fn golden_path(name: &str) -> PathBuf {
    repo_root().join("tests/golden").join(name)
}

/// Whether `LUMO_BLESS` asks to rewrite golden files.
pub fn blessing() -> bool {
    std::env::var("LUMO_BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The golden tool list (`tests/golden/tools.json`): the `tools/list` result, `{"tools": [...]}`.
pub fn golden_tools() -> Value {
    let path = golden_path("tools.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; create it with `{BLESS}`", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON ({e}); re-create it with `{BLESS}`", path.display()))
}

/// The names in the golden tool list, in its order.
pub fn golden_tool_names() -> Vec<String> {
    golden_tools()["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Pretty JSON with a final newline: the form golden files are written in.
pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    text.push('\n');
    text
}

/// Compares `actual` with golden file `name`; with `LUMO_BLESS=1` writes it instead.
///
/// Panics with the difference and the command that blesses it.
pub fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if blessing() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        panic!(
            "{} differs from what lumo says now (- golden, + now):\n{}\nIf the change is intended, bless it: {BLESS}",
            path.display(),
            diff(&expected, actual)
        );
    }
}

/// The tool-level summary and a line diff of two tool lists (`{"tools": [...]}` texts).
pub fn diff(expected: &str, actual: &str) -> String {
    let names = |text: &str| -> Vec<String> {
        serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v["tools"].as_array().cloned())
            .map(|tools| tools.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let (old, new) = (names(expected), names(actual));
    let (old_set, new_set): (BTreeSet<_>, BTreeSet<_>) = (old.iter().collect(), new.iter().collect());
    let mut out = String::new();
    let added: Vec<_> = new_set.difference(&old_set).collect();
    let removed: Vec<_> = old_set.difference(&new_set).collect();
    if !added.is_empty() {
        out.push_str(&format!("tools added: {added:?}\n"));
    }
    if !removed.is_empty() {
        out.push_str(&format!("tools removed: {removed:?}\n"));
    }
    out.push_str(&line_diff(expected, actual, 300));
    out
}

/// A line diff (longest common subsequence) with two lines of context, at most `limit` lines.
pub fn line_diff(old: &str, new: &str, limit: usize) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i], i + 1));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i], i + 1));
            i += 1;
        } else {
            ops.push(('+', b[j], j + 1));
            j += 1;
        }
    }
    let near_change = |k: usize| ops[k.saturating_sub(2)..(k + 3).min(ops.len())].iter().any(|(op, _, _)| *op != ' ');
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, (op, line, at)) in ops.iter().enumerate() {
        if !near_change(k) {
            skipped = true;
            continue;
        }
        if skipped {
            out.push(format!("@@ line {at}"));
            skipped = false;
        }
        out.push(format!("{op} {line}"));
        if out.len() >= limit {
            out.push(format!("… (diff cut at {limit} lines)"));
            break;
        }
    }
    out.join("\n")
}

/// The `tools/list` result of a fresh `lumo serve`: no config file, no `LUMO_*`
/// setting but the browser, spoken to with raw JSON-RPC over stdio (the exact
/// answer, not a client's model of it).
pub async fn fresh_tools_list() -> Value {
    // One scratch home per call: tests of one binary run at once, and lumo keeps state there.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let home = std::env::temp_dir().join(format!("lumo-golden-home-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a scratch home");
    let mut command = tokio::process::Command::new(lumo_bin());
    command.env_clear().env("HOME", &home).env("XDG_CONFIG_HOME", home.join(".config"));
    for key in ["PATH", "LUMO_BROWSER"] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    let mut child = command
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lumo serve");
    let mut stdin = child.stdin.take().expect("lumo's stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("lumo's stdout")).lines();
    let requests = [
        crate::mcp::INITIALIZE,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    ];
    for request in requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await.expect("write to lumo");
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read lumo's stdout") {
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"] == 2 {
                return message;
            }
        }
        panic!("lumo closed stdout before answering tools/list");
    })
    .await
    .expect("lumo answers tools/list within 30 s");
    drop(stdin);
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(&home);
    assert!(answer["nextCursor"].is_null() && answer["result"]["nextCursor"].is_null(), "a paged tools/list: {answer}");
    answer["result"].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_diff_shows_changes_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
        let shown = line_diff(old, new, 100);
        assert!(shown.contains("- d\n+ D"), "{shown}");
        assert!(shown.contains("+ i"), "{shown}");
        assert!(!shown.contains("  a"), "far context is cut: {shown}");
    }

    #[test]
    fn the_tool_diff_names_added_and_removed_tools() {
        let old = r#"{"tools":[{"name":"a"},{"name":"b"}]}"#;
        let new = r#"{"tools":[{"name":"a"},{"name":"c"}]}"#;
        let shown = diff(old, new);
        assert!(shown.contains("tools added: [\"c\"]") && shown.contains("tools removed: [\"b\"]"), "{shown}");
    }
}

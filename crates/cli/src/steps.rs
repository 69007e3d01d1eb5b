//! `lumo call`: one tool call or a sequence of them in one browser, given as
//! `TOOL ['{json}'] [TOOL ['{json}']]…`, optionally recorded as a captioned
//! GIF (`--record FILE`) through the same `page_record` tool an agent uses.

use std::path::Path;

use anyhow::{Context, bail};
use lumo_host::Gate;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// One call: a tool and its arguments.
pub(crate) type Step = (String, Value);

/// `browser_navigate '{"url": …}' page_snapshot page_click '{"ref": "e3"}'` → steps.
pub(crate) fn parse(words: &[String]) -> anyhow::Result<Vec<Step>> {
    let mut steps: Vec<Step> = Vec::new();
    let mut has_args = false;
    for word in words {
        if word.trim_start().starts_with('{') {
            let Some(step) = steps.last_mut().filter(|_| !has_args) else {
                bail!(
                    "{word} is arguments with no tool before them: write TOOL '{{json}}' (e.g. browser_navigate '{{\"url\": \"https://example.com\"}}')"
                );
            };
            let args: Value = serde_json::from_str(word)
                .with_context(|| format!("the arguments of {} are not JSON: {word}", step.0))?;
            if !args.is_object() {
                bail!("the arguments of {} must be a JSON object, like '{{\"url\": \"https://example.com\"}}'", step.0);
            }
            step.1 = args;
            has_args = true;
        } else {
            steps.push((word.clone(), json!({})));
            has_args = false;
        }
    }
    if steps.is_empty() {
        bail!("name a tool to call, e.g. lumo call browser_navigate '{{\"url\": \"https://example.com\"}}'");
    }
    Ok(steps)
}

/// Runs the steps in order, stopping at the first that fails; prints each answer.
/// With `record`, the calls are recorded and the GIF moved to that file. Returns the
/// exit status: 0, or 1 when a call failed.
pub(crate) async fn run(gate: &Gate, steps: &[Step], record: Option<&Path>, json: bool) -> anyhow::Result<i32> {
    if record.is_some() {
        let started = gate.call("page_record", json!({"action": "start"}), CancellationToken::new()).await?;
        if started.is_error {
            bail!("cannot record: {}", started.text);
        }
    }
    let mut status = 0;
    for (tool, args) in steps {
        let output = match gate.call(tool, args.clone(), CancellationToken::new()).await {
            Ok(output) => output,
            Err(e) => {
                eprintln!("error: {e}");
                status = 1;
                break;
            }
        };
        let failed = output.is_error;
        crate::output::show(output, json);
        if failed {
            status = 1;
            break;
        }
    }
    if let Some(file) = record {
        let stopped = gate.call("page_record", json!({"action": "stop"}), CancellationToken::new()).await?;
        let saved = stopped.structured.as_ref().and_then(|s| s["path"].as_str()).map(std::path::PathBuf::from);
        let Some(saved) = saved.filter(|_| !stopped.is_error) else {
            bail!("the recording was not saved: {}", stopped.text);
        };
        move_file(&saved, file)?;
        let structured = stopped.structured.unwrap_or_default();
        eprintln!(
            "recorded {} calls to {} ({} frames, {} kB)",
            structured["steps"],
            file.display(),
            structured["frames"],
            structured["bytes"].as_u64().unwrap_or(0).div_ceil(1000)
        );
    }
    Ok(status)
}

/// Moves `from` to `to`, copying when they are on different file systems.
fn move_file(from: &Path, to: &Path) -> anyhow::Result<()> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to).with_context(|| format!("cannot write the recording to {}", to.display()))?;
    let _ = std::fs::remove_file(from);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn steps_pair_tools_with_their_arguments() {
        let steps = parse(&words(&[
            "browser_navigate",
            r#"{"url":"http://x"}"#,
            "page_snapshot",
            "page_click",
            r#"{"ref":"e1"}"#,
        ]))
        .expect("parses");
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].1["url"], "http://x");
        assert_eq!(steps[1].1, json!({}));
        assert_eq!(steps[2].0, "page_click");
        let first = parse(&words(&[r#"{"a":1}"#])).expect_err("arguments first");
        assert!(first.to_string().contains("no tool before them"), "{first}");
        assert!(parse(&words(&["t", "{}", "{}"])).is_err(), "two argument objects for one tool");
        assert!(parse(&words(&["t", "{nope"])).expect_err("bad json").to_string().contains("not JSON"));
    }
}

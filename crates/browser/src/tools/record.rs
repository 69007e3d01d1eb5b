//! `page_record`: record the selected tab while tool calls run, as an animated
//! GIF with a caption per step, saved in lumo's data dir (see
//! [`crate::recording`] for the capture and its bounds); and the note the gate
//! sends a running recording before each call (`Session::note_call`).

use base64::Engine;
use lumo_protocol::ErrorCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, Page, TabUse, off_tab, on_tab};
use crate::recording;
use crate::session::Session;
use crate::tool::{Hints, Image, Tool, ToolOutput, ToolResult, fail};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![Tool::new(
        "page_record",
        "Record the selected tab as an animated GIF, one caption per tool call: start, run the steps, stop. Stop answers the file's path and a preview.",
        Hints::ACT,
        record,
    )
    // The preview is a picture of the page.
    .untrusted()]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecordArgs {
    /// `start` recording the selected tab, or `stop` and save the GIF.
    action: Action,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Action {
    Start,
    Stop,
}

async fn record(session: Ctx, args: RecordArgs) -> ToolResult {
    match args.action {
        Action::Start => on_tab(&session, TabUse::UNLOCKED, |on| start(&session, on)).await,
        // Stopping needs no tab (the recording may have ended with its tab).
        Action::Stop => off_tab(&session, Page::Checked, stop(&session)).await,
    }
}

async fn start(session: &Session, OnTab { live, tab }: OnTab) -> ToolResult {
    if session.recorder.is_recording() {
        return Err(fail(
            ErrorCode::InvalidState,
            "A recording is already running; stop it first with page_record {action: \"stop\"}.",
        )
        .into());
    }
    let path = recording::new_path().map_err(|e| fail(ErrorCode::OperationFailed, e))?;
    session.recorder.start(&session.recordings, &live.cdp, &tab.target_id, &tab.session_id, path.clone()).await?;
    Ok(ToolOutput::text(format!(
        "Recording the selected tab. Each tool call from now on is a captioned step; page_record {{action: \"stop\"}} saves the GIF to {}.",
        path.display()
    ))
    .with_structured(json!({"recording": true, "path": path})))
}

async fn stop(session: &Session) -> ToolResult {
    match session.recorder.finish().await {
        None => Err(fail(
            ErrorCode::InvalidState,
            "No recording is running: start one with page_record {action: \"start\"}, then run the steps.",
        )
        .into()),
        Some(Err(why)) => Err(fail(ErrorCode::OperationFailed, format!("The recording was not saved: {why}")).into()),
        Some(Ok(saved)) => {
            let ended = match saved.ended {
                "stopped" => String::new(),
                why => format!(" It had ended when {why}."),
            };
            let capped = if saved.capped {
                format!(" It reached {} frames; later changes replaced the last one.", recording::MAX_FRAMES)
            } else {
                String::new()
            };
            let text = format!(
                "Saved the recording to {} ({} steps, {} frames, {}x{}, {:.1} s, {} kB).{ended}{capped}",
                saved.path.display(),
                saved.steps,
                saved.frames,
                saved.width,
                saved.height,
                saved.duration.as_secs_f64(),
                saved.bytes.div_ceil(1000),
            );
            let mut output = ToolOutput::text(text).with_structured(json!({
                "path": saved.path,
                "bytes": saved.bytes,
                "steps": saved.steps,
                "captions": saved.captions,
                "frames": saved.frames,
                "width": saved.width,
                "height": saved.height,
                "durationMs": u64::try_from(saved.duration.as_millis()).unwrap_or(u64::MAX),
                "ended": saved.ended,
            }));
            output.images.push(Image {
                mime: "image/gif".into(),
                data: base64::engine::general_purpose::STANDARD.encode(&saved.preview),
            });
            Ok(output)
        }
    }
}

/// The words that name an element in a caption: its label, never its value
/// (a typed password is a value).
const LABEL: &str = "function() {
  const t = this.getAttribute('aria-label') || (this.labels && this.labels[0] && this.labels[0].innerText)
    || this.getAttribute('placeholder') || this.getAttribute('title') || this.getAttribute('alt')
    || (['submit', 'button', 'reset'].includes(this.type) ? this.value : '')
    || (this.matches('input, textarea, select, [contenteditable]') ? this.getAttribute('name') : this.innerText) || '';
  return String(t).replace(/\\s+/g, ' ').trim().slice(0, 40);
}";

impl crate::session::Session {
    /// Tells a recording running on this handle that `tool` is about to run with
    /// `args`: the frames from now on are captioned with it (the gate calls this
    /// for every call it runs, whatever its source; without a recording it costs nothing).
    pub async fn note_call(&self, tool: &str, args: &serde_json::Value) {
        if tool == "page_record" || !self.recorder.is_recording() {
            return;
        }
        let label = match args.get("ref").and_then(serde_json::Value::as_str) {
            Some(r) => {
                tokio::time::timeout(std::time::Duration::from_millis(500), self.element_label(r)).await.ok().flatten()
            }
            None => None,
        };
        self.recorder.settle().await;
        self.recorder.step(&recording::caption::of_call(tool, args, label.as_deref()));
    }

    async fn element_label(&self, r: &str) -> Option<String> {
        let (live, tab) = self.tab_if_running().await?;
        let element = crate::helper::element(&live, &tab, r).await.ok()?;
        let params = json!({"objectId": element.object, "functionDeclaration": LABEL, "returnByValue": true});
        let value = live.call_in(&element.session, "Runtime.callFunctionOn", params).await.ok()?;
        value["result"]["value"].as_str().map(str::to_string)
    }
}

//! JavaScript dialogs: `page_dialog` answers an open alert, confirm, prompt
//! or beforeunload. It never runs page script first: a dialog blocks it.

use std::time::Duration;

use lumo_cdp::{CdpError, SERVER_ERROR};
use lumo_protocol::ErrorCode;
use lumo_protocol::text::clip;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::{BrowserError, refuse};
use crate::page::wait_until;
use crate::tool::{Hints, Outcome, Tool, ToolOutput};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "page_dialog",
            "Accept or dismiss the open alert, confirm, prompt or beforeunload dialog.",
            Hints::ACT,
            dialog,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DialogArgs {
    /// true = OK/accept, false = Cancel/dismiss.
    accept: bool,
    /// Text to answer a prompt with (default: its default value).
    prompt_text: Option<String>,
}

async fn dialog(session: Ctx, args: DialogArgs) -> Outcome {
    on_tab(&session, TabUse::DIALOG, |OnTab { live, tab }| async move {
        let Some(open) = tab.state().dialog.clone() else {
            return Err(refuse(ErrorCode::InvalidState, "No dialog is open."));
        };
        if args.prompt_text.is_some() && open.kind != "prompt" {
            return Err(refuse(
                ErrorCode::InvalidArguments,
                format!("prompt_text: only for a prompt; this is a {}", open.kind),
            ));
        }
        let mut params = json!({"accept": args.accept});
        if open.kind == "prompt" && args.accept {
            params["promptText"] = json!(args.prompt_text.as_deref().unwrap_or(&open.default_prompt));
        }
        // A cross-origin frame's dialog is answered on that frame's session.
        let session = open.frame_session.clone().unwrap_or_else(|| tab.session_id.clone());
        if let Err(e) = live.call_in(&session, "Page.handleJavaScriptDialog", params).await {
            // The browser has none (it closed another way): forget ours.
            if matches!(e, BrowserError::Cdp(CdpError::Protocol { code: SERVER_ERROR, .. })) {
                tab.state().dialog = None;
                return Err(refuse(ErrorCode::InvalidState, "No dialog is open."));
            }
            return Err(e);
        }
        // The closing event may trail the answer; wait for it so the settling sees the page, not the old dialog.
        wait_until(&tab, Duration::from_millis(500), |s| s.dialog.is_none()).await;
        let verb = if args.accept { "Accepted" } else { "Dismissed" };
        let answered = match (&args.prompt_text, open.kind.as_str(), args.accept) {
            (Some(text), _, true) => format!(" with {} characters", text.chars().count()),
            (None, "prompt", true) if !open.default_prompt.is_empty() => " with its default value".to_string(),
            _ => String::new(),
        };
        let (message, cut) = clip(&open.message, 300);
        // The dialog's words come first in the page part, before where the page went.
        let message = format!("dialog message: {message:?}{}", if cut { "…" } else { "" });
        Ok(ToolOutput::text(format!("{verb} the {} dialog{answered}.", open.kind)).with_page_text(message))
    })
    .await
}

//! One tab: its CDP session and what lumo has seen happen in it (console,
//! network, dialogs, file choosers, loading), kept current by the event pump.
//!
//! The state is plain data ([`state`]); each CDP domain has its own decoder
//! ([`page`], [`runtime`], [`log`], [`network`], [`input`]; `WebMCP` events go
//! to the tab's page tools), and [`Tab::on_event`] routes an event to its
//! domain's.

mod input;
mod log;
mod network;
mod page;
mod runtime;
mod state;

use std::sync::{Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;

pub(crate) use state::{ChildFrame, ConsoleEntry, Marks, Request, TabState, Worlds};

/// A tab lumo is attached to.
#[derive(Debug)]
pub(crate) struct Tab {
    pub(crate) target_id: String,
    pub(crate) session_id: String,
    /// The browser context (CDP `browserContextId`) the tab lives in.
    pub(crate) browser_context: String,
    state: Mutex<TabState>,
    /// Woken on every event of this tab; waits re-check their condition.
    pub(crate) changed: Notify,
    /// Serialises actions and reads on this tab.
    pub(crate) busy: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl Tab {
    pub(crate) fn new(target_id: String, session_id: String, main_frame: String, browser_context: String) -> Self {
        let state = TabState { next_child: 1, main_frame, ..TabState::default() };
        Self {
            target_id,
            session_id,
            browser_context,
            state: Mutex::new(state),
            changed: Notify::new(),
            busy: Default::default(),
        }
    }

    /// The CDP session that owns `frame_id`: a cross-origin frame's own, else the tab's.
    pub(crate) fn session_for_frame(&self, frame_id: &str) -> String {
        let s = self.state();
        s.children
            .iter()
            .find(|c| c.frame_id == frame_id)
            .map_or_else(|| self.session_id.clone(), |c| c.session_id.clone())
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, TabState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies one CDP event of a cross-origin frame's own session: its console,
    /// network, page tools and dialogs are the tab's; its loading is not.
    pub(crate) fn on_frame_event(&self, session: &str, method: &str, params: &Value) {
        match method {
            "Page.frameNavigated" | "Page.frameDetached" | "Page.frameStartedNavigating" => {
                self.state().webmcp.on_event(method, params);
                self.changed.notify_waiters();
            }
            // The frame's own worlds (a new document of the frame clears them), not the tab's.
            "Runtime.executionContextCreated"
            | "Runtime.executionContextDestroyed"
            | "Runtime.executionContextsCleared" => runtime::frame_context(&mut self.state(), session, method, params),
            "Page.javascriptDialogOpening" => {
                self.on_event(method, params);
                if let Some(dialog) = self.state().dialog.as_mut() {
                    dialog.frame_session = Some(session.to_string());
                }
            }
            m if m.starts_with("Page.") => {}
            _ => self.on_event(method, params),
        }
    }
    /// Applies one CDP event of this tab's session, through its domain's decoder.
    pub(crate) fn on_event(&self, method: &str, params: &Value) {
        let changed = {
            let mut s = self.state();
            match method.split_once('.').map_or(method, |(domain, _)| domain) {
                "Page" => page::decode(&mut s, method, params),
                "Runtime" => runtime::decode(&mut s, method, params),
                "Log" => log::decode(&mut s, method, params),
                "Network" => network::decode(&mut s, method, params),
                "Input" => input::decode(&mut s, method, params),
                "WebMCP" => {
                    s.webmcp.on_event(method, params);
                    true
                }
                _ => false,
            }
        };
        if changed {
            self.changed.notify_waiters();
        }
    }

    /// What waits on the agent (an open dialog, a file chooser), as lumo's own
    /// words plus the page's words (a dialog's message), kept apart so the
    /// page's text is fenced as untrusted.
    pub(crate) fn pending_notices(&self) -> (Vec<String>, Vec<String>) {
        let s = self.state();
        let (mut ours, mut page) = (Vec::new(), Vec::new());
        if let Some(d) = &s.dialog {
            ours.push(format!(
                "A dialog is open ({}): the page is blocked until you answer it with page_dialog (accept or dismiss).",
                d.kind
            ));
            page.push(format!("dialog message: {:?}", d.message));
        }
        if let Some(f) = &s.file_chooser {
            ours.push(format!(
                "A file chooser is open ({}). Answer it with file_upload {{paths}}.",
                if f.multiple { "several files" } else { "one file" }
            ));
        }
        (ours, page)
    }
}

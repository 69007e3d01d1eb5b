//! What lumo has seen happen in one tab (console, network, dialogs, file
//! choosers, loading, frames, page tools), as plain data the decoders write
//! and the tools read.

use std::collections::VecDeque;
use std::time::Instant;

use serde_json::Value;

use crate::webmcp::registry::TabTools;

/// How many console messages and network requests a tab keeps.
pub(crate) const CONSOLE_CAP: usize = 1000;
pub(crate) const NETWORK_CAP: usize = 2000;

#[derive(Debug, Clone)]
pub(crate) struct ConsoleEntry {
    pub(crate) level: String,
    pub(crate) text: String,
    pub(crate) location: String,
    /// Written by the browser itself (CDP `Log` domain: failed loads, blocked
    /// ports, CSP violations…), e.g. "network"; `None` for the page's own
    /// console calls and uncaught errors.
    pub(crate) browser_source: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    pub(crate) id: String,
    /// The short number tools show (`#12`); never repeats within a tab.
    pub(crate) seq: u64,
    pub(crate) url: String,
    pub(crate) method: String,
    pub(crate) resource_type: String,
    pub(crate) status: Option<i64>,
    pub(crate) mime: String,
    pub(crate) request_headers: Value,
    pub(crate) response_headers: Value,
    pub(crate) post_data: Option<String>,
    pub(crate) encoded_size: Option<f64>,
    pub(crate) failure: Option<String>,
    pub(crate) finished: bool,
    /// When it was sent.
    pub(crate) started: Option<Instant>,
    /// The frame that sent it.
    pub(crate) frame_id: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Dialog {
    /// The session of the frame that opened it, when a cross-origin frame did.
    pub(crate) frame_session: Option<String>,
    pub(crate) kind: String,
    pub(crate) message: String,
    pub(crate) default_prompt: String,
}

#[derive(Debug, Clone)]
pub(crate) struct FileChooser {
    pub(crate) backend_node_id: i64,
    pub(crate) multiple: bool,
}

#[derive(Debug, Default)]
pub(crate) struct TabState {
    pub(crate) url: String,
    /// The last document request the origin lists stopped in this tab, and why.
    pub(crate) blocked: Option<String>,
    pub(crate) title: String,
    pub(crate) loading: bool,
    /// Bumped on every main-frame navigation (new document).
    pub(crate) navigations: u64,
    /// Bumped on every main-frame navigation within the document (pushState,
    /// history within one document, a fragment): no new document, no load.
    pub(crate) within_document: u64,
    /// Bumped whenever the main frame stops loading, whether or not a new
    /// document came of it (a same-document change, a 204, a download).
    pub(crate) stopped_loading: u64,
    pub(crate) last_network_activity: Option<Instant>,
    pub(crate) console: VecDeque<ConsoleEntry>,
    pub(crate) requests: VecDeque<Request>,
    /// The last request number given out.
    pub(crate) request_seq: u64,
    pub(crate) dialog: Option<Dialog>,
    pub(crate) file_chooser: Option<FileChooser>,
    /// The main frame's worlds with lumo's helper (the "lumo" world is taken
    /// as preloaded only once the helper is registered: `preloaded`).
    pub(crate) worlds: Worlds,
    /// Whether Chromium runs the helper in every new document of this tab.
    pub(crate) preloaded: bool,
    pub(crate) main_frame: String,
    /// The data of an HTML5 drag that Chromium handed to lumo (`Input.dragIntercepted`).
    pub(crate) drag: Option<Value>,
    /// Out-of-process (cross-origin) frames, each with its own CDP session.
    pub(crate) children: Vec<ChildFrame>,
    /// The index the next child frame gets (refs `f<index>e<n>`); never reused.
    pub(crate) next_child: u32,
    /// WebMCP page tools registered in this tab's frames.
    pub(crate) webmcp: TabTools,
}

/// Requests older than this do not keep a page from counting as quiet:
/// long polls, streams, and requests whose end Chromium reports elsewhere.
pub(super) const LONG_REQUEST: std::time::Duration = std::time::Duration::from_secs(3);

/// Where a tab was before an action: what its answer compares against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marks {
    pub(crate) navigations: u64,
    pub(crate) within_document: u64,
    pub(crate) stopped_loading: u64,
    pub(crate) request_seq: u64,
}

impl TabState {
    /// The counters to compare against after an action.
    pub(crate) fn marks(&self) -> Marks {
        Marks {
            navigations: self.navigations,
            within_document: self.within_document,
            stopped_loading: self.stopped_loading,
            request_seq: self.request_seq,
        }
    }

    /// Whether the main frame moved since `before`: a new document, or a new URL within it.
    pub(crate) fn moved_since(&self, before: &Marks) -> bool {
        self.navigations != before.navigations || self.within_document != before.within_document
    }

    /// How many requests are in flight (ignoring long-lived ones).
    pub(crate) fn inflight(&self) -> usize {
        // A cross-origin frame's document finishes in that frame's own session, which
        // may attach too late to report it: subframe documents never hold a wait.
        self.requests
            .iter()
            .filter(|r| !r.finished && r.started.is_some_and(|t| t.elapsed() < LONG_REQUEST))
            .filter(|r| r.resource_type != "Document" || r.frame_id == self.main_frame)
            .count()
    }
}

/// A cross-origin frame running in its own process, attached with its own session.
#[derive(Debug, Clone)]
pub(crate) struct ChildFrame {
    pub(crate) index: u32,
    pub(crate) frame_id: String,
    pub(crate) session_id: String,
    pub(crate) worlds: Worlds,
}

/// Where lumo's helper runs in one frame's current document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Worlds {
    /// The "lumo" world as Chromium last announced it: id and unique id (an id
    /// alone may name another context after a process swap).
    pub(crate) named: Option<(i64, String)>,
    /// That world, once the helper is known to run in it: Chromium ran the
    /// helper registered for new documents there, or lumo installed it by hand.
    /// Calls go straight to it.
    pub(crate) preloaded: Option<(i64, String)>,
    /// The world lumo installed the helper in by hand (`Page.createIsolatedWorld`).
    pub(crate) installed: Option<i64>,
}

impl Worlds {
    /// Chromium made the frame's "lumo" world; `with_helper`: the helper registered
    /// for new documents runs in it.
    pub(crate) fn announced(&mut self, context: &Value, with_helper: bool) {
        if let (Some(id), Some(unique)) = (context["id"].as_i64(), context["uniqueId"].as_str()) {
            self.named = Some((id, unique.to_string()));
            self.preloaded = with_helper.then(|| (id, unique.to_string()));
        }
    }

    /// lumo installed the helper in world `id` by hand: if that is the world
    /// Chromium announced, later calls go straight to it.
    pub(crate) fn installed_in(&mut self, id: i64) {
        self.installed = Some(id);
        if self.named.as_ref().is_some_and(|(w, _)| *w == id) {
            self.preloaded = self.named.clone();
        }
    }

    /// A context of the frame's process went away.
    pub(crate) fn destroyed(&mut self, id: Option<i64>) {
        let gone = |w: &Option<(i64, String)>| w.as_ref().is_some_and(|(w, _)| Some(*w) == id);
        if gone(&self.named) {
            self.named = None;
        }
        if gone(&self.preloaded) {
            self.preloaded = None;
        }
        if self.installed.is_some() && self.installed == id {
            self.installed = None;
        }
    }

    /// A call failed: the helper may be missing from the world, so the next call
    /// asks for it again (and installs the helper if it is not there).
    pub(crate) fn distrust(&mut self) {
        self.preloaded = None;
        self.installed = None;
    }

    /// A new document: nothing of the old one's worlds holds.
    pub(crate) fn forget(&mut self) {
        *self = Self::default();
    }
}

/// Appends to a bounded log, dropping the oldest entry when full.
pub(super) fn push_capped<T>(queue: &mut VecDeque<T>, item: T, cap: usize) {
    if queue.len() >= cap {
        queue.pop_front();
    }
    queue.push_back(item);
}

#[cfg(test)]
mod worlds_tests {
    use serde_json::json;

    use super::Worlds;

    #[test]
    fn a_failed_call_sends_calls_the_slow_way_only_until_the_helper_is_installed_again() {
        let mut w = Worlds::default();
        w.announced(&json!({"id": 7, "uniqueId": "u7"}), true);
        assert_eq!(w.preloaded, Some((7, "u7".to_string())));
        w.distrust();
        assert_eq!(w.preloaded, None);
        // Installed by hand in another world: not the announced one, so no shortcut.
        w.installed_in(8);
        assert_eq!(w.preloaded, None);
        w.installed_in(7);
        assert_eq!(w.preloaded, Some((7, "u7".to_string())));
        w.destroyed(Some(7));
        assert_eq!((w.named.clone(), w.preloaded.clone()), (None, None));
    }

    #[test]
    fn a_world_made_without_the_helper_is_used_once_lumo_installed_it() {
        let mut w = Worlds::default();
        w.announced(&json!({"id": 3, "uniqueId": "u3"}), false);
        assert_eq!(w.preloaded, None);
        w.installed_in(3);
        assert_eq!(w.preloaded, Some((3, "u3".to_string())));
        w.forget();
        assert_eq!(w.named, None);
    }
}

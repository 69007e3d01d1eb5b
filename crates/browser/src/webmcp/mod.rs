//! WebMCP page tools: the tools a page registers with
//! `document.modelContext.registerTool` (or declares with `<form toolname>`),
//! discovered and invoked over the CDP `WebMCP` domain.
//!
//! Discovery: every attached tab enables `WebMCP` on its page session; the
//! tab keeps the registered tools per frame from `toolsAdded` / `toolsRemoved`
//! and drops a frame's tools itself on `Page.frameNavigated` and
//! `Page.frameDetached` (Chromium 156 sends no `toolsRemoved` on a
//! cross-document navigation or reload).
//!
//! Exposure: each tool of the selected tab is exposed as `webmcp_<name>`, its
//! name mapped into `^[a-zA-Z0-9_-]{1,64}$` ([`exposed_name`]); a name that is
//! too long, malformed, reserved or that collides after mapping is refused
//! visibly (first come first served across frames).
//!
//! Binding: every registration gets a generation that never repeats. Each MCP
//! session keeps its own [`PageBindings`], filled only by listing: a `webmcp_*`
//! name that session was shown is bound to that registration; when the page has
//! since navigated or registered the tool again, the call fails with
//! `stale_context` instead of running a different tool of the same name. A name
//! the session never listed is unknown ([`Unresolved::NotListed`]).
//!
//! Bounds (what a page can put in front of the model): descriptions cut at
//! 1000 characters, schemas up to 8 kB, at most
//! 64 tools exposed per tab; the rest refused with the reason.
//!
//! A back/forward-cache restore sends the restored document's `toolsAdded`
//! *before* its `Page.frameNavigated`: tools that arrived since the frame's
//! `Page.frameStartedNavigating` are the restored ones and are kept.
//!
//! The folder, one job a file, one direction: [`registry`] (what the page
//! registered; imports nothing of the crate) ← [`listing`] (exposed names,
//! bounds) ← [`binding`] (what each MCP session was shown) ← [`invoke`] (the
//! call) → [`answer`] (shaping what the page said).

mod answer;
mod binding;
mod invoke;
mod listing;
pub(crate) mod registry;

pub use binding::{PageBindings, Unresolved};
pub(crate) use invoke::invoke;
pub use invoke::{page_tool, unavailable_page_tool};
pub use listing::{PageTool, schema_summary};
pub use registry::exposed_name;

//! lumo-browser: lumo's built-in browser tools over the Chrome DevTools
//! Protocol.
//!
//! - [`Session`] is the browser lumo drives: launched on first use (or
//!   attached to), its tabs followed by one event pump, restarted after a crash.
//!   [`Session::isolated`] makes another client's handle on the same browser,
//!   with a browser context (tabs, cookies, storage) of its own.
//! - [`builtin_tools`] lists every built-in tool as a [`Tool`]: a
//!   [`ToolSpec`] (name, description, JSON Schema, hints) and a handler.
//!   Each family lives in one file under `tools/` (`page_click` is in
//!   `tools/input.rs`).
//! - Page reading and acting go through a helper script that runs in an
//!   isolated world, so the page cannot see or tamper with it (`src/js/`,
//!   called only through the typed functions of `helper`). Refs (`e12`)
//!   name elements; one counter numbers them for every tab, so a ref never
//!   repeats: a ref from an old page fails as `stale_ref` and one from another
//!   tab is refused, instead of hitting another element.
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! let session = Arc::new(lumo_browser::Session::new(lumo_browser::BrowserSource::Launch(Default::default())));
//! let tools = lumo_browser::builtin_tools();
//! let navigate = tools.iter().find(|t| t.spec.name == "browser_navigate").expect("listed");
//! let answer = navigate.call(session.clone(), serde_json::json!({"url": "https://example.com"})).await;
//! # }
//! ```

mod action;
mod error;
pub mod extractors;
mod helper;
pub mod origin;
mod page;
mod recording;
mod refs;
pub mod schema;
mod session;
mod tab;
mod tool;
mod tools;
mod url_policy;
mod webmcp;

pub use error::BrowserError;
pub use recording::data_dir;
pub use schema::sanitize_page_schema;
pub use session::{BrowserSource, Session};
pub use tool::{Hints, Image, Tool, ToolError, ToolOutput, ToolResult, ToolSpec, fail, parse_args, schema_of};
pub use tools::{Routed, builtin_tools, is_page_tool_call, route};
pub use url_policy::UrlPolicy;
pub use webmcp::{PageBindings, PageTool, Unresolved, exposed_name, page_tool, schema_summary, unavailable_page_tool};

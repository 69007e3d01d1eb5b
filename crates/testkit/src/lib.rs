//! lumo's test kit (dev-only, never published): what every integration test
//! of the workspace needs, in one place.
//!
//! - **A fixture server** ([`FixtureServer`]): the `fixtures/` folder, inline
//!   routes a test registers ([`Route`]), `?delay=MS`, and built-in status,
//!   redirect, cookie and echo routes.
//! - **Three levels to drive a tool at**: the library ([`Browser`]: lumo-browser's
//!   tools on a session), the gate ([`Gated`]: lumo-host's gate, no MCP) and the
//!   MCP process ([`Lumo`]: the real `lumo` binary through rmcp's client;
//!   [`HttpLumo`] for raw HTTP).
//! - **Answers** ([`Answer`], [`AnswerView`]) and [`assert_answer!`], which
//!   prints the whole answer when a check fails.
//! - **Golden files** ([`golden`]): `tests/golden/tools.json` is the tool list
//!   every suite reads; `LUMO_BLESS=1 cargo test -p lumo-cli --test golden`
//!   rewrites it.
//!
//! ```ignore
//! use lumo_testkit::{FixtureServer, Lumo, assert_answer};
//! let server = FixtureServer::start().await;
//! let lumo = Lumo::start().await;
//! lumo.open(&server.url("login.html")).await;
//! let snapshot = lumo.ok("page_snapshot", serde_json::json!({})).await;
//! assert_answer!(snapshot, page contains "button \"Sign in\"");
//! lumo.stop().await;
//! ```

pub mod answer;
pub mod fixtures;
pub mod gate;
pub mod golden;
pub mod library;
pub mod mcp;

pub use answer::{Answer, AnswerView, fenced, ref_in, try_ref_in};
pub use fixtures::{FixtureBuilder, FixtureServer, Route, copy_dir, fixtures_dir, repo_root};
pub use gate::Gated;
pub use library::Browser;
pub use mcp::{
    HttpLumo, INITIALIZE, Lumo, browser_pid, children_of, free_port, header, http_session, lumo_bin, lumo_command,
    post_mcp,
};

//! The library level: lumo-browser's built-in tools called directly on a
//! [`Session`] (no gate, no MCP), for tests of one tool's behaviour.

use std::sync::Arc;

use lumo_browser::{BrowserSource, Session, Tool, ToolOutput, ToolResult, builtin_tools};
use lumo_cdp::LaunchOptions;
use lumo_protocol::ErrorCode;
use serde_json::{Value, json};

use crate::answer::ref_in;

/// A lumo-browser session (headless Chromium, launched on the first call) and its built-in tools.
pub struct Browser {
    /// The session the tools run on.
    pub session: Arc<Session>,
    tools: Vec<Tool<Arc<Session>>>,
}

impl Default for Browser {
    fn default() -> Self {
        Self::new()
    }
}

impl Browser {
    /// A session that launches Chromium with lumo's defaults.
    pub fn new() -> Self {
        Self::with_args(Vec::new())
    }

    /// A session whose Chromium gets these extra command-line flags.
    pub fn with_args(extra_args: Vec<String>) -> Self {
        let source = BrowserSource::Launch(LaunchOptions { extra_args, ..LaunchOptions::default() });
        Self { session: Arc::new(Session::new(source)), tools: builtin_tools() }
    }

    /// Calls a built-in tool.
    pub async fn call(&self, name: &str, args: Value) -> ToolResult {
        let tool = self.tools.iter().find(|t| t.spec.name == name).unwrap_or_else(|| panic!("no tool {name}"));
        tool.call(self.session.clone(), args).await
    }

    /// Calls a tool that must succeed.
    pub async fn ok(&self, name: &str, args: Value) -> ToolOutput {
        match self.call(name, args.clone()).await {
            Ok(out) => out,
            Err(e) => panic!("{name} {args}: {:?} {} {:?}", e.code, e.message, e.page_text),
        }
    }

    /// Calls a tool that must fail with `code` and a message containing `needle`.
    pub async fn fails(&self, name: &str, args: Value, code: ErrorCode, needle: &str) {
        let failure = match self.call(name, args.clone()).await {
            Err(failure) => failure,
            Ok(out) => panic!("{name} {args} should fail, answered {out:?}"),
        };
        assert_eq!(failure.code, code, "{name} {args}: {}", failure.message);
        assert!(failure.message.contains(needle), "{name} {args}: {:?} lacks {needle:?}", failure.message);
    }

    /// Opens a URL.
    pub async fn open(&self, url: &str) -> ToolOutput {
        self.ok("browser_navigate", json!({"url": url})).await
    }

    /// The value of a page expression, as devtools_evaluate shows it.
    pub async fn eval(&self, expression: &str) -> String {
        self.ok("devtools_evaluate", json!({"expression": expression})).await.page_text.unwrap_or_default()
    }

    /// The snapshot's page part.
    pub async fn snapshot(&self) -> String {
        self.ok("page_snapshot", json!({})).await.page_text.unwrap_or_default()
    }

    /// The ref after `needle` on the first snapshot line that contains it
    /// (controls share a line in the snapshot: the one named, not the line's first).
    pub async fn ref_of(&self, needle: &str) -> String {
        ref_in(&self.snapshot().await, needle)
    }

    /// The ref `page_find` gives the element of `role` named `name`, as an agent
    /// gets one for what a snapshot shows without a ref (a heading).
    pub async fn found_ref(&self, role: &str, name: &str) -> String {
        let found = self.ok("page_find", json!({"role": role, "text": name})).await;
        ref_in(&found.page_text.unwrap_or_default(), &format!("{role} \"{name}\""))
    }

    /// Closes the browser.
    pub async fn close(self) {
        self.session.shutdown().await;
    }
}

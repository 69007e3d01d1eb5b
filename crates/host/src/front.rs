//! The MCP front: lumo as an rmcp server handler, on stdio.
//!
//! The tool list is dynamic (page tools come and go): `tools/list` asks the
//! catalog each time, and every initialized client is sent
//! `notifications/tools/list_changed` when the catalog announces a change.
//! Consequential page tools are confirmed through MCP elicitation when the
//! client supports it.
//!
//! Each `LumoServer` (one per stdio connection, one per Streamable HTTP
//! session) keeps its own page tool bindings: a session calls only the page
//! tools it listed. A stateless Streamable HTTP request (protocol 2026-07-28)
//! gets a fresh `LumoServer` every time, so those requests share the gate's table.
//!
//! Isolation between clients: a Streamable HTTP session's `LumoServer` also has
//! its own browser context ([`lumo_browser::Session::isolated`]: own tabs,
//! cookies, storage), disposed when the session closes or expires and rmcp drops
//! its service. Stdio and stateless requests work in the default context.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use lumo_browser::PageBindings;

use crate::caller::CallContext;
use crate::fence::explanation;
use crate::gate::{Call, CallError, ConfirmRequest, Confirmation, Confirmer, Gate, GateOutput};

/// How long the user has to answer a confirmation.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(300);

/// lumo as an MCP server.
#[derive(Clone)]
pub struct LumoServer {
    gate: Arc<Gate>,
    /// Whether this connection's peer already gets list-change notifications.
    notifying: Arc<AtomicBool>,
    /// The page tools this session listed.
    bindings: Arc<PageBindings>,
    /// The browser handle this session's tools run on (see the module docs).
    browser: Arc<lumo_browser::Session>,
}

impl LumoServer {
    /// A server over `gate`, in the browser's default context (stdio).
    pub fn new(gate: Arc<Gate>) -> Self {
        let browser = gate.catalog().session().clone();
        Self { gate, notifying: Arc::default(), bindings: Arc::default(), browser }
    }

    /// A server over `gate` with a browser context of its own (a Streamable HTTP
    /// session): made on the session's first browser call, disposed with the server.
    pub fn isolated(gate: Arc<Gate>) -> Self {
        let browser = Arc::new(gate.catalog().session().isolated());
        Self { gate, notifying: Arc::default(), bindings: Arc::default(), browser }
    }

    /// The browser handle a request runs on: its session's own context, or the
    /// default one for a stateless Streamable HTTP request (no `Mcp-Session-Id`),
    /// which shares the gate's bindings too.
    fn browser_for(&self, context: &RequestContext<RoleServer>) -> Arc<lumo_browser::Session> {
        if self.stateless(context) { self.gate.catalog().session().clone() } else { self.browser.clone() }
    }

    fn stateless(&self, context: &RequestContext<RoleServer>) -> bool {
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"))
    }

    /// The page tool bindings a request uses: its session's, or the gate's shared
    /// table for a Streamable HTTP request outside any session (no `Mcp-Session-Id`).
    fn bindings_for(&self, context: &RequestContext<RoleServer>) -> Arc<PageBindings> {
        let stateless = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"));
        if stateless { self.gate.shared_bindings().clone() } else { self.bindings.clone() }
    }

    /// Sends `notifications/tools/list_changed` to `peer` whenever the catalog changes, until it goes away.
    fn notify_changes(&self, peer: Peer<RoleServer>) {
        // Only initialize-era peers take unsolicited notifications; newer ones use `listen`.
        if !peer.peer_info().is_some_and(|info| info.protocol_version.has_initialize())
            || self.notifying.swap(true, Ordering::SeqCst)
        {
            return;
        }
        let mut changes = self.gate.catalog().subscribe();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.is_transport_closed() {
                    return;
                }
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!(error = %e, "could not send tools/list_changed");
                    return;
                }
            }
        });
    }
}

/// What the user is asked before a consequential tool runs: who offers it, which tool, with what.
fn question(request: &ConfirmRequest) -> String {
    let offerer = match &request.extension {
        Some(extension) => format!("The extension {extension}"),
        None => format!("The page {}", request.origin),
    };
    let arguments = lumo_protocol::text::clip_marked(&request.arguments.to_string(), 1000);
    format!(
        "{offerer} offers the tool {:?}, marked consequential (e.g. it buys, sends or deletes something). Run it with these arguments?\n{arguments}",
        request.page_tool
    )
}

/// A confirmer that asks the user through MCP elicitation, when the client supports it.
fn elicitation_confirmer(peer: Peer<RoleServer>) -> Confirmer {
    Arc::new(move |request: ConfirmRequest| {
        let peer = peer.clone();
        Box::pin(async move {
            if !peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
                return Confirmation::Unsupported;
            }
            let message = question(&request);
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: ElicitationSchema::new(BTreeMap::new()),
            };
            match peer.create_elicitation_with_timeout(params, Some(CONFIRM_TIMEOUT)).await {
                Ok(answer) => match answer.action {
                    ElicitationAction::Accept => Confirmation::Accepted,
                    ElicitationAction::Decline => Confirmation::Declined,
                    _ => Confirmation::Cancelled,
                },
                Err(e) => {
                    tracing::debug!(error = %e, "elicitation failed");
                    Confirmation::Unsupported
                }
            }
        })
    })
}

/// The client (from its initialize info) and session (the HTTP session id, or stdio) of a request.
fn caller_of(context: &RequestContext<RoleServer>) -> CallContext {
    let info = context.peer.peer_info();
    let (name, version) =
        info.as_ref().map_or(("", ""), |i| (i.client_info.name.as_str(), i.client_info.version.as_str()));
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => {
            let session = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
            CallContext::http(name, version, session)
        }
        None => CallContext::new(name, version, "stdio"),
    }
}

fn to_mcp_tool(spec: &lumo_browser::ToolSpec) -> Tool {
    // Every schema shown must pass strict validators (Ajv strict): page schemas come as the
    // page wrote them (regexes in `format`, `type` arrays…). The gate still validates
    // arguments against the original.
    let schema = match lumo_browser::sanitize_page_schema(&spec.input_schema) {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let annotations = ToolAnnotations::new()
        .read_only(spec.hints.read_only)
        .destructive(spec.hints.destructive)
        .open_world(spec.hints.open_world);
    Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema)).with_annotations(annotations)
}

/// Turns the gate's answer into an MCP result.
fn to_mcp_result(output: GateOutput) -> CallToolResult {
    let mut content = vec![ContentBlock::text(output.text)];
    content.extend(output.images.into_iter().map(|i| ContentBlock::image(i.data, i.mime)));
    let mut result = if output.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    result.structured_content = output.structured;
    result
}

impl ServerHandler for LumoServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        let mut info = ServerConfig::new(capabilities).with_instructions(format!(
            "lumo gives you a real browser. Read pages with page_snapshot or page_find; act with refs like e12. {}",
            explanation()
        ));
        info.server_info = rmcp::model::Implementation::new("lumo", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.notify_changes(context.peer.clone());
        let (bindings, browser) = (self.bindings_for(&context), self.browser_for(&context));
        let listed = self.gate.list_in(&browser, &bindings);
        Ok(ListToolsResult::with_all_items(listed.iter().map(to_mcp_tool).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
        self.notify_changes(context.peer.clone());
        let confirm = elicitation_confirmer(context.peer.clone());
        let (bindings, browser) = (self.bindings_for(&context), self.browser_for(&context));
        let caller = caller_of(&context);
        let call = Call {
            browser: &browser,
            caller: &caller,
            bindings: &bindings,
            name: &request.name,
            args,
            cancel: context.ct.clone(),
            confirm: Some(confirm),
        };
        match self.gate.call_in(call).await {
            Ok(output) => Ok(to_mcp_result(output).into()),
            Err(e @ CallError::UnknownTool(_)) => Err(ErrorData::invalid_params(e.to_string(), None)),
        }
    }

    // rmcp asks this before a Streamable HTTP call (to check SEP-2243 headers).
    // Looking a tool up never binds it: only listing does (issue 8 item 1).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let catalog = self.gate.catalog();
        catalog
            .spec(name, &self.bindings)
            .or_else(|| catalog.spec(name, self.gate.shared_bindings()))
            .as_ref()
            .map(to_mcp_tool)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.notify_changes(context.peer);
    }

    // 2026-07-28 clients have no `initialize`: they ask for list changes with `subscriptions/listen`.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        (requested.tools_list_changed == Some(true)).then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.gate.catalog().subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if let Err(e) = context.sink().notify_tool_list_changed().await {
                        tracing::debug!(error = %e, "could not send tools/list_changed to a subscription");
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve_stdio(gate: Arc<Gate>) -> Result<(), std::io::Error> {
    // lumo's own line reader: rmcp's drops a non-JSON line without the -32700 reply.
    let running = LumoServer::new(gate)
        .serve(crate::stdio::StdioTransport::new())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(extension: Option<&str>) -> ConfirmRequest {
        ConfirmRequest {
            tool: "notes_delete".into(),
            page_tool: "notes_delete".into(),
            origin: "provider extension abcdefghijklmnopabcdefghijklmnop".into(),
            extension: extension.map(str::to_string),
            arguments: serde_json::json!({"id": 7}),
        }
    }

    #[test]
    fn the_question_names_who_offers_the_tool() {
        let page = ConfirmRequest { origin: "https://shop.test".into(), ..request(None) };
        assert!(question(&page).starts_with("The page https://shop.test offers the tool \"notes_delete\""));
        let provider = request(Some("\"My Notes\" (abcdefghijklmnopabcdefghijklmnop)"));
        let asked = question(&provider);
        assert!(
            asked.starts_with(
                "The extension \"My Notes\" (abcdefghijklmnopabcdefghijklmnop) offers the tool \"notes_delete\""
            ),
            "{asked}"
        );
        assert!(!asked.contains("The page"), "{asked}");
        assert!(asked.ends_with("{\"id\":7}"), "{asked}");
    }
}

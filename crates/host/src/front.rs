//! The MCP front: lumo as an rmcp server handler, on stdio.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

use crate::fence::explanation;
use crate::gate::{CallError, Gate, GateOutput};

/// lumo as an MCP server.
#[derive(Clone)]
pub struct LumoServer {
    gate: Arc<Gate>,
    tools: Arc<Vec<Tool>>,
}

impl LumoServer {
    /// A server over `gate`.
    pub fn new(gate: Arc<Gate>) -> Self {
        let tools = gate.specs().iter().map(to_mcp_tool).collect();
        Self { gate, tools: Arc::new(tools) }
    }
}

fn to_mcp_tool(spec: &lumo_browser::ToolSpec) -> Tool {
    let schema = match &spec.input_schema {
        serde_json::Value::Object(map) => map.clone(),
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
        match self.gate.call(&request.name, args, context.ct.clone()).await {
            Ok(output) => Ok(to_mcp_result(output).into()),
            Err(e @ CallError::UnknownTool(_)) => Err(ErrorData::invalid_params(e.to_string(), None)),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }
}

/// Serves MCP on stdin/stdout until the client goes away.
pub async fn serve_stdio(gate: Arc<Gate>) -> Result<(), std::io::Error> {
    let running = LumoServer::new(gate)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

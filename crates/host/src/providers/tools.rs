//! Provider tools as lumo tools, and lumo's own `ext_*` tools.
//!
//! A provider tool runs through the gate like any other (validation against
//! the provider's schema, policy, rate window, shaping, audit with
//! `source = provider`); its handler only calls the provider over L1. What a
//! provider answers is its data, never instructions: the text is fenced as
//! untrusted, structured content is marked `untrustedData`, and a business
//! failure (`isError: true`) stays a tool error the model can read.

use std::sync::Arc;

use lumo_browser::{Hints, Image, Session, Tool, ToolError, ToolOutput, ToolResult};
use lumo_protocol::{ErrorCode, ExtensionId, ToolFailure, is_extension_id};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Providers;
use super::names::Exposed;
use super::session::{CallFailure, Provider, ProviderView, view_line};

/// Longest provider-written description shown to the model.
const MAX_DESCRIPTION: usize = 1000;

/// `provider` tool `exposed` as a lumo tool.
pub(crate) fn provider_tool(provider: Arc<Provider>, exposed: &Exposed) -> Tool<Arc<Session>> {
    let (qualified, name) = (exposed.qualified.clone(), exposed.tool.name.to_string());
    let annotations = exposed.tool.annotations.clone().unwrap_or_default();
    let hints = Hints {
        read_only: annotations.read_only_hint == Some(true),
        destructive: annotations.destructive_hint == Some(true),
        open_world: annotations.open_world_hint == Some(true),
    };
    let who = provider.id.as_str().to_string();
    let label = qualified.clone();
    let mut tool = Tool::new(&qualified, "", hints, move |_: Arc<Session>, args: Value| {
        let (provider, name, label) = (provider.clone(), name.clone(), label.clone());
        async move { call(&provider, &label, &name, args).await }
    })
    .untrusted();
    tool.spec.input_schema = Value::Object((*exposed.tool.input_schema).clone());
    let mut description = exposed.tool.description.as_deref().unwrap_or_default().to_string();
    if lumo_protocol::text::truncate(&mut description, MAX_DESCRIPTION) {
        description.push_str(" [… cut by lumo …]");
    }
    tool.spec.description = format!("[provider tool {:?} from extension {who}] {description}", exposed.tool.name);
    tool
}

async fn call(provider: &Arc<Provider>, qualified: &str, name: &str, args: Value) -> ToolResult {
    let Value::Object(args) = args else {
        return Err(fail(ErrorCode::InvalidArguments, "the arguments must be a JSON object"));
    };
    match provider.call(name, args).await {
        Ok(result) => to_output(qualified, provider.id.as_str(), result),
        Err(CallFailure::Unavailable(why)) => {
            Err(fail(ErrorCode::Unavailable, format!("provider {} cannot take calls now: {why}", provider.id.as_str())))
        }
        Err(CallFailure::Lost) => Err(fail(
            ErrorCode::Unavailable,
            format!(
                "the port to provider {} closed while {qualified} was running (its worker stopped?); it may or may not have taken effect. The next call reconnects.",
                provider.id.as_str()
            ),
        )),
        Err(CallFailure::Protocol(why)) => Err(fail(
            ErrorCode::OperationFailed,
            format!("provider {} refused the call at the protocol level: {why}", provider.id.as_str()),
        )),
    }
}

/// A provider's answer as lumo's tool output: its words fenced, its failure a tool error.
fn to_output(qualified: &str, id: &str, result: CallToolResult) -> ToolResult {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text),
            ContentBlock::Image(i) => images.push(Image { mime: i.mime_type, data: i.data }),
            other => texts.push(serde_json::to_string(&other).unwrap_or_default()),
        }
    }
    let page_text = texts.join("\n");
    if result.is_error == Some(true) {
        let reported = result.structured_content.as_ref().and_then(|s| s["error"]["code"].as_str()).unwrap_or_default();
        let code = ErrorCode::ALL.into_iter().find(|c| c.as_str() == reported).unwrap_or(ErrorCode::OperationFailed);
        let failure = ToolFailure::new(code, format!("{qualified} failed at provider {id} (its answer follows)"));
        return Err(ToolError {
            page_text: Some(page_text),
            details: result.structured_content.map(|s| json!({"providerResult": s})),
            ..ToolError::from(failure)
        });
    }
    let mut out = ToolOutput::text(format!("{qualified} answered (provider {id}):")).with_page_text(page_text);
    out.structured = result.structured_content;
    out.images = images;
    Ok(out)
}

/// A failure of a provider call, as the agent reads it.
fn fail(code: ErrorCode, message: impl Into<String>) -> ToolError {
    ToolFailure::new(code, message).into()
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProvidersArgs {
    /// Probe every provider again now (default true); false shows the last known states.
    refresh: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    /// The provider extension's ID: 32 letters a to p.
    id: String,
}

/// `ext_providers` and `ext_provider_add`.
pub(crate) fn ext_tools(hub: &Arc<Providers>) -> Vec<Tool<Arc<Session>>> {
    let list_hub = Arc::downgrade(hub);
    let add_hub = Arc::downgrade(hub);
    vec![
        Tool::new(
            "ext_providers",
            "Provider extensions: each one's state (connected, or what the user must fix), message, namespace and tool count, and the tools lumo refused with the reason.",
            Hints::READ,
            move |_: Arc<Session>, args: ProvidersArgs| {
                let hub = list_hub.upgrade();
                async move {
                    let hub = hub.ok_or_else(|| fail(ErrorCode::Unavailable, "lumo is stopping"))?;
                    let views = if args.refresh.unwrap_or(true) { hub.refresh_all().await } else { hub.views() };
                    Ok::<_, ToolError>(views_output(&views))
                }
            },
        ),
        Tool::new(
            "ext_provider_add",
            "Adds a provider extension by its ID (it must be installed in the browser), probes it and, when it allows lumo, lists its tools.",
            Hints::ACT,
            move |_: Arc<Session>, args: AddArgs| {
                let hub = add_hub.upgrade();
                async move {
                    let hub = hub.ok_or_else(|| fail(ErrorCode::Unavailable, "lumo is stopping"))?;
                    if !is_extension_id(&args.id) {
                        return Err(fail(
                            ErrorCode::InvalidArguments,
                            format!(
                                "{:?} is not an extension ID: write the 32 letters a to p that chrome://extensions shows",
                                args.id
                            ),
                        ));
                    }
                    let id = ExtensionId::new(args.id).map_err(|e| fail(ErrorCode::InvalidArguments, e.to_string()))?;
                    hub.add(id.clone());
                    let view =
                        hub.refresh(&id).await.ok_or_else(|| fail(ErrorCode::NotFound, "the provider vanished"))?;
                    Ok(views_output(&[view]))
                }
            },
        ),
    ]
}

/// One line per provider, and the views as structured content.
pub(super) fn views_output(views: &[ProviderView]) -> ToolOutput {
    let mut text = String::new();
    if views.is_empty() {
        text.push_str("No provider extensions configured (lumo serve --provider ID, or ext_provider_add).");
    }
    for v in views {
        text.push_str(&view_line(v));
        text.push('\n');
    }
    // Names and messages come from the providers: fenced like any provider data.
    ToolOutput::text(format!("{} provider(s):", views.len()))
        .with_page_text(text.trim_end().to_string())
        .with_structured(json!({"providers": views}))
}

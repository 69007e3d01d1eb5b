//! What a tool is: its spec (name, description, schema, hints), its output,
//! and the glue that turns a typed handler into one the catalog can call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use lumo_protocol::{ErrorCode, ToolFailure};

use crate::error::BrowserError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// MCP tool annotations, as lumo uses them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// Does not change the page or anything else.
    pub read_only: bool,
    /// May have effects the user would want to confirm.
    pub destructive: bool,
    /// Reaches outside the local machine (navigation to arbitrary URLs).
    pub open_world: bool,
}

impl Hints {
    /// Reads only.
    pub const READ: Hints = Hints { read_only: true, destructive: false, open_world: false };
    /// Acts on the page (click, type…): not read-only, not destructive.
    pub const ACT: Hints = Hints { read_only: false, destructive: false, open_world: false };
    /// Runs code or otherwise has effects that cannot be foreseen.
    pub const DESTRUCTIVE: Hints = Hints { read_only: false, destructive: true, open_world: true };
    /// Loads URLs.
    pub const OPEN: Hints = Hints { read_only: false, destructive: false, open_world: true };
}

/// A tool as the catalog lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The exposed name, e.g. `page_click`.
    pub name: String,
    /// One line for the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// Annotations.
    pub hints: Hints,
    /// Whether its results are page or provider content: the gate fences its text
    /// and marks its structured content `untrustedData: true`.
    pub untrusted_output: bool,
}

/// An image in a tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// e.g. `image/png`.
    pub mime: String,
    /// Base64 data.
    pub data: String,
}

/// What a tool returns on success.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// lumo's own words: what happened (trusted).
    pub text: String,
    /// Content that came from the page or a provider (fenced as untrusted by the gate).
    pub page_text: Option<String>,
    /// Machine-readable result.
    pub structured: Option<Value>,
    /// Images.
    pub images: Vec<Image>,
    /// The caller asked to see credentials (`show_secrets`): the gate then hides only
    /// the secrets the user listed, not every credential-shaped value.
    pub secrets_shown: bool,
}

impl ToolOutput {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
    /// Adds page content.
    pub fn with_page_text(mut self, text: impl Into<String>) -> Self {
        self.page_text = Some(text.into());
        self
    }
    /// Marks the answer as showing credentials on the caller's request.
    pub fn showing_secrets(mut self, shown: bool) -> Self {
        self.secrets_shown = shown;
        self
    }
    /// Adds structured data.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }
}

impl From<String> for ToolOutput {
    /// An action's sentence: the answer lumo builds around it.
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

/// Why a tool failed, as the agent reads it: the failure (code and lumo's
/// message) and, when the page explained it, the page's words (fenced as
/// untrusted by the gate) and what it answered. Every failure of a tool is an
/// `Err` of this type: no answer carries a failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// The error code.
    pub code: ErrorCode,
    /// lumo's own words: what was wrong and what to do.
    pub message: String,
    /// The page's words about it, if it gave any.
    pub page_text: Option<String>,
    /// Machine-readable details from the page, kept next to the error envelope.
    pub details: Option<Value>,
}

impl ToolError {
    /// The protocol's failure: code and message.
    pub fn failure(&self) -> ToolFailure {
        ToolFailure::new(self.code, self.message.clone())
    }
}

impl From<ToolFailure> for ToolError {
    fn from(failure: ToolFailure) -> Self {
        Self { code: failure.code, message: failure.message, page_text: None, details: None }
    }
}

impl From<BrowserError> for ToolError {
    /// The tool boundary: the one place a typed browser error becomes what the agent reads.
    fn from(error: BrowserError) -> Self {
        let (failure, page_text, details) = error.into_parts();
        Self { page_text, details, ..Self::from(failure) }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// A tool's result at the boundary.
pub type ToolResult = Result<ToolOutput, ToolError>;
/// A step's result inside the crate: failures stay typed until the boundary.
pub(crate) type Outcome = Result<ToolOutput, BrowserError>;
type BoxFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;
type Handler<C> = Arc<dyn Fn(C, Value) -> BoxFuture + Send + Sync>;

/// A tool with its handler, generic over the context it runs in.
pub struct Tool<C> {
    /// The spec.
    pub spec: ToolSpec,
    handler: Handler<C>,
}

impl<C> Clone for Tool<C> {
    fn clone(&self) -> Self {
        Self { spec: self.spec.clone(), handler: self.handler.clone() }
    }
}

impl<C: Send + 'static> Tool<C> {
    /// Makes a tool from a handler taking typed arguments `A`; the schema comes from `A`.
    pub fn new<A, F, Fut, E>(name: &str, description: &str, hints: Hints, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(C, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, E>> + Send + 'static,
        E: Into<ToolError>,
    {
        let handler = Arc::new(handler);
        Self {
            spec: ToolSpec {
                name: name.to_string(),
                description: description.to_string(),
                input_schema: schema_of::<A>(),
                hints,
                untrusted_output: false,
            },
            handler: Arc::new(move |ctx, args| {
                let handler = handler.clone();
                Box::pin(async move {
                    let args: A = parse_args(args)?;
                    handler(ctx, args).await.map_err(Into::into)
                })
            }),
        }
    }

    /// Marks the tool's output as page content.
    pub fn untrusted(mut self) -> Self {
        self.spec.untrusted_output = true;
        self
    }

    /// Runs the tool.
    pub fn call(&self, ctx: C, args: Value) -> impl Future<Output = ToolResult> + Send + 'static {
        (self.handler)(ctx, args)
    }
}

/// Deserializes arguments, naming the field that is wrong.
pub fn parse_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolFailure> {
    let args = if args.is_null() { Value::Object(Default::default()) } else { args };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let message = if path == "." { message } else { format!("{path}: {message}") };
        ToolFailure::new(ErrorCode::InvalidArguments, message)
    })
}

/// The JSON Schema of `A`, inlined and without the noise the model does not need.
pub fn schema_of<A: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut schema = settings.into_generator().into_root_schema_for::<A>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    // Strict validators (Ajv strict, the Inspector's --strict) must accept every schema lumo shows.
    crate::schema::strict_own(&mut schema);
    schema
}

/// Shorthand for a failure.
pub fn fail(code: ErrorCode, message: impl Into<String>) -> ToolFailure {
    ToolFailure::new(code, message)
}

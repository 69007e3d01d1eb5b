//! The gate: the one dispatch point every tool call passes through.
//!
//! Order: find the tool → validate the arguments against its JSON Schema
//! (naming the field) → run it under a timeout and the client's cancellation
//! → shape the answer (untrusted fence and `untrustedData` mark, credential
//! redaction, byte budget: [`Gate::shape`]). Policy, confirmation of
//! consequential actions, rate limits and audit attach here, keyed on what a
//! tool declares, never inside tools.
//!
//! Every call, refused or run, ends in one audit record ([`Gate::call_as`]);
//! writes (tools not marked read-only) pass the caller's rate window just
//! before they run.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lumo_browser::{Image, PageBindings, Session, ToolSpec};
use lumo_protocol::redact::Redactor;
use lumo_protocol::{ErrorCode, RateLimiter, ToolFailure};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::{Audit, Entry};
use crate::caller::{CallContext, origin, tool_label};
use crate::catalog::Catalog;
use crate::fence::fence;
use crate::policy::ToolGroup;

/// Longest a single call may run.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Hard cap on an answer's text, whatever the tool did.
const MAX_ANSWER_BYTES: usize = 2_500_000;
/// The key that marks structured content holding page or provider data.
pub const UNTRUSTED_KEY: &str = "untrustedData";

/// A call that cannot be routed at all (a protocol error, not a tool failure).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name.
    #[error("unknown tool {0:?}; list the tools with tools/list")]
    UnknownTool(String),
}

/// A shaped answer, ready for any front (MCP, CLI).
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutput {
    /// The text the model reads (page content fenced).
    pub text: String,
    /// Images.
    pub images: Vec<Image>,
    /// Machine-readable result (`{ok:false, error}` for failures).
    pub structured: Option<Value>,
    /// A business failure: the call worked, the action did not.
    pub is_error: bool,
}

/// What the user answered when asked to confirm a consequential page tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Confirmation {
    /// Run it.
    Accepted,
    /// Do not run it.
    Declined,
    /// The user dismissed the question.
    Cancelled,
    /// The client cannot ask the user (no elicitation).
    Unsupported,
}

/// How the gate treats consequential page tools (policy `confirm`, `--confirm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConfirmMode {
    /// Ask the user through MCP elicitation before each one runs (the default).
    #[default]
    Ask,
    /// Run them without asking (the call is still audited).
    Allow,
    /// Never run them.
    Deny,
}

impl ConfirmMode {
    /// `ask`, `allow` or `deny`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "ask" => Ok(Self::Ask),
            "allow" => Ok(Self::Allow),
            "deny" => Ok(Self::Deny),
            other => Err(format!("{other:?} is not a confirmation mode: write ask, allow or deny")),
        }
    }
}

/// What a confirmation question shows the user.
#[derive(Debug, Clone)]
pub struct ConfirmRequest {
    /// The exposed tool name.
    pub tool: String,
    /// The name the page registered.
    pub page_tool: String,
    /// The origin of the frame that registered it.
    pub origin: String,
    /// For a provider tool: the extension offering it, by the name it gave and its ID.
    pub extension: Option<String>,
    /// The arguments it would run with.
    pub arguments: Value,
}

/// Asks the user (e.g. through MCP elicitation).
pub type Confirmer = Arc<dyn Fn(ConfirmRequest) -> Pin<Box<dyn Future<Output = Confirmation> + Send>> + Send + Sync>;

/// The gate.
pub struct Gate {
    catalog: Catalog,
    validators: Mutex<HashMap<String, std::sync::Arc<jsonschema::Validator>>>,
    allow_consequential: bool,
    /// Ask, allow or deny consequential page tools; the policy file may change it.
    confirm_mode: std::sync::RwLock<ConfirmMode>,
    /// Page tool bindings of callers without an MCP session of their own (the
    /// CLI, stateless Streamable HTTP requests); every session has its own.
    bindings: Arc<PageBindings>,
    // Audit and rate window (issue 10).
    audit: Option<Audit>,
    rate: Mutex<RateWindow>,
    disabled: std::sync::RwLock<Vec<ToolGroup>>,
    epoch: Instant,
    /// Result shaping: hides credentials and the user's listed secrets in every answer;
    /// the policy file may change the list.
    redactor: std::sync::RwLock<Arc<Redactor>>,
}

/// The write rate window and the setting it was made from.
#[derive(Default)]
struct RateWindow {
    spec: Option<(usize, Duration)>,
    limiter: Option<RateLimiter<String>>,
}

/// One call as the gate runs it: who asks, in which MCP session and browser,
/// which tool with what, and how the call may be ended or confirmed.
pub struct Call<'a> {
    /// The browser handle the tools act in: the shared one, or an isolated MCP
    /// session's own browser context.
    pub browser: &'a Arc<lumo_browser::Session>,
    /// Who asks: its rate window and its audit records.
    pub caller: &'a CallContext,
    /// The page tools the caller's MCP session was shown (a page tool runs only
    /// if that session listed it, and it is still that registration).
    pub bindings: &'a Arc<PageBindings>,
    /// The tool named.
    pub name: &'a str,
    /// Its arguments (null is no arguments).
    pub args: Value,
    /// Ends the call when the client cancels it.
    pub cancel: CancellationToken,
    /// Asks the user before a consequential tool runs; `None`: the client cannot ask.
    pub confirm: Option<Confirmer>,
}

impl Gate {
    /// A gate over `catalog`.
    pub fn new(catalog: Catalog) -> Self {
        Self {
            catalog,
            validators: Mutex::default(),
            allow_consequential: false,
            confirm_mode: Default::default(),
            bindings: Arc::default(),
            audit: None,
            rate: Mutex::default(),
            disabled: Default::default(),
            epoch: Instant::now(),
            redactor: Default::default(),
        }
    }

    /// Hides these secrets (`--redact`) in every answer, on top of credential-shaped text.
    pub fn redact(self, redactor: Arc<Redactor>) -> Self {
        self.set_redactor(redactor);
        self
    }

    /// Hides these secrets from the next answer on (policy re-read).
    pub fn set_redactor(&self, redactor: Arc<Redactor>) {
        *self.redactor.write().unwrap_or_else(|e| e.into_inner()) = redactor;
    }

    /// Result shaping, the last step every answer takes: structured content
    /// from page or provider data is marked `untrustedData: true` (its text is
    /// fenced already), and credentials and listed secrets are redacted from
    /// the text and from every structured string.
    fn shape(&self, mut output: GateOutput, shaping: Shaping) -> GateOutput {
        if shaping.untrusted
            && let Some(Value::Object(map)) = output.structured.as_mut()
        {
            map.insert(UNTRUSTED_KEY.to_string(), Value::Bool(true));
        }
        let only_extra = shaping.secrets_shown;
        let redactor = self.redactor.read().unwrap_or_else(|e| e.into_inner()).clone();
        let text = if only_extra { redactor.extra_only(&output.text) } else { redactor.answer(&output.text) };
        if let std::borrow::Cow::Owned(text) = text {
            output.text = text;
        }
        if let Some(structured) = output.structured.as_mut() {
            redactor.value(structured, only_extra);
        }
        output
    }

    /// Records every call in `audit`.
    pub fn with_audit(mut self, audit: Audit) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Lets each caller run at most `limit` writes (tools not marked read-only) per
    /// sliding `window`; `None` or a limit of 0 turns the window off.
    pub fn with_rate_limit(self, limit: Option<(usize, Duration)>) -> Self {
        self.set_rate_limit(limit);
        self
    }

    /// Changes the write rate window from the next call on (policy re-read); the same
    /// setting keeps the window's history.
    pub fn set_rate_limit(&self, limit: Option<(usize, Duration)>) {
        let limit = limit.filter(|(n, _)| *n > 0);
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        if rate.spec != limit {
            *rate = RateWindow { spec: limit, limiter: limit.map(|(n, window)| RateLimiter::new(n, window)) };
        }
    }

    /// Turns these tool groups off (and every other on) from the next call on: their tools
    /// leave the list and calls to them are refused (`forbidden`, audited).
    pub fn set_disabled_groups(&self, groups: &[ToolGroup]) {
        let changed = {
            let mut disabled = self.disabled.write().unwrap_or_else(|e| e.into_inner());
            let changed = disabled.as_slice() != groups;
            *disabled = groups.to_vec();
            changed
        };
        if changed {
            self.catalog.announce_change();
        }
    }

    /// A provider extension as the user knows it: the name it gave (quoted, it is
    /// the provider's text) with its ID, or the ID alone before it said a name.
    fn extension_label(&self, id: &str) -> String {
        match self.catalog.providers().and_then(|p| p.name_of(id)) {
            Some(name) => format!("{:?} ({id})", lumo_protocol::text::clip_marked(&name, 100)),
            None => id.to_string(),
        }
    }

    fn disabled_group(&self, tool: &str) -> Option<ToolGroup> {
        self.disabled.read().unwrap_or_else(|e| e.into_inner()).iter().copied().find(|g| g.contains(tool))
    }

    /// The audit log calls are recorded in, if any.
    pub fn audit(&self) -> Option<&Audit> {
        self.audit.as_ref()
    }

    /// Asks, allows or denies consequential page tools from the next call on.
    pub fn set_confirm_mode(&self, mode: ConfirmMode) {
        *self.confirm_mode.write().unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// Lets consequential page tools run without asking when the client cannot ask the user
    /// (`--allow-consequential`).
    pub fn allow_consequential(mut self, allow: bool) -> Self {
        self.allow_consequential = allow;
        self
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Every tool, in listing order; binds nothing.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.catalog.specs();
        specs.retain(|s| self.disabled_group(&s.name).is_none());
        specs
    }

    /// Lists the tools for the callers without a session (see [`Gate::shared_bindings`]),
    /// binding the page tools listed.
    pub fn list(&self) -> Vec<ToolSpec> {
        self.list_for(&self.bindings)
    }

    /// Lists the tools for the session that holds `bindings`, binding the page tools
    /// listed; tools of groups the policy turned off are left out.
    pub fn list_for(&self, bindings: &Arc<PageBindings>) -> Vec<ToolSpec> {
        self.list_in(self.catalog.session(), bindings)
    }

    /// Lists the tools for the session that holds `bindings` and works in `browser`
    /// (its own browser context), binding the page tools listed; tools of groups the
    /// policy turned off are left out.
    pub fn list_in(&self, browser: &Session, bindings: &PageBindings) -> Vec<ToolSpec> {
        let mut specs = self.catalog.list_in(browser, bindings);
        specs.retain(|s| self.disabled_group(&s.name).is_none());
        specs
    }

    /// The page tool bindings of callers without an MCP session of their own.
    pub fn shared_bindings(&self) -> &Arc<PageBindings> {
        &self.bindings
    }

    /// Runs one call through the gate.
    pub async fn call(&self, name: &str, args: Value, cancel: CancellationToken) -> Result<GateOutput, CallError> {
        self.call_confirmed(name, args, cancel, None).await
    }

    /// Runs one call, asking `confirm` before a consequential page tool runs.
    pub async fn call_confirmed(
        &self,
        name: &str,
        args: Value,
        cancel: CancellationToken,
        confirm: Option<Confirmer>,
    ) -> Result<GateOutput, CallError> {
        self.call_as(&CallContext::cli(), &self.bindings.clone(), name, args, cancel, confirm).await
    }

    /// Runs one call for `caller` (its rate window, its audit records), in the MCP
    /// session that was shown `bindings` (a page tool runs only if that session
    /// listed it, and it is still that registration), asking `confirm` before a
    /// consequential page tool runs. The call is audited however it ends.
    pub async fn call_as(
        &self,
        caller: &CallContext,
        bindings: &Arc<PageBindings>,
        name: &str,
        args: Value,
        cancel: CancellationToken,
        confirm: Option<Confirmer>,
    ) -> Result<GateOutput, CallError> {
        let browser = self.catalog.session().clone();
        self.call_in(Call { browser: &browser, caller, bindings, name, args, cancel, confirm }).await
    }

    /// Runs `call` (on its browser handle: an isolated MCP session's own
    /// browser context, [`lumo_browser::Session::isolated`], sees and acts on
    /// that handle's tabs only). The call is audited however it ends.
    pub async fn call_in(&self, call: Call<'_>) -> Result<GateOutput, CallError> {
        let (started, at_ms) = (Instant::now(), crate::audit::now_ms());
        let args = if call.args.is_null() { Value::Object(Default::default()) } else { call.args };
        let params_hash = lumo_protocol::params_hash(&args).map(|h| h.to_string()).unwrap_or_default();
        let (browser, caller, name) = (call.browser, call.caller, call.name);
        let mut trail = Trail::default();
        let result = self.run(Call { args, ..call }, &mut trail).await;
        let result = result.map(|out| self.shape(out, trail.shaping));
        if let Some(audit) = &self.audit {
            let target = match trail.target.take() {
                Some(origin) => origin,
                None => browser.selected_url().await.map(|u| origin(&u)).unwrap_or_default(),
            };
            audit.record(Entry {
                at_ms,
                client: caller.client.clone(),
                session: caller.session.clone(),
                source: if trail.source.is_empty() { source_of(name) } else { trail.source }.to_string(),
                tool: tool_label(trail.tool.as_deref().unwrap_or(name)),
                target,
                params_hash,
                outcome: outcome_of(&result),
                duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
            });
        }
        result
    }

    /// Admits a write by `caller`, or says when to come back.
    fn rate_check(&self, caller: &CallContext) -> Result<(), GateOutput> {
        let mut rate = self.rate.lock().unwrap_or_else(|e| e.into_inner());
        let Some(limiter) = rate.limiter.as_mut() else { return Ok(()) };
        let checked = limiter.check(&caller.rate_key(), self.epoch.elapsed());
        drop(rate);
        checked.map_err(|refused| {
            let retry_ms = u64::try_from(refused.retry_after.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut out = failed(ToolFailure::new(
                ErrorCode::RateLimited,
                format!(
                    "rate limit reached: at most {} writes per {} s for this client; retry in {:.1} s",
                    refused.limit,
                    refused.window.as_secs(),
                    retry_ms as f64 / 1000.0
                ),
            ));
            if let Some(error) = out.structured.as_mut().and_then(|s| s.get_mut("error")) {
                error["retryAfterMs"] = Value::from(retry_ms);
            }
            out
        })
    }

    async fn run(&self, call: Call<'_>, trail: &mut Trail) -> Result<GateOutput, CallError> {
        let Call { browser, caller, bindings, name, args, cancel, confirm } = call;
        let resolved = self
            .catalog
            .resolve(browser, name, args, bindings)
            .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
        // A call routed elsewhere (to a page tool) is checked against the tool it named first.
        if let Some((spec, args)) = &resolved.addressed
            && let Err(failure) = self.validate(spec, args)
        {
            return Ok(failed(failure));
        }
        let (tool, args) = (resolved.tool, resolved.args);
        trail.resolved(&tool.spec, resolved.page.as_ref(), name);
        if let Some(extension) = &resolved.provider {
            trail.source = "provider";
            trail.target = Some(crate::providers::audit_target(extension, &args));
        }
        if let Some(group) = self.disabled_group(&tool.spec.name).or_else(|| self.disabled_group(name)) {
            return Ok(failed(ToolFailure::new(
                ErrorCode::Forbidden,
                format!("{} is turned off by policy (tool group {group}, in lumo.toml or --disable)", tool.spec.name),
            )));
        }
        if let Err(failure) = self.validate(&tool.spec, &args) {
            return Ok(failed(failure));
        }
        // Consequential: a page tool marked so, or a provider tool marked destructive.
        let consequential = match (&resolved.page, &resolved.provider) {
            (Some(page), _) if page.consequential => Some((page.name.clone(), page.origin.clone(), "page tool")),
            (None, Some(extension)) if tool.spec.hints.destructive => {
                Some((tool.spec.name.clone(), format!("provider extension {extension}"), "provider tool"))
            }
            _ => None,
        };
        if let Some((page_name, page_origin, kind)) = consequential {
            let page = Named { name: page_name, origin: page_origin };
            let question = ConfirmRequest {
                tool: tool.spec.name.clone(),
                page_tool: page.name.clone(),
                origin: page.origin.clone(),
                extension: resolved.provider.as_deref().map(|id| self.extension_label(id)),
                arguments: args.clone(),
            };
            let mode = *self.confirm_mode.read().unwrap_or_else(|e| e.into_inner());
            let answer = match (mode, &confirm) {
                (ConfirmMode::Allow, _) => Confirmation::Accepted,
                (ConfirmMode::Deny, _) => {
                    return Ok(failed(ToolFailure::new(
                        ErrorCode::Forbidden,
                        format!(
                            "{} is a consequential {kind} (from {}) and lumo's policy denies them (confirm = deny; change it with --confirm or in lumo.toml)",
                            page.name, page.origin
                        ),
                    )));
                }
                (_, Some(ask)) => ask(question).await,
                (_, None) => Confirmation::Unsupported,
            };
            let refusal = match answer {
                Confirmation::Accepted => None,
                Confirmation::Unsupported if self.allow_consequential => None,
                Confirmation::Declined => Some(ToolFailure::new(
                    ErrorCode::Forbidden,
                    format!("the user declined to run {} (consequential {kind} from {})", page.name, page.origin),
                )),
                Confirmation::Cancelled => Some(ToolFailure::new(
                    ErrorCode::Cancelled,
                    format!("the user dismissed the confirmation for {}", page.name),
                )),
                Confirmation::Unsupported => Some(ToolFailure::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{} is a consequential {kind} (from {}) and this client cannot ask the user to confirm it (no MCP elicitation). Start lumo with --allow-consequential (or --confirm allow) to let such tools run.",
                        page.name, page.origin
                    ),
                )),
            };
            if let Some(refusal) = refusal {
                return Ok(failed(refusal));
            }
        }
        if !tool.spec.hints.read_only
            && let Err(refused) = self.rate_check(caller)
        {
            return Ok(refused);
        }
        // A recording running on this handle captions its frames with the call.
        browser.note_call(&tool.spec.name, &args).await;
        let run = tool.call(browser.clone(), args);
        let result = tokio::select! {
            result = tokio::time::timeout(CALL_TIMEOUT, run) => result.unwrap_or_else(|_| {
                Err(ToolFailure::new(ErrorCode::Timeout, format!("{name} did not finish within {}s", CALL_TIMEOUT.as_secs())).into())
            }),
            () = cancel.cancelled() => Err(ToolFailure::new(ErrorCode::Cancelled, "cancelled by the client").into()),
        };
        // Page tools' answers are the page's; a built-in tool declares whether its are.
        let untrusted = tool.spec.untrusted_output || resolved.page.is_some();
        let (mut text, images, structured, is_error) = match result {
            Ok(output) => {
                trail.shaping =
                    Shaping { untrusted: untrusted || output.page_text.is_some(), secrets_shown: output.secrets_shown };
                let mut text = output.text;
                if let Some(page) = output.page_text {
                    text.push('\n');
                    text.push_str(&fence(&page));
                }
                (text, output.images, output.structured, false)
            }
            Err(error) => {
                let failure = error.failure();
                let Some(page) = error.page_text else { return Ok(failed(failure)) };
                // A failure whose details are the page's words: an error, with those words fenced.
                trail.shaping = Shaping { untrusted: true, secrets_shown: false };
                // Keep the tool's details next to the envelope (e.g. what the page reported).
                let mut envelope = failure.to_json();
                if let (Some(env), Some(Value::Object(details))) = (envelope.as_object_mut(), error.details) {
                    details.into_iter().filter(|(k, _)| k != "ok" && k != "error").for_each(|(k, v)| {
                        env.insert(k, v);
                    });
                }
                let text = format!("Error [{}]: {}\n{}", failure.code, failure.message, fence(&page));
                (text, Vec::new(), Some(envelope), true)
            }
        };
        if lumo_protocol::text::truncate(&mut text, MAX_ANSWER_BYTES) {
            text.push_str("\n[answer cut at the size limit]");
        }
        Ok(GateOutput { text, images, structured, is_error })
    }

    fn validate(&self, spec: &ToolSpec, args: &Value) -> Result<(), ToolFailure> {
        let validator = {
            let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
            // Page tools change their schema under the same name: key on both.
            let key = format!("{}\u{0}{}", spec.name, spec.input_schema);
            if cache.len() > 512 {
                cache.clear();
            }
            match cache.get(&key) {
                Some(v) => v.clone(),
                None => {
                    let v = jsonschema::validator_for(&spec.input_schema).map_err(|e| {
                        ToolFailure::new(ErrorCode::OperationFailed, format!("{} has a broken schema: {e}", spec.name))
                    })?;
                    let v = std::sync::Arc::new(v);
                    cache.insert(key, v.clone());
                    v
                }
            }
        };
        let problems: Vec<String> = validator
            .iter_errors(args)
            .take(5)
            .map(|e| {
                let path = field_path(e.instance_path().as_str());
                if path.is_empty() { e.to_string() } else { format!("{path}: {e}") }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolFailure::new(
                ErrorCode::InvalidArguments,
                format!("{}. See the tool's inputSchema.", problems.join("; ")),
            ))
        }
    }
}

/// The tool a confirmation is about: its own name and where it comes from.
struct Named {
    name: String,
    origin: String,
}

/// What the audit record needs to know from inside a call.
#[derive(Default)]
struct Trail {
    source: &'static str,
    tool: Option<String>,
    target: Option<String>,
    /// How [`Gate::shape`] treats the answer.
    shaping: Shaping,
}

/// How the gate shapes one answer.
#[derive(Debug, Clone, Copy, Default)]
struct Shaping {
    /// Structured content holds page or provider data.
    untrusted: bool,
    /// The caller asked to see credentials (`show_secrets`): only listed secrets are hidden.
    secrets_shown: bool,
}

impl Trail {
    fn resolved(&mut self, spec: &ToolSpec, page: Option<&lumo_browser::PageTool>, name: &str) {
        self.tool = Some(spec.name.clone());
        self.source = if page.is_some() { "page" } else { source_of(name) };
        self.target = page.map(|p| origin(&p.origin));
    }
}

/// The source a call belongs to by its name alone (the browser knows its page tools).
fn source_of(name: &str) -> &'static str {
    if lumo_browser::is_page_tool_call(name) { "page" } else { "builtin" }
}

/// `ok`, or the error code a call ended with.
fn outcome_of(result: &Result<GateOutput, CallError>) -> String {
    match result {
        Ok(out) if !out.is_error => "ok".to_string(),
        Ok(out) => out
            .structured
            .as_ref()
            .and_then(|s| s["error"]["code"].as_str())
            .map_or_else(|| ErrorCode::OperationFailed.as_str().to_string(), str::to_string),
        Err(CallError::UnknownTool(_)) => ErrorCode::NotFound.as_str().to_string(),
    }
}

/// `/fields/0/ref` → `fields[0].ref`.
fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    out
}

fn failed(failure: ToolFailure) -> GateOutput {
    GateOutput {
        text: format!("Error [{}]: {}", failure.code, failure.message),
        images: Vec::new(),
        structured: Some(failure.to_json()),
        is_error: true,
    }
}

#[cfg(test)]
mod tests {
    use super::field_path;

    #[test]
    fn json_pointers_become_field_names() {
        assert_eq!(field_path("/fields/0/ref"), "fields[0].ref");
        assert_eq!(field_path(""), "");
        assert_eq!(field_path("/a~1b"), "a/b");
    }
}

//! Listing page tools: the registrations of one tab as [`PageTool`]s, mapped
//! to exposed names in registration order and bounded (what a page can put in
//! front of the model): descriptions cut at [`MAX_DESCRIPTION_CHARS`],
//! schemas up to [`MAX_SCHEMA_BYTES`], at most [`MAX_TOOLS_PER_TAB`] exposed
//! per tab; a name that is too long, malformed, reserved or that collides
//! after mapping is refused visibly (first come first served across frames).

use std::collections::HashMap;

use lumo_protocol::text::clip_marked;
use serde_json::{Value, json};

use super::registry::{binding, exposed_name};
use crate::tab::Tab;
use crate::tool::Hints;

/// Longest page tool description exposed, in characters; the rest is cut visibly.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Largest page tool input schema exposed, serialized; a bigger tool is refused.
pub(crate) const MAX_SCHEMA_BYTES: usize = 8192;
/// Most page tools exposed per tab (seed 000 allows a provider 64); the rest are refused.
pub(crate) const MAX_TOOLS_PER_TAB: usize = 64;

/// A page tool of the selected tab, as lumo lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    /// The name the page registered.
    pub name: String,
    /// `webmcp_<mapped name>`, or why the tool is not exposed.
    pub exposed: Result<String, String>,
    /// The page's description.
    pub description: String,
    /// The page's input schema (an object schema; `{type: object}` when the page gave none).
    pub input_schema: Value,
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `consequentialHint`: running it has effects the user should confirm.
    pub consequential: bool,
    /// `untrustedContentHint`.
    pub untrusted_content: bool,
    /// Declared with `<form toolname>` rather than registered from script.
    pub declarative: bool,
    /// The frame that registered it.
    pub frame_id: String,
    /// That frame's URL.
    pub frame_url: String,
    /// That frame's origin (`scheme://host:port`).
    pub origin: String,
    /// Whether the frame is the tab's main frame.
    pub main_frame: bool,
    /// Binds the exposed name to this registration (tab, frame, document, name, definition).
    pub generation: u64,
    /// The tab it lives in.
    pub target_id: String,
}

impl PageTool {
    /// The MCP hints: read-only, consequential → destructive, open world (the page's server).
    pub fn hints(&self) -> Hints {
        Hints { read_only: self.read_only, destructive: self.consequential, open_world: true }
    }

    /// Its annotations as short words: read-only, consequential, untrusted-content, form.
    pub fn hint_words(&self) -> Vec<&'static str> {
        [
            (self.read_only, "read-only"),
            (self.consequential, "consequential"),
            (self.untrusted_content, "untrusted-content"),
            (self.declarative, "form"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect()
    }

    /// A short summary of the input schema: `a: string*, b: number` (`*` = required).
    pub fn schema_summary(&self) -> String {
        schema_summary(&self.input_schema)
    }
}

/// `{properties:{a:{type:string}}, required:[a]}` → `a: string*`.
pub fn schema_summary(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema["properties"].as_object() else { return "(no arguments)".into() };
    if properties.is_empty() {
        return "(no arguments)".into();
    }
    properties
        .iter()
        .map(|(name, p)| {
            let kind = match &p["type"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ if p.get("enum").is_some() => "enum".into(),
                _ => "any".into(),
            };
            let star = if required.contains(&name.as_str()) { "*" } else { "" };
            format!("{name}: {kind}{star}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn origin_of(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{host}")
}

fn flag(annotations: &Value, key: &str) -> bool {
    annotations[key].as_bool().unwrap_or(false)
}

/// A page's description, cut to [`MAX_DESCRIPTION_CHARS`] with a visible marker.
fn bounded_description(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_DESCRIPTION_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
    format!(
        "{kept} [… cut by lumo: the page's description has {count} characters; the first {MAX_DESCRIPTION_CHARS} are shown]"
    )
}

/// The page tools of one tab, mapped to exposed names in registration order.
///
/// Bounded (issue 8 item 3): descriptions are cut at [`MAX_DESCRIPTION_CHARS`],
/// a tool whose schema is over [`MAX_SCHEMA_BYTES`] is refused, and at most
/// [`MAX_TOOLS_PER_TAB`] are exposed; every refusal says why.
pub(crate) fn tab_tools(tab: &Tab) -> Vec<PageTool> {
    let s = tab.state();
    let mut taken: HashMap<String, (String, String)> = HashMap::new();
    let mut out = Vec::with_capacity(s.webmcp.tools.len());
    for t in &s.webmcp.tools {
        let frame_url = s.webmcp.frames.get(&t.frame_id).cloned().unwrap_or_default();
        let origin = origin_of(&frame_url);
        let mut input_schema = match &t.input_schema {
            Value::Object(_) => t.input_schema.clone(),
            _ => json!({"type": "object", "properties": {}}),
        };
        if input_schema.get("type").is_none()
            && let Some(map) = input_schema.as_object_mut()
        {
            map.insert("type".into(), json!("object"));
        }
        // The exposed schema is sanitized where lumo lists it (`sanitize_page_schema` in the MCP
        // front); arguments are validated against the page's own schema.
        let schema_bytes = input_schema.to_string().len();
        let exposed = exposed_name(&t.name)
            .and_then(|exposed| match taken.get(&exposed) {
                Some((first, first_origin)) => Err(format!(
                    "{exposed} is already taken by {:?} from {first_origin} (first come first served)",
                    clip_marked(first, 80)
                )),
                None => Ok(exposed),
            })
            .and_then(|exposed| {
                if schema_bytes > MAX_SCHEMA_BYTES {
                    Err(format!(
                        "its inputSchema is {schema_bytes} bytes serialized; lumo exposes page tools with schemas up to {MAX_SCHEMA_BYTES} bytes"
                    ))
                } else if taken.len() >= MAX_TOOLS_PER_TAB {
                    Err(format!(
                        "the tab already exposes {MAX_TOOLS_PER_TAB} page tools, lumo's limit per tab (first come first served)"
                    ))
                } else {
                    taken.insert(exposed.clone(), (t.name.clone(), origin.clone()));
                    Ok(exposed)
                }
            });
        if schema_bytes > MAX_SCHEMA_BYTES {
            // Not exposed: keep the oversized schema out of every listing.
            input_schema = json!({"type": "object", "properties": {}});
        }
        out.push(PageTool {
            name: t.name.clone(),
            exposed,
            description: bounded_description(&t.description),
            input_schema,
            read_only: flag(&t.annotations, "readOnly"),
            consequential: flag(&t.annotations, "consequential"),
            untrusted_content: flag(&t.annotations, "untrustedContent"),
            declarative: t.backend_node_id.is_some(),
            frame_id: t.frame_id.clone(),
            main_frame: t.frame_id == s.main_frame,
            frame_url,
            origin,
            generation: binding(&tab.target_id, t, t.epoch),
            target_id: tab.target_id.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_visibly() {
        assert_eq!(bounded_description("short"), "short");
        let cut = bounded_description(&"é".repeat(5000));
        assert!(cut.starts_with(&"é".repeat(MAX_DESCRIPTION_CHARS)));
        assert!(cut.contains("cut by lumo") && cut.contains("5000"), "{cut}");
    }

    #[test]
    fn schema_summaries_are_short() {
        let s = json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "number"}}, "required": ["q"]});
        assert_eq!(schema_summary(&s), "n: number, q: string*");
        assert_eq!(schema_summary(&json!({})), "(no arguments)");
    }
}

//! JSON Schemas that strict validators accept.
//!
//! Clients check tool schemas with strict validators (Ajv's strict mode in
//! TypeScript tooling, the MCP Inspector's `--strict`, fuzzers' spec guards).
//! Those reject `type` arrays (unions), unknown `format`s, unknown keywords,
//! type-specific keywords without their `type`, and `required` names that no
//! property defines. This module rewrites a schema into the common subset of
//! JSON Schema draft-07 and 2020-12 that Ajv accepts in strict mode (without
//! `allowUnionTypes`), keeping its meaning wherever the subset can say it:
//! unions become `anyOf`, unknown formats and keywords are dropped.
//!
//! - [`strict_own`] is for lumo's own generated schemas: an optional field is
//!   simply not required, never nullable (`null` is removed from unions).
//! - [`sanitize_page_schema`] is for schemas a web page supplies (WebMCP): it
//!   keeps `null` as a type (the page may want it) and drops `$schema`/`$id`.
//!   Validate arguments against the page's original schema; expose this one.

use serde_json::{Map, Value};

/// `format` values every strict validator with the standard formats knows.
const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords kept in page schemas: those draft-07 and 2020-12 share (Ajv knows them in both).
const KNOWN_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "items",
    "contains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "anyOf",
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "$ref",
    "$defs",
    "definitions",
    "$comment",
    "contentMediaType",
    "contentEncoding",
];

const TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array", "null"];

/// Keywords that only apply to values of one kind, by the `type` they need.
const FAMILIES: &[(&str, &[&str])] = &[
    ("string", &["minLength", "maxLength", "pattern", "format", "contentMediaType", "contentEncoding"]),
    ("number", &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
    (
        "object",
        &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
        ],
    ),
    ("array", &["items", "contains", "minItems", "maxItems", "uniqueItems"]),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Own,
    Page,
}

/// Makes one of lumo's own (generated) schemas strict-clean, in place.
pub fn strict_own(schema: &mut Value) {
    walk(schema, Mode::Own);
}

/// A page-supplied input schema rewritten so strict validators accept it.
///
/// Not an object → an empty object schema. The page's meaning is kept where the
/// common subset can express it; what cannot be (unknown keywords and formats,
/// draft-specific keywords) is dropped, never turned into something stricter.
pub fn sanitize_page_schema(schema: &Value) -> Value {
    let mut out = match schema {
        Value::Object(_) => schema.clone(),
        _ => Value::Object(Map::new()),
    };
    if let Some(map) = out.as_object_mut() {
        map.remove("$schema");
        map.remove("$id");
        map.entry("type").or_insert_with(|| Value::String("object".into()));
    }
    walk(&mut out, Mode::Page);
    out
}

fn walk(schema: &mut Value, mode: Mode) {
    let Value::Object(map) = schema else { return };
    if mode == Mode::Page {
        map.retain(|k, _| KNOWN_KEYWORDS.contains(&k.as_str()));
    }
    if map.get("format").and_then(Value::as_str).is_some_and(|f| !KNOWN_FORMATS.contains(&f))
        || map.get("format").is_some_and(|f| !f.is_string())
    {
        map.remove("format");
    }
    if mode == Mode::Own {
        drop_null(map);
    }
    // Recurse into every place a subschema can sit.
    for key in ["properties", "patternProperties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(|c| walk(c, mode));
        }
    }
    for key in ["anyOf", "allOf", "oneOf"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(|c| walk(c, mode));
        }
    }
    for key in ["additionalProperties", "propertyNames", "contains", "not", "if", "then", "else"] {
        if let Some(child) = map.get_mut(key) {
            walk(child, mode);
        }
    }
    match map.get_mut("items") {
        Some(Value::Array(_)) => {
            // A tuple (draft-07 `items: [...]`, 2020-12 `prefixItems`): no form both drafts share.
            map.remove("items");
        }
        Some(child) => walk(child, mode),
        None => {}
    }
    split_union(map);
    add_implied_type(map);
    define_required(map);
}

/// Own schemas: `null` is no allowed value of an optional field (it is simply left out).
fn drop_null(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get_mut(key) else { continue };
        branches
            .retain(|b| b.get("type").and_then(Value::as_str) != Some("null") && b.get("const") != Some(&Value::Null));
        if branches.len() == 1 {
            // One branch left: merge it into this schema (this schema's words win).
            if let Some(Value::Object(only)) = branches.pop() {
                map.remove(key);
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// `type: [a, b]` → `anyOf: [{type: a, …a's keywords}, {type: b, …}]`.
fn split_union(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else { return };
    let mut names: Vec<String> = Vec::new();
    for t in types.iter().filter_map(Value::as_str) {
        if TYPES.contains(&t) && !names.iter().any(|n| n == t) {
            names.push(t.to_string());
        }
    }
    map.remove("type");
    match names.len() {
        0 => {}
        1 => {
            map.insert("type".into(), Value::String(names.remove(0)));
        }
        _ => {
            let mut branches = Vec::new();
            for name in &names {
                let family = if name == "integer" { "number" } else { name.as_str() };
                let mut branch = Map::new();
                branch.insert("type".into(), Value::String(name.clone()));
                if let Some((_, keywords)) = FAMILIES.iter().find(|(f, _)| *f == family) {
                    for k in *keywords {
                        if let Some(v) = map.get(*k) {
                            branch.insert((*k).to_string(), v.clone());
                        }
                    }
                }
                define_required(&mut branch);
                branches.push(Value::Object(branch));
            }
            for (_, keywords) in FAMILIES {
                for k in *keywords {
                    map.remove(*k);
                }
            }
            let union = Value::Array(branches);
            match map.get_mut("anyOf") {
                // Already an anyOf here: both must hold.
                Some(existing) => {
                    let existing = existing.take();
                    map.remove("anyOf");
                    let all = map.entry("allOf").or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(all) = all {
                        all.push(serde_json::json!({"anyOf": existing}));
                        all.push(serde_json::json!({"anyOf": union}));
                    }
                }
                None => {
                    map.insert("anyOf".into(), union);
                }
            }
        }
    }
}

/// Type-specific keywords without a `type` (strict validators call them ignored): name the
/// one type they imply, when they imply exactly one.
fn add_implied_type(map: &mut Map<String, Value>) {
    if map.contains_key("type") {
        return;
    }
    let implied: Vec<&str> = FAMILIES
        .iter()
        .filter(|(_, keywords)| keywords.iter().any(|k| map.contains_key(*k)))
        .map(|(family, _)| *family)
        .collect();
    if let [one] = implied.as_slice() {
        map.insert("type".into(), Value::String((*one).to_string()));
    }
}

/// Every `required` name gets a (possibly empty) property schema.
fn define_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(required)) = map.get("required") else { return };
    let names: Vec<String> = required.iter().filter_map(Value::as_str).map(str::to_string).collect();
    if names.len() != required.len() {
        map.remove("required");
        return;
    }
    let properties = map.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        for name in names {
            properties.entry(name).or_insert_with(|| Value::Object(Map::new()));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn own_optional_fields_are_not_nullable() {
        let mut s = json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": ["integer", "null"], "minimum": 1, "maximum": 5},
            "c": {"anyOf": [{"type": "string", "enum": ["x", "y"]}, {"type": "null"}], "description": "C"},
            "d": {"type": ["string", "null"], "enum": ["p", null]},
        }});
        strict_own(&mut s);
        assert_eq!(s["properties"]["a"], json!({"type": "string"}));
        assert_eq!(s["properties"]["b"], json!({"type": "integer", "minimum": 1, "maximum": 5}));
        assert_eq!(s["properties"]["c"], json!({"type": "string", "enum": ["x", "y"], "description": "C"}));
        assert_eq!(s["properties"]["d"], json!({"type": "string", "enum": ["p"]}));
    }

    #[test]
    fn unions_become_any_of_with_their_keywords() {
        let mut s = json!({"type": ["integer", "string"], "minimum": 0, "maxLength": 3, "description": "id"});
        strict_own(&mut s);
        assert_eq!(
            s,
            json!({"description": "id", "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 3}]})
        );
    }

    #[test]
    fn page_schemas_lose_unknown_formats_and_keywords_but_keep_null() {
        let page = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "code": {"type": "string", "format": "^[A-Z]{3}$"},
                "mail": {"type": "string", "format": "email"},
                "note": {"type": ["string", "null"], "x-widget": "textarea"},
                "n": {"minimum": 1},
            },
            "required": ["code", "ghost"],
            "x-extra": true,
        });
        let s = sanitize_page_schema(&page);
        assert_eq!(s["properties"]["code"], json!({"type": "string"}));
        assert_eq!(s["properties"]["mail"]["format"], "email");
        assert_eq!(s["properties"]["note"], json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
        assert_eq!(s["properties"]["n"], json!({"type": "number", "minimum": 1}));
        assert_eq!(s["properties"]["ghost"], json!({}));
        assert!(s.get("$schema").is_none() && s.get("x-extra").is_none(), "{s}");
    }

    #[test]
    fn property_names_are_not_mistaken_for_keywords() {
        let page = json!({"type": "object", "properties": {"format": {"type": "string"}, "x-id": {"type": "integer"}}});
        let s = sanitize_page_schema(&page);
        assert_eq!(s["properties"]["format"], json!({"type": "string"}));
        assert_eq!(s["properties"]["x-id"], json!({"type": "integer"}));
    }

    #[test]
    fn anything_but_an_object_becomes_an_empty_object_schema() {
        assert_eq!(sanitize_page_schema(&json!("nope")), json!({"type": "object"}));
        assert_eq!(sanitize_page_schema(&json!(null)), json!({"type": "object"}));
    }
}

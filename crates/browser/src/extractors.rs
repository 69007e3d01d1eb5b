//! Extractors as data (issue 13 item 4): JSON definitions that say, for pages
//! whose URL matches, which elements hold which typed fields and which lists
//! of records. Built-in ones ship in `extractors/*.json`; users add their own
//! as `*.json` files in a folder (`$XDG_CONFIG_HOME/lumo/extractors`, or
//! `--extractors DIR`) without recompiling: the folders are read on every
//! call, so a new or edited file counts at once. A bad definition is refused
//! with the file and the field that is wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The built-in definitions: file name and text.
const BUILTIN: &[(&str, &str)] = &[
    ("mail-thread.json", include_str!("extractors/mail-thread.json")),
    ("chat-channel.json", include_str!("extractors/chat-channel.json")),
    ("issue.json", include_str!("extractors/issue.json")),
    ("crm-record.json", include_str!("extractors/crm-record.json")),
    ("data-table.json", include_str!("extractors/data-table.json")),
    ("search-results.json", include_str!("extractors/search-results.json")),
    ("gmail.json", include_str!("extractors/gmail.json")),
    ("slack.json", include_str!("extractors/slack.json")),
    ("jira.json", include_str!("extractors/jira.json")),
    ("salesforce.json", include_str!("extractors/salesforce.json")),
    ("servicenow.json", include_str!("extractors/servicenow.json")),
    ("hubspot.json", include_str!("extractors/hubspot.json")),
];

/// One extractor definition, as written in its file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Definition {
    /// How the agent names it: `page_extract {extractor: "<name>"}`.
    pub name: String,
    /// One line: what it reads.
    pub description: String,
    /// How far it was checked, e.g. "untested against the live site".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// URL patterns it is meant for (`*` matches any run of characters); `["*"]` for any page.
    #[serde(rename = "match")]
    pub urls: Vec<String>,
    /// A CSS selector for the part of the page to read (default: the body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// A CSS selector that must match for the extractor to apply to a page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<String>,
    /// Single values.
    #[serde(default)]
    pub fields: BTreeMap<String, Field>,
    /// Lists of records.
    #[serde(default)]
    pub records: BTreeMap<String, Records>,
}

/// Where a value is and what type it has.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// A CSS selector (within the page, or within the record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// An ARIA role (implicit roles count: `heading`, `link`, `row`…), instead of a selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// A regular expression (case-insensitive) the element's accessible name or text must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Read this attribute instead of the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attr: Option<String>,
    /// The value's type.
    #[serde(rename = "type", default)]
    pub kind: FieldType,
    /// Every match, as a list (default: the first match that has a value).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
    /// The element is a table or grid: its rows as records keyed by the column headers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub table: bool,
}

/// A value's type.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// The element's visible text (or the attribute), whitespace folded.
    #[default]
    Text,
    /// A number (digits kept, the rest dropped); null when there is none.
    Number,
    /// A date as ISO 8601 when it parses, else the text.
    Date,
    /// true unless empty, "false", "0", "no" or "off".
    Bool,
    /// `{text, url, ref}` of the element or the first link inside it.
    Link,
    /// The element's ref, for page_click and the other page tools.
    Ref,
    /// The element's content as Markdown (links with refs).
    Markdown,
}

/// A list of records: one per element `each` finds.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Records {
    /// The elements that are the records.
    pub each: Field,
    /// Each record's fields, looked up within its element.
    #[serde(default)]
    pub fields: BTreeMap<String, Field>,
    /// At most this many records (default 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// A definition with where it came from.
#[derive(Debug, Clone)]
pub struct Extractor {
    /// The definition.
    pub def: Definition,
    /// `built-in` or the file's path.
    pub source: String,
}

/// Why a definition was refused.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtractorError {
    /// The folder or file could not be read.
    #[error("extractor {file}: cannot read it: {reason}")]
    Unreadable {
        /// The file or folder.
        file: String,
        /// The system's words.
        reason: String,
    },
    /// A field is missing, unknown, of the wrong type or has a bad value.
    #[error("extractor {file}: {field}: {reason}")]
    Invalid {
        /// The file.
        file: String,
        /// The field's path in the file, e.g. `records.messages.fields.from.type`.
        field: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
}

fn invalid(file: &str, field: impl Into<String>, reason: impl Into<String>) -> ExtractorError {
    ExtractorError::Invalid { file: file.to_string(), field: field.into(), reason: reason.into() }
}

/// Parses and checks one definition; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Definition, ExtractorError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let def: Definition = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = if path == "." { "(top level)".to_string() } else { path };
        let reason =
            if inner.is_syntax() || inner.is_eof() { format!("not valid JSON: {inner}") } else { inner.to_string() };
        invalid(file, field, reason)
    })?;
    check(file, &def)?;
    Ok(def)
}

fn check(file: &str, def: &Definition) -> Result<(), ExtractorError> {
    let name_ok = !def.name.is_empty()
        && def.name.len() <= 64
        && def.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !name_ok {
        return Err(invalid(file, "name", format!("{:?}: use 1–64 lowercase letters, digits, - or _", def.name)));
    }
    if def.urls.is_empty() {
        return Err(invalid(
            file,
            "match",
            "give at least one URL pattern, e.g. [\"https://mail.example.com/*\"] or [\"*\"]",
        ));
    }
    if def.fields.is_empty() && def.records.is_empty() {
        return Err(invalid(file, "fields", "the definition reads nothing: give fields, records or both"));
    }
    for (key, field) in &def.fields {
        check_field(file, &format!("fields.{key}"), field, true)?;
    }
    for (key, records) in &def.records {
        let at = format!("records.{key}");
        check_field(file, &format!("{at}.each"), &records.each, false)?;
        if records.each.attr.is_some() || records.each.all || records.each.table || records.each.kind != FieldType::Text
        {
            return Err(invalid(
                file,
                format!("{at}.each"),
                "each finds the record elements: only selector, role and name apply here",
            ));
        }
        if records.fields.is_empty() {
            return Err(invalid(file, format!("{at}.fields"), "give the fields each record has"));
        }
        for (name, field) in &records.fields {
            check_field(file, &format!("{at}.fields.{name}"), field, true)?;
        }
        if records.limit == Some(0) {
            return Err(invalid(file, format!("{at}.limit"), "0 records would read nothing; leave it out for 500"));
        }
    }
    Ok(())
}

fn check_field(file: &str, at: &str, field: &Field, may_be_self: bool) -> Result<(), ExtractorError> {
    match (&field.selector, &field.role) {
        (Some(_), Some(_)) => return Err(invalid(file, at, "give selector or role, not both")),
        (None, None) if !may_be_self => return Err(invalid(file, at, "give a selector or a role")),
        (None, None) if field.table => {
            return Err(invalid(file, at, "a table field needs the selector or role of the table"));
        }
        _ => {}
    }
    if let Some(s) = &field.selector
        && s.trim().is_empty()
    {
        return Err(invalid(file, format!("{at}.selector"), "empty selector"));
    }
    if let Some(role) = &field.role
        && (role.is_empty() || !role.bytes().all(|b| b.is_ascii_lowercase()))
    {
        return Err(invalid(
            file,
            format!("{at}.role"),
            format!("{role:?} is not an ARIA role (e.g. heading, row, link, listitem)"),
        ));
    }
    if let Some(name) = &field.name
        && let Err(e) = regex::Regex::new(name)
    {
        let text = e.to_string();
        let what = text.lines().last().unwrap_or(&text).trim().trim_start_matches("error: ").to_string();
        return Err(invalid(file, format!("{at}.name"), format!("not a valid regular expression: {what}")));
    }
    if field.table && (field.all || field.attr.is_some()) {
        return Err(invalid(file, at, "a table field reads whole rows: all and attr do not apply"));
    }
    Ok(())
}

/// Whether `url` fits `pattern` (`*` matches any run of characters).
pub fn url_matches(pattern: &str, url: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == url;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !url.starts_with(first) || url.len() < first.len() + last.len() || !url.ends_with(last) {
        return false;
    }
    let mut rest = &url[first.len()..url.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The built-in extractors.
pub fn builtin() -> Vec<Extractor> {
    BUILTIN
        .iter()
        .filter_map(|(file, text)| {
            // Checked by a unit test; a broken built-in is left out rather than taking lumo down.
            parse(&format!("built-in {file}"), text).ok().map(|def| Extractor { def, source: "built-in".to_string() })
        })
        .collect()
}

/// The built-ins and every `*.json` definition in `dirs` (a folder that does
/// not exist is skipped). A user definition with a built-in's name replaces
/// it; two user files with one name are refused, naming both.
pub fn load(dirs: &[PathBuf]) -> Result<Vec<Extractor>, ExtractorError> {
    let mut all = builtin();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(ExtractorError::Unreadable { file: dir.display().to_string(), reason: e.to_string() });
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for path in files {
            let ext = load_file(&path)?;
            if let Some(same) = all.iter_mut().find(|e| e.def.name == ext.def.name) {
                if same.source != "built-in" {
                    return Err(invalid(
                        &ext.source,
                        "name",
                        format!(
                            "{:?} is already defined in {}; give one of them another name",
                            ext.def.name, same.source
                        ),
                    ));
                }
                *same = ext;
            } else {
                all.push(ext);
            }
        }
    }
    Ok(all)
}

fn load_file(path: &Path) -> Result<Extractor, ExtractorError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ExtractorError::Unreadable { file: file.clone(), reason: e.to_string() })?;
    let def = parse(&file, &text)?;
    Ok(Extractor { def, source: file })
}

#[cfg(test)]
mod tests {
    use super::{BUILTIN, ExtractorError, parse, url_matches};

    #[test]
    fn every_builtin_parses_and_platform_ones_say_they_are_untested() {
        for (file, text) in BUILTIN {
            let def = parse(file, text).unwrap_or_else(|e| panic!("{e}"));
            let platform =
                ["gmail", "slack", "jira", "salesforce", "servicenow", "hubspot"].contains(&def.name.as_str());
            if platform {
                assert_eq!(def.status.as_deref(), Some("untested against the live site"), "{file}");
            }
        }
    }

    #[test]
    fn bad_definitions_name_the_file_and_the_field() {
        let err = |text: &str| parse("my.json", text).expect_err("refused").to_string();
        let base = r#""name": "x", "description": "d", "match": ["*"]"#;
        assert_eq!(
            err(&format!(r#"{{{base}, "fields": {{"a": {{"selector": "h1", "type": "txt"}}}}}}"#)),
            "extractor my.json: fields.a.type: unknown variant `txt`, expected one of `text`, `number`, `date`, `bool`, `link`, `ref`, `markdown` at line 1 column 98"
        );
        assert!(
            err(&format!(r#"{{{base}, "records": {{"m": {{"each": {{}}, "fields": {{"a": {{}}}}}}}}}}"#))
                .starts_with("extractor my.json: records.m.each: give a selector or a role")
        );
        assert!(
            err(&format!(r#"{{{base}, "fields": {{"a": {{"role": "heading", "name": "(open"}}}}}}"#))
                .starts_with("extractor my.json: fields.a.name: not a valid regular expression")
        );
        assert!(
            err(r#"{"name": "Bad Name", "description": "d", "match": ["*"], "fields": {"a": {}}}"#)
                .contains(": name: ")
        );
        assert!(err(r#"{"name": "x", "match": ["*"]}"#).contains("(top level): missing field `description`"));
        assert!(
            err(&format!(r#"{{{base}, "fields": {{"a": {{"selector": "h1", "colour": 1}}}}}}"#))
                .contains("fields.a.colour")
        );
        assert!(err("{").contains("not valid JSON"));
        assert!(matches!(parse("f", "[]"), Err(ExtractorError::Invalid { .. })));
    }

    #[test]
    fn url_patterns_match_with_stars() {
        assert!(url_matches("*", "https://a.example/x"));
        assert!(url_matches("https://mail.google.com/*", "https://mail.google.com/mail/u/0/#inbox/abc"));
        assert!(!url_matches("https://mail.google.com/*", "https://mail.google.com.evil/x"));
        assert!(url_matches("https://*.slack.com/client/*", "https://acme.slack.com/client/T1/C2"));
        assert!(!url_matches("https://*.slack.com/client/*", "https://acme.slack.com/archives/C2"));
        assert!(url_matches("http://127.0.0.1:*/apps/gmail*", "http://127.0.0.1:4321/apps/gmail.html"));
    }
}

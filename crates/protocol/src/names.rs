//! Tool names: the seed's limits, the character rules, and namespace ownership.
//!
//! A provider tool is exposed as `<namespace>_<tool>`. The seed fixes the
//! budgets (namespace ≤ 16, tool ≤ 40, whole ≤ 57, ≤ 64 tools a provider,
//! reserved namespaces, first come first served, never a silent override).
//! The seed leaves the alphabet open; this module picks one so that every
//! qualified name is a valid model function name (`^[a-zA-Z0-9_-]{1,64}$`)
//! and splits back unambiguously:
//!
//! - namespace: `[a-z][a-z0-9]*` — no `_`, so the first `_` is the separator;
//! - tool: `[A-Za-z0-9][A-Za-z0-9_-]*`.
//!
//! Note that 16 + 1 + 40 = 57, so two valid parts always make a name within
//! the 57 limit; the combined check is still made, so that raising one part's
//! budget cannot silently break the whole.

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::collections::btree_map::Entry;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::id::ExtensionId;

/// At most this many tools per provider.
pub const MAX_TOOLS_PER_PROVIDER: usize = 64;
/// Longest namespace, in characters.
pub const MAX_NAMESPACE_LEN: usize = 16;
/// Longest tool name (the part after the namespace), in characters.
pub const MAX_TOOL_NAME_LEN: usize = 40;
/// Longest `<namespace>_<tool>`, in characters (below the 64 of model APIs).
pub const MAX_QUALIFIED_LEN: usize = 57;
/// Namespaces of lumo's built-in tools; providers cannot claim them.
pub const RESERVED_NAMESPACES: [&str; 7] = ["browser", "page", "file", "network", "devtools", "webmcp", "ext"];

/// Longest model function name (`^[a-zA-Z0-9_-]{1,64}$`).
const MAX_FUNCTION_NAME_LEN: usize = 64;

/// Why a name, a claim or a tool list is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The namespace is empty or too long.
    #[error("namespace must be 1 to {max} characters, got {len}")]
    NamespaceLength {
        /// Its length in characters.
        len: usize,
        /// [`MAX_NAMESPACE_LEN`].
        max: usize,
    },
    /// The namespace has a character outside `[a-z][a-z0-9]*`.
    #[error("namespace {namespace:?} must be a lowercase letter followed by lowercase letters or digits")]
    NamespaceChars {
        /// The refused namespace.
        namespace: String,
    },
    /// The namespace belongs to lumo's built-in tools.
    #[error("namespace {namespace:?} is reserved for built-in tools")]
    ReservedNamespace {
        /// The refused namespace.
        namespace: String,
    },
    /// Another provider claimed the namespace first.
    #[error("namespace {namespace:?} is already claimed by extension {owner}")]
    NamespaceTaken {
        /// The contested namespace.
        namespace: String,
        /// The extension that holds it.
        owner: ExtensionId,
    },
    /// The tool name is empty or too long.
    #[error("tool name must be 1 to {max} characters, got {len}")]
    ToolNameLength {
        /// Its length in characters.
        len: usize,
        /// [`MAX_TOOL_NAME_LEN`].
        max: usize,
    },
    /// The tool name has a character outside `[A-Za-z0-9][A-Za-z0-9_-]*`.
    #[error("tool name {name:?} must start with a letter or digit and use only letters, digits, `_` and `-`")]
    ToolNameChars {
        /// The refused tool name.
        name: String,
    },
    /// `<namespace>_<tool>` is too long.
    #[error("qualified tool name must be at most {max} characters, got {len}")]
    QualifiedLength {
        /// Its length in characters.
        len: usize,
        /// [`MAX_QUALIFIED_LEN`].
        max: usize,
    },
    /// A name to split has no `_` between namespace and tool.
    #[error("qualified tool name has no `_` between namespace and tool")]
    NotQualified,
    /// The provider lists more tools than allowed.
    #[error("a provider may expose at most {max} tools, got {count}")]
    TooManyTools {
        /// How many tools it listed.
        count: usize,
        /// [`MAX_TOOLS_PER_PROVIDER`].
        max: usize,
    },
    /// The provider lists the same tool name twice.
    #[error("tool {name:?} is listed more than once")]
    DuplicateTool {
        /// The repeated name.
        name: String,
    },
}

/// Checks a namespace's length and characters (not whether it is reserved:
/// built-in tools use the reserved ones).
pub fn validate_namespace(namespace: &str) -> Result<(), NameError> {
    let len = namespace.chars().count();
    if !(1..=MAX_NAMESPACE_LEN).contains(&len) {
        return Err(NameError::NamespaceLength { len, max: MAX_NAMESPACE_LEN });
    }
    let mut bytes = namespace.bytes();
    let head_ok = bytes.next().is_some_and(|b| b.is_ascii_lowercase());
    if head_ok && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(NameError::NamespaceChars { namespace: namespace.to_owned() })
    }
}

/// Checks a tool name's (the part after the namespace) length and characters.
pub fn validate_tool_name(name: &str) -> Result<(), NameError> {
    let len = name.chars().count();
    if !(1..=MAX_TOOL_NAME_LEN).contains(&len) {
        return Err(NameError::ToolNameLength { len, max: MAX_TOOL_NAME_LEN });
    }
    let mut bytes = name.bytes();
    let head_ok = bytes.next().is_some_and(|b| b.is_ascii_alphanumeric());
    if head_ok && bytes.all(is_function_name_byte) {
        Ok(())
    } else {
        Err(NameError::ToolNameChars { name: name.to_owned() })
    }
}

fn is_function_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether `name` is a valid function name for the major model APIs:
/// `^[a-zA-Z0-9_-]{1,64}$`.
#[must_use]
pub fn is_model_function_name(name: &str) -> bool {
    (1..=MAX_FUNCTION_NAME_LEN).contains(&name.len()) && name.bytes().all(is_function_name_byte)
}

/// Whether `namespace` is one of [`RESERVED_NAMESPACES`].
#[must_use]
pub fn is_reserved_namespace(namespace: &str) -> bool {
    RESERVED_NAMESPACES.contains(&namespace)
}

/// A validated `<namespace>_<tool>` name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct QualifiedName {
    name: String,
    /// Byte index of the separating `_`.
    split: usize,
}

/// Joins a namespace and a tool name after checking both and the whole.
pub fn qualified_name(namespace: &str, tool: &str) -> Result<QualifiedName, NameError> {
    validate_namespace(namespace)?;
    validate_tool_name(tool)?;
    // Both parts are ASCII now, so bytes are characters.
    let len = namespace.len() + 1 + tool.len();
    if len > MAX_QUALIFIED_LEN {
        return Err(NameError::QualifiedLength { len, max: MAX_QUALIFIED_LEN });
    }
    Ok(QualifiedName { name: format!("{namespace}_{tool}"), split: namespace.len() })
}

/// Splits a qualified name at its first `_` into `(namespace, tool)`, if
/// both parts and the whole are valid.
#[must_use]
pub fn split_qualified(name: &str) -> Option<(&str, &str)> {
    let (namespace, tool) = name.split_once('_')?;
    qualified_name(namespace, tool).ok()?;
    Some((namespace, tool))
}

impl QualifiedName {
    /// Parses and validates a qualified name, with the reason on failure.
    pub fn parse(name: &str) -> Result<Self, NameError> {
        let (namespace, tool) = name.split_once('_').ok_or(NameError::NotQualified)?;
        qualified_name(namespace, tool)
    }

    /// The whole name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The namespace part.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.name[..self.split]
    }

    /// The tool part.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.name[self.split + 1..]
    }
}

impl TryFrom<String> for QualifiedName {
    type Error = NameError;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Self::parse(&name)
    }
}

impl From<QualifiedName> for String {
    fn from(name: QualifiedName) -> Self {
        name.name
    }
}

impl fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Who owns which provider namespace: first come, first served.
#[derive(Debug, Clone, Default)]
pub struct NamespaceRegistry {
    owners: BTreeMap<String, ExtensionId>,
}

impl NamespaceRegistry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Claims `namespace` for `owner`. Re-claiming one's own namespace is a
    /// no-op; a namespace held by another extension is refused, naming the
    /// holder, never taken over.
    pub fn claim(&mut self, namespace: &str, owner: &ExtensionId) -> Result<(), NameError> {
        validate_namespace(namespace)?;
        if is_reserved_namespace(namespace) {
            return Err(NameError::ReservedNamespace { namespace: namespace.to_owned() });
        }
        match self.owners.entry(namespace.to_owned()) {
            Entry::Vacant(slot) => {
                slot.insert(owner.clone());
                Ok(())
            }
            Entry::Occupied(held) if held.get() == owner => Ok(()),
            Entry::Occupied(held) => {
                Err(NameError::NamespaceTaken { namespace: namespace.to_owned(), owner: held.get().clone() })
            }
        }
    }

    /// Releases `namespace` if `owner` holds it; returns whether it did.
    pub fn release(&mut self, namespace: &str, owner: &ExtensionId) -> bool {
        let held = self.owners.get(namespace) == Some(owner);
        if held {
            self.owners.remove(namespace);
        }
        held
    }

    /// Releases every namespace `owner` holds (the provider went away).
    pub fn release_all(&mut self, owner: &ExtensionId) {
        self.owners.retain(|_, held| held != owner);
    }

    /// The holder of `namespace`, if claimed.
    #[must_use]
    pub fn owner(&self, namespace: &str) -> Option<&ExtensionId> {
        self.owners.get(namespace)
    }
}

/// A provider's tool list after validation: what may be exposed and what
/// was refused (and why). Nothing is dropped silently.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolList {
    /// Valid, unique tools, in the provider's order.
    pub accepted: Vec<QualifiedName>,
    /// Refused tools, in the provider's order.
    pub rejected: Vec<ToolIssue>,
}

/// One refused tool of a provider's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolIssue {
    /// Its position in the provider's list.
    pub index: usize,
    /// The name the provider gave.
    pub name: String,
    /// Why it was refused.
    pub error: NameError,
}

/// Validates a provider's `tools/list` names under `namespace`.
///
/// The whole list is refused when the namespace is invalid or when it has
/// more than [`MAX_TOOLS_PER_PROVIDER`] entries; otherwise each tool is
/// accepted or refused on its own (bad characters, lengths, duplicates).
pub fn validate_tool_list<S: AsRef<str>>(namespace: &str, tools: &[S]) -> Result<ToolList, NameError> {
    validate_namespace(namespace)?;
    if tools.len() > MAX_TOOLS_PER_PROVIDER {
        return Err(NameError::TooManyTools { count: tools.len(), max: MAX_TOOLS_PER_PROVIDER });
    }
    let mut seen = HashSet::new();
    let mut list = ToolList::default();
    for (index, name) in tools.iter().map(AsRef::as_ref).enumerate() {
        let checked = qualified_name(namespace, name).and_then(|q| {
            if seen.insert(name) { Ok(q) } else { Err(NameError::DuplicateTool { name: name.to_owned() }) }
        });
        match checked {
            Ok(q) => list.accepted.push(q),
            Err(error) => list.rejected.push(ToolIssue { index, name: name.to_owned(), error }),
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(c: char) -> ExtensionId {
        ExtensionId::new(c.to_string().repeat(32)).expect("valid id")
    }

    #[test]
    fn namespace_length_boundary() {
        assert_eq!(validate_namespace(&"a".repeat(16)), Ok(()));
        assert_eq!(validate_namespace(&"a".repeat(17)), Err(NameError::NamespaceLength { len: 17, max: 16 }));
        assert_eq!(validate_namespace(""), Err(NameError::NamespaceLength { len: 0, max: 16 }));
    }

    #[test]
    fn namespace_characters() {
        for ok in ["a", "userscripts", "v2", "a0b1"] {
            assert_eq!(validate_namespace(ok), Ok(()), "{ok}");
        }
        for bad in ["2fa", "User", "my_ns", "my-ns", "é", "a b"] {
            assert!(matches!(validate_namespace(bad), Err(NameError::NamespaceChars { .. })), "{bad}");
        }
    }

    #[test]
    fn tool_name_length_boundary() {
        assert_eq!(validate_tool_name(&"t".repeat(40)), Ok(()));
        assert_eq!(validate_tool_name(&"t".repeat(41)), Err(NameError::ToolNameLength { len: 41, max: 40 }));
        assert_eq!(validate_tool_name(""), Err(NameError::ToolNameLength { len: 0, max: 40 }));
    }

    #[test]
    fn tool_name_characters() {
        for ok in ["run", "run_script", "Get-Item", "2fa", "a_"] {
            assert_eq!(validate_tool_name(ok), Ok(()), "{ok}");
        }
        for bad in ["_run", "-run", "run script", "run.js", "rün"] {
            assert!(matches!(validate_tool_name(bad), Err(NameError::ToolNameChars { .. })), "{bad}");
        }
    }

    #[test]
    fn combined_length_boundary() {
        // The largest valid parts make exactly 57 characters.
        let q = qualified_name(&"n".repeat(16), &"t".repeat(40)).expect("57 is allowed");
        assert_eq!(q.as_str().len(), MAX_QUALIFIED_LEN);
        assert!(is_model_function_name(q.as_str()));
        // 58 characters can only come from an over-long part, so it is refused.
        let long = format!("{}_{}", "n".repeat(17), "t".repeat(40));
        assert_eq!(long.len(), 58);
        assert_eq!(split_qualified(&long), None);
        assert_eq!(QualifiedName::parse(&long), Err(NameError::NamespaceLength { len: 17, max: 16 }));
    }

    #[test]
    fn qualified_names_split_back() {
        let q = qualified_name("userscripts", "run_script").expect("valid");
        assert_eq!(q.as_str(), "userscripts_run_script");
        assert_eq!((q.namespace(), q.tool()), ("userscripts", "run_script"));
        assert_eq!(split_qualified("userscripts_run_script"), Some(("userscripts", "run_script")));
        assert_eq!(QualifiedName::parse(q.as_str()), Ok(q.clone()));
        assert_eq!(QualifiedName::parse("nounderscore"), Err(NameError::NotQualified));
        assert_eq!(split_qualified("_tool"), None);
        assert_eq!(split_qualified("ns_"), None);
        let json = serde_json::to_string(&q).expect("serialize");
        assert_eq!(json, "\"userscripts_run_script\"");
        assert_eq!(serde_json::from_str::<QualifiedName>(&json).expect("parse"), q);
        assert!(serde_json::from_str::<QualifiedName>("\"Bad_name\"").is_err());
        // Built-in tools live in reserved namespaces and are valid names.
        assert!(qualified_name("page", "click").is_ok());
    }

    #[test]
    fn model_function_name_rule() {
        assert!(is_model_function_name(&"a".repeat(64)));
        assert!(!is_model_function_name(&"a".repeat(65)));
        assert!(!is_model_function_name(""));
        assert!(is_model_function_name("A-b_9"));
        assert!(!is_model_function_name("a.b"));
    }

    #[test]
    fn every_reserved_namespace_is_refused() {
        let mut registry = NamespaceRegistry::new();
        for ns in ["browser", "page", "file", "network", "devtools", "webmcp", "ext"] {
            assert!(is_reserved_namespace(ns));
            assert_eq!(registry.claim(ns, &owner('a')), Err(NameError::ReservedNamespace { namespace: ns.to_owned() }));
        }
        assert_eq!(RESERVED_NAMESPACES.len(), 7);
        assert_eq!(registry.owner("page"), None);
    }

    #[test]
    fn first_come_first_served() {
        let mut registry = NamespaceRegistry::new();
        let (a, b) = (owner('a'), owner('b'));
        assert_eq!(registry.claim("userscripts", &a), Ok(()));
        assert_eq!(registry.claim("userscripts", &a), Ok(()), "re-claim is idempotent");
        let refused = registry.claim("userscripts", &b);
        assert_eq!(refused, Err(NameError::NamespaceTaken { namespace: "userscripts".into(), owner: a.clone() }));
        let message = refused.expect_err("taken").to_string();
        assert!(message.contains(a.as_str()), "{message}");
        assert_eq!(registry.owner("userscripts"), Some(&a));

        assert!(!registry.release("userscripts", &b), "only the owner releases");
        assert!(registry.release("userscripts", &a));
        assert_eq!(registry.claim("userscripts", &b), Ok(()));
        registry.release_all(&b);
        assert_eq!(registry.owner("userscripts"), None);
        assert!(matches!(registry.claim("Bad", &a), Err(NameError::NamespaceChars { .. })));
    }

    #[test]
    fn tool_count_boundary() {
        let names = |n: usize| (0..n).map(|i| format!("tool{i}")).collect::<Vec<_>>();
        let list = validate_tool_list("ns", &names(64)).expect("64 tools allowed");
        assert_eq!((list.accepted.len(), list.rejected.len()), (64, 0));
        assert_eq!(validate_tool_list("ns", &names(65)), Err(NameError::TooManyTools { count: 65, max: 64 }));
    }

    #[test]
    fn tool_list_reports_each_refusal() {
        let long = "t".repeat(41);
        let list =
            validate_tool_list("ns", &["ok", "bad name", "ok", long.as_str(), "fine"]).expect("list-level checks pass");
        let accepted: Vec<_> = list.accepted.iter().map(QualifiedName::as_str).collect();
        assert_eq!(accepted, ["ns_ok", "ns_fine"]);
        let rejected: Vec<_> = list.rejected.iter().map(|i| (i.index, &i.error)).collect();
        assert_eq!(
            rejected,
            [
                (1, &NameError::ToolNameChars { name: "bad name".into() }),
                (2, &NameError::DuplicateTool { name: "ok".into() }),
                (3, &NameError::ToolNameLength { len: 41, max: 40 }),
            ]
        );
        assert!(matches!(validate_tool_list("Bad", &["ok"]), Err(NameError::NamespaceChars { .. })));
    }
}

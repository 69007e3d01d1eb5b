//! Chrome extension IDs: the one predicate every input path checks.
//!
//! The seed's invariant is that `isExtensionId()` is the *only* ID test
//! (`/^[a-p]{32}$/`). An ID is 32 hex digits of a SHA-256, with `0-f` mapped
//! to `a-p`. [`ExtensionId`] is the typed form, and its constructor goes
//! through [`is_extension_id`], so holding one proves the check ran.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Length of a Chrome extension ID.
const ID_LEN: usize = 32;

/// Whether `s` is a Chrome extension ID: exactly `^[a-p]{32}$`.
///
/// This is the single ID predicate of lumo. Every path that takes an
/// extension ID from outside (probe replies, `sender.id`, configuration,
/// tool arguments) must call this function — or build an [`ExtensionId`],
/// which calls it — and nothing else: no second regex, no looser check.
///
/// ```
/// use lumo_protocol::is_extension_id;
/// assert!(is_extension_id("abcdefghijklmnopabcdefghijklmnop"));
/// assert!(!is_extension_id("abcdefghijklmnopabcdefghijklmnoq")); // q is not a-p
/// assert!(!is_extension_id("ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP"));
/// ```
#[must_use]
pub fn is_extension_id(s: &str) -> bool {
    s.len() == ID_LEN && s.bytes().all(|b| matches!(b, b'a'..=b'p'))
}

/// A string that passed [`is_extension_id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ExtensionId(String);

/// A value that is not a Chrome extension ID.
///
/// The rejected text is deliberately not kept: it came from outside and
/// may be arbitrarily long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a Chrome extension ID (expected 32 letters a-p)")]
pub struct InvalidExtensionId;

impl ExtensionId {
    /// Checks `id` with [`is_extension_id`] and wraps it.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidExtensionId> {
        let id = id.into();
        if is_extension_id(&id) { Ok(Self(id)) } else { Err(InvalidExtensionId) }
    }

    /// The ID as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ExtensionId {
    type Error = InvalidExtensionId;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        Self::new(id)
    }
}

impl From<ExtensionId> for String {
    fn from(id: ExtensionId) -> Self {
        id.0
    }
}

impl FromStr for ExtensionId {
    type Err = InvalidExtensionId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl AsRef<str> for ExtensionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ExtensionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "abcdefghijklmnopabcdefghijklmnop";

    #[test]
    fn accepts_exactly_32_letters_a_to_p() {
        assert!(is_extension_id(ID));
        assert!(is_extension_id(&"p".repeat(32)));
        for bad in [
            "",
            &ID[..31],
            &format!("{ID}a"),
            "abcdefghijklmnopabcdefghijklmno0",
            "abcdefghijklmnopabcdefghijklmno`",
            "abcdefghijklmnopabcdefghijklmnoA",
            " abcdefghijklmnopabcdefghijklmno",
            // 32 bytes, but one multi-byte char: still refused.
            "abcdefghijklmnopabcdefghijklmné",
        ] {
            assert!(!is_extension_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn newtype_goes_through_the_predicate() {
        assert_eq!(ExtensionId::new(ID).map(String::from).as_deref(), Ok(ID));
        assert_eq!(ExtensionId::new("nope"), Err(InvalidExtensionId));
        assert!(serde_json::from_str::<ExtensionId>("\"xyz\"").is_err());
        let id: ExtensionId = serde_json::from_str(&format!("\"{ID}\"")).expect("valid id");
        assert_eq!(id.to_string(), ID);
    }
}

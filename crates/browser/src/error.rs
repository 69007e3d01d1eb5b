//! lumo-browser's one error type: why a tool, or a step inside one, failed.
//!
//! Steps keep the cause typed ([`BrowserError::Cdp`] carries the CDP error
//! with its code), so code that must tell failures apart matches on variants
//! and CDP error codes, never on English text. The conversion to what the
//! agent reads ([`ToolFailure`]: a code and a message) happens once, where a
//! tool's answer leaves the crate ([`BrowserError::into_parts`]).

use lumo_cdp::CdpError;
use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::Value;

/// Why a browser tool failed. Every failure of a tool is an `Err` of this
/// type: there is no second way (no "successful" answer that carries a failure).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// A CDP command failed: the browser refused it (with its error code), did
    /// not answer in time, or went away.
    #[error(transparent)]
    Cdp(#[from] CdpError),
    /// A failure phrased for the agent: what was wrong and what to do.
    #[error("{}", .0.message)]
    Refused(ToolFailure),
    /// A failure the page reported in its own words: lumo's sentence in
    /// `failure`, the page's words in `page_text` (fenced as untrusted by the
    /// gate), and what the page answered, as data, in `details`.
    #[error("{}", .failure.message)]
    PageReported {
        /// lumo's own words: the code and what happened.
        failure: ToolFailure,
        /// The page's words.
        page_text: String,
        /// Machine-readable details, kept next to the error envelope.
        details: Option<Value>,
    },
}

impl BrowserError {
    /// A failure explained by the page's own words.
    pub fn page(failure: ToolFailure, page_text: impl Into<String>) -> Self {
        Self::PageReported { failure, page_text: page_text.into(), details: None }
    }

    /// The same failure with machine-readable details (a page-reported one only).
    pub fn with_details(mut self, value: Option<Value>) -> Self {
        if let Self::PageReported { details, .. } = &mut self {
            *details = value;
        }
        self
    }

    /// The error code the agent reads.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Cdp(CdpError::ConnectionLost) => ErrorCode::Unavailable,
            // The bridge relay could not reach the user's browser in time (the extension is away).
            Self::Cdp(CdpError::Protocol { code, .. }) if *code == lumo_cdp::CARRIER_UNAVAILABLE => {
                ErrorCode::Unavailable
            }
            Self::Cdp(CdpError::Timeout { .. }) => ErrorCode::Timeout,
            Self::Cdp(_) => ErrorCode::OperationFailed,
            Self::Refused(failure) | Self::PageReported { failure, .. } => failure.code,
        }
    }

    /// The bridge could not say whether the command ran (its worker stopped under it).
    pub(crate) fn unsure(&self) -> bool {
        matches!(self, Self::Cdp(CdpError::Protocol { code, .. }) if *code == lumo_cdp::CARRIER_UNSURE)
    }

    /// The same failure with `prefix` before its message (which field of a list failed).
    pub(crate) fn context(self, prefix: &str) -> Self {
        let failure = ToolFailure::from(self);
        Self::Refused(ToolFailure::new(failure.code, format!("{prefix}{}", failure.message)))
    }

    /// What the agent reads: the failure, the page's words (to fence), and details.
    pub fn into_parts(self) -> (ToolFailure, Option<String>, Option<Value>) {
        match self {
            Self::PageReported { failure, page_text, details } => (failure, Some(page_text), details),
            other => (other.into(), None, None),
        }
    }
}

impl From<ToolFailure> for BrowserError {
    fn from(failure: ToolFailure) -> Self {
        Self::Refused(failure)
    }
}

impl From<BrowserError> for ToolFailure {
    /// The one place a browser error becomes what the agent reads.
    fn from(error: BrowserError) -> Self {
        let code = error.code();
        match error {
            BrowserError::Cdp(CdpError::ConnectionLost) => {
                ToolFailure::new(code, "The browser closed or crashed. Call again: lumo starts a new browser.")
            }
            BrowserError::Cdp(e) => ToolFailure::new(code, e.to_string()),
            BrowserError::Refused(failure) | BrowserError::PageReported { failure, .. } => failure,
        }
    }
}

/// A failure phrased for the agent (shorthand inside the crate).
pub(crate) fn refuse(code: ErrorCode, message: impl Into<String>) -> BrowserError {
    BrowserError::Refused(ToolFailure::new(code, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdp_errors_become_what_the_agent_reads_in_one_place() {
        let lost = ToolFailure::from(BrowserError::from(CdpError::ConnectionLost));
        assert_eq!((lost.code, lost.message.starts_with("The browser closed")), (ErrorCode::Unavailable, true));
        let refused = CdpError::Protocol { method: "Page.navigate".into(), code: -32000, message: "nope".into() };
        let failure = ToolFailure::from(BrowserError::from(refused));
        assert_eq!(failure.code, ErrorCode::OperationFailed);
        assert_eq!(failure.message, "Page.navigate failed: nope (code -32000)");
        let page = BrowserError::page(ToolFailure::new(ErrorCode::OperationFailed, "it failed"), "the page says no");
        assert_eq!(page.into_parts().1.as_deref(), Some("the page says no"));
    }
}

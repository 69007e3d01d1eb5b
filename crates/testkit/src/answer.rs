//! Reading tool answers at every level — an MCP result ([`Answer`]), a gate
//! output, a lumo-browser result — through one view ([`AnswerView`]), and
//! [`assert_answer!`](crate::assert_answer), which prints the whole answer when
//! a check fails (a red test then shows what the tool really said).

use lumo_browser::{ToolOutput, ToolResult};
use lumo_host::GateOutput;
use rmcp::model::CallToolResult;
use serde_json::Value;

/// One tool answer as an MCP client received it.
#[derive(Debug)]
pub struct Answer {
    /// The tool that answered.
    pub tool: String,
    /// The MCP result.
    pub result: CallToolResult,
}

/// The part of `text` inside the untrusted fence (page content), without the fence lines.
pub fn fenced(text: &str) -> String {
    let Some(start) = text.find("<untrusted ") else { return String::new() };
    let after = &text[start..];
    let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    let end = body.rfind("\n</untrusted ").or_else(|| body.rfind("</untrusted ")).unwrap_or(body.len());
    body[..end].to_string()
}

impl Answer {
    /// `isError`.
    pub fn is_error(&self) -> bool {
        self.result.is_error == Some(true)
    }

    /// Every text block, joined by newlines.
    pub fn text(&self) -> String {
        self.result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n")
    }

    /// The part of the text inside the untrusted fence (page content), without the fence lines.
    pub fn page_text(&self) -> String {
        fenced(&self.text())
    }

    /// `structuredContent` (or null).
    pub fn structured(&self) -> Value {
        self.result.structured_content.clone().unwrap_or(Value::Null)
    }

    /// `structuredContent.error.code` (or "").
    pub fn error_code(&self) -> String {
        self.structured()["error"]["code"].as_str().unwrap_or_default().to_string()
    }

    /// `structuredContent.error.message` (or "").
    pub fn error_message(&self) -> String {
        self.structured()["error"]["message"].as_str().unwrap_or_default().to_string()
    }

    /// The images: (mime type, base64 data).
    pub fn images(&self) -> Vec<(String, String)> {
        self.result.content.iter().filter_map(|c| c.as_image()).map(|i| (i.mime_type.clone(), i.data.clone())).collect()
    }

    /// The ref on the first line that contains `needle` (e.g. `button "Sign in"`).
    pub fn ref_of(&self, needle: &str) -> String {
        ref_in(&self.text(), needle)
    }
}

/// The ref (`e12`) on the first line of `text` containing `needle`, after `needle`.
pub fn ref_in(text: &str, needle: &str) -> String {
    try_ref_in(text, needle).unwrap_or_else(|| panic!("no line with a ref after {needle:?} in:\n{text}"))
}

/// Like [`ref_in`], `None` when there is none.
pub fn try_ref_in(text: &str, needle: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let at = line.find(needle)?;
        let rest = &line[at + needle.len()..];
        let open = rest.find("[e")?;
        let close = rest[open..].find(']')?;
        let r = &rest[open + 1..open + close];
        r[1..].bytes().all(|b| b.is_ascii_digit()).then(|| r.to_string())
    })
}

/// What every level's answer shows to a check: its text, its page part, whether
/// it failed and how, and all of it at once for a failure message.
pub trait AnswerView {
    /// The text the model reads (lumo's words and, at the MCP and gate levels, the fenced page part).
    fn text(&self) -> String;
    /// The page's part only (inside the untrusted fence).
    fn page_text(&self) -> String;
    /// Whether the call failed.
    fn is_error(&self) -> bool;
    /// The error code of a failed call (`invalid_arguments`), or "".
    fn error_code(&self) -> String;
    /// Everything the answer holds, for a failure message.
    fn whole(&self) -> String;
}

fn structured_code(structured: Option<&Value>) -> String {
    structured.and_then(|s| s["error"]["code"].as_str()).unwrap_or_default().to_string()
}

impl AnswerView for Answer {
    fn text(&self) -> String {
        Answer::text(self)
    }
    fn page_text(&self) -> String {
        Answer::page_text(self)
    }
    fn is_error(&self) -> bool {
        Answer::is_error(self)
    }
    fn error_code(&self) -> String {
        Answer::error_code(self)
    }
    fn whole(&self) -> String {
        let images = self.images().len();
        format!(
            "{} answered (isError: {}, {images} image(s)):\n{}\nstructuredContent: {}",
            self.tool,
            self.is_error(),
            self.text(),
            self.structured()
        )
    }
}

impl AnswerView for GateOutput {
    fn text(&self) -> String {
        self.text.clone()
    }
    fn page_text(&self) -> String {
        fenced(&self.text)
    }
    fn is_error(&self) -> bool {
        self.is_error
    }
    fn error_code(&self) -> String {
        structured_code(self.structured.as_ref())
    }
    fn whole(&self) -> String {
        format!(
            "the gate answered (is_error: {}, {} image(s)):\n{}\nstructured: {}",
            self.is_error,
            self.images.len(),
            self.text,
            self.structured.clone().unwrap_or(Value::Null)
        )
    }
}

impl AnswerView for ToolOutput {
    fn text(&self) -> String {
        self.text.clone()
    }
    fn page_text(&self) -> String {
        self.page_text.clone().unwrap_or_default()
    }
    fn is_error(&self) -> bool {
        false
    }
    fn error_code(&self) -> String {
        String::new()
    }
    fn whole(&self) -> String {
        format!(
            "the tool answered ({} image(s)):\n{}\npage text:\n{}\nstructured: {}",
            self.images.len(),
            self.text,
            self.page_text.as_deref().unwrap_or("(none)"),
            self.structured.clone().unwrap_or(Value::Null),
        )
    }
}

impl AnswerView for ToolResult {
    fn text(&self) -> String {
        match self {
            Ok(out) => out.text.clone(),
            Err(failure) => failure.message.clone(),
        }
    }
    fn page_text(&self) -> String {
        match self {
            Ok(out) => out.page_text(),
            Err(failure) => failure.page_text.clone().unwrap_or_default(),
        }
    }
    fn is_error(&self) -> bool {
        self.as_ref().map_or(true, AnswerView::is_error)
    }
    fn error_code(&self) -> String {
        match self {
            Ok(out) => out.error_code(),
            Err(failure) => failure.code.as_str().to_string(),
        }
    }
    fn whole(&self) -> String {
        match self {
            Ok(out) => out.whole(),
            Err(failure) => format!("the tool failed: {} {}", failure.code.as_str(), failure.message),
        }
    }
}

impl AnswerView for String {
    fn text(&self) -> String {
        self.clone()
    }
    fn page_text(&self) -> String {
        fenced(self)
    }
    fn is_error(&self) -> bool {
        false
    }
    fn error_code(&self) -> String {
        String::new()
    }
    fn whole(&self) -> String {
        self.clone()
    }
}

/// Checks one thing about a tool answer (any [`AnswerView`]); on failure it
/// panics with what was wanted and the WHOLE answer.
///
/// ```ignore
/// assert_answer!(answer, ok);
/// assert_answer!(answer, error "invalid_arguments");
/// assert_answer!(answer, contains "Clicked");           // the text the model reads
/// assert_answer!(answer, lacks "Navigated");
/// assert_answer!(answer, starts_with "Snapshot:");
/// assert_answer!(answer, eq "Viewport is 800×600.");
/// assert_answer!(answer, page contains "[log] hello");  // inside the untrusted fence only
/// assert_answer!(answer, page lacks "pw123");
/// assert_answer!(answer, page starts_with "url: ");
/// assert_answer!(answer, page eq "3");
/// ```
#[macro_export]
macro_rules! assert_answer {
    ($answer:expr, ok $(,)?) => {{
        let answer = &$answer;
        if $crate::answer::AnswerView::is_error(answer) {
            panic!("the call should have worked\n--- whole answer ---\n{}", $crate::answer::AnswerView::whole(answer));
        }
    }};
    ($answer:expr, error $code:expr $(,)?) => {{
        let answer = &$answer;
        let code = &$code;
        let code: &str = ::core::convert::AsRef::<str>::as_ref(code);
        if !$crate::answer::AnswerView::is_error(answer) || $crate::answer::AnswerView::error_code(answer) != code {
            panic!("the call should have failed with {code:?}\n--- whole answer ---\n{}", $crate::answer::AnswerView::whole(answer));
        }
    }};
    ($answer:expr, page $($check:tt)+) => {{
        let answer = &$answer;
        $crate::assert_answer!(@check "page text", $crate::answer::AnswerView::page_text(answer), answer, $($check)+)
    }};
    ($answer:expr, $($check:tt)+) => {{
        let answer = &$answer;
        $crate::assert_answer!(@check "text", $crate::answer::AnswerView::text(answer), answer, $($check)+)
    }};
    (@check $part:literal, $text:expr, $answer:ident, contains $needle:expr $(,)?) => {{
        let text: String = $text;
        let needle = &$needle; // `let x = &temporary` keeps it alive; nothing is moved
        let needle: &str = ::core::convert::AsRef::<str>::as_ref(needle);
        if !text.contains(needle) {
            panic!("the {} does not contain {needle:?}\n--- whole answer ---\n{}", $part, $crate::answer::AnswerView::whole($answer));
        }
    }};
    (@check $part:literal, $text:expr, $answer:ident, lacks $needle:expr $(,)?) => {{
        let text: String = $text;
        let needle = &$needle; // `let x = &temporary` keeps it alive; nothing is moved
        let needle: &str = ::core::convert::AsRef::<str>::as_ref(needle);
        if text.contains(needle) {
            panic!("the {} should not contain {needle:?}\n--- whole answer ---\n{}", $part, $crate::answer::AnswerView::whole($answer));
        }
    }};
    (@check $part:literal, $text:expr, $answer:ident, starts_with $needle:expr $(,)?) => {{
        let text: String = $text;
        let needle = &$needle; // `let x = &temporary` keeps it alive; nothing is moved
        let needle: &str = ::core::convert::AsRef::<str>::as_ref(needle);
        if !text.starts_with(needle) {
            panic!("the {} does not start with {needle:?}\n--- whole answer ---\n{}", $part, $crate::answer::AnswerView::whole($answer));
        }
    }};
    (@check $part:literal, $text:expr, $answer:ident, eq $want:expr $(,)?) => {{
        let text: String = $text;
        let want = &$want; // `let x = &temporary` keeps it alive; nothing is moved
        let want: &str = ::core::convert::AsRef::<str>::as_ref(want);
        if text != want {
            panic!("the {} is not {want:?}\n--- whole answer ---\n{}", $part, $crate::answer::AnswerView::whole($answer));
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fence_body_is_the_page_part() {
        let text = "Snapshot:\n<untrusted id=\"x\">\nurl: a\n- button \"Go\" [e3]\n</untrusted id=\"x\">";
        assert_eq!(fenced(text), "url: a\n- button \"Go\" [e3]");
        assert_eq!(ref_in(text, "button \"Go\""), "e3");
        assert_eq!(try_ref_in(text, "link"), None);
    }

    #[test]
    fn a_failed_check_prints_the_whole_answer() {
        let answer = "first line\nsecond line with the detail".to_string();
        let caught = std::panic::catch_unwind(|| assert_answer!(answer, contains "absent")).expect_err("it must fail");
        let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("\"absent\"") && message.contains("second line with the detail"), "{message}");
        assert_answer!(answer, starts_with "first");
        assert_answer!(answer, lacks "absent");
        assert_answer!(answer, ok);
        assert_answer!(answer, page eq "");
        let failed: ToolResult =
            Err(lumo_protocol::ToolFailure::new(lumo_protocol::ErrorCode::InvalidArguments, "ref: not a ref").into());
        assert_answer!(failed, error "invalid_arguments");
        assert_answer!(failed, contains "not a ref");
    }
}

//! lumo's in-page helper and its contract: the JavaScript in `src/js/` (one
//! file per concern, joined by `build.rs`) runs in an isolated world of each
//! frame, where the page's scripts can neither see nor change it; this module
//! is the only Rust that calls it. One function per helper method, with its
//! argument and reply types: arguments travel as JSON values, replies are
//! decoded into the types here, and an answer of another shape is a clear
//! error, not a silent default. `world.rs` carries the calls and books the refs
//! each one made.

pub(crate) mod script;
mod world;

use lumo_protocol::ErrorCode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{BrowserError, refuse};
use crate::page::{ensure_no_dialog, ref_frame, stale_ref};
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::fail;
pub(crate) use world::Element;

/// Reads a method's reply; an element method that would not act on its
/// element (wrong kind or state) answers `{refused: why}` instead.
fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, BrowserError> {
    if let Some(why) = value.get("refused").and_then(Value::as_str) {
        return Err(refuse(ErrorCode::InvalidState, why));
    }
    serde_json::from_value(value).map_err(|e| {
        refuse(
            ErrorCode::OperationFailed,
            format!("lumo's page helper answered {method} in a shape lumo does not read ({e}); this is a bug in lumo"),
        )
    })
}

async fn page<T: DeserializeOwned>(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    method: &str,
    arg: impl Serialize,
) -> Result<T, BrowserError> {
    let arg = serde_json::to_value(arg).map_err(|e| fail(ErrorCode::OperationFailed, e.to_string()))?;
    decode(method, world::call_page(live, tab, child, world::Entry::Helper, method, arg).await?)
}

async fn on<T: DeserializeOwned>(
    live: &Live,
    tab: &Tab,
    element: &Element,
    method: &str,
    arg: impl Serialize,
) -> Result<T, BrowserError> {
    let arg = serde_json::to_value(arg).map_err(|e| fail(ErrorCode::OperationFailed, e.to_string()))?;
    decode(method, world::call_element(live, tab, element, method, arg).await?)
}

// ---- methods of a frame's document -------------------------------------------------

/// What `page_snapshot` asks of one frame.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SnapshotOptions<'a> {
    /// Only the subtree of this ref.
    #[serde(rename = "ref")]
    pub(crate) root: Option<&'a str>,
    pub(crate) interactive: bool,
    pub(crate) viewport: bool,
    pub(crate) max_bytes: usize,
    /// The first line to write (the continuation of a cut snapshot).
    pub(crate) offset: usize,
}

/// A frame's snapshot.
#[derive(Deserialize)]
pub(crate) struct Tree {
    /// One line per node.
    pub(crate) text: String,
    /// Whether the byte budget cut it.
    pub(crate) truncated: bool,
    /// The first line left out (-1 when none was).
    pub(crate) next: i64,
    /// Lines written or skipped before the cut.
    pub(crate) lines: u64,
    /// The document's title.
    pub(crate) title: String,
}

/// The frame's tree; `None` when the subtree's ref is gone.
pub(crate) async fn snapshot(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    options: &SnapshotOptions<'_>,
) -> Result<Option<Tree>, BrowserError> {
    page(live, tab, child, "snapshot", options).await
}

/// `page_extract`'s reader (`js/extract.js`): `extract`, `records` or `probeExtractors`, as JSON.
pub(crate) async fn reader(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    method: &str,
    arg: &serde_json::Value,
) -> Result<serde_json::Value, BrowserError> {
    world::call_page(live, tab, child, world::Entry::Reader, method, arg.clone()).await
}

/// What `page_find` looks for.
#[derive(Serialize, Clone)]
pub(crate) struct FindQuery<'a> {
    pub(crate) text: Option<&'a str>,
    pub(crate) role: Option<&'a str>,
    /// Lumo matches a regex itself: the page only gathers candidates.
    pub(crate) regex: bool,
    pub(crate) limit: u32,
}

/// `page_find`'s hits in one frame: up to `limit` lines, and how many there were.
#[derive(Deserialize)]
pub(crate) struct Found {
    pub(crate) text: String,
    pub(crate) total: u64,
}

pub(crate) async fn find(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    query: &FindQuery<'_>,
) -> Result<Found, BrowserError> {
    page(live, tab, child, "find", query).await
}

/// The text each candidate of a regex query is matched on; the page keeps the
/// candidates until [`find_pick`].
pub(crate) async fn find_candidates(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    query: &FindQuery<'_>,
) -> Result<Vec<String>, BrowserError> {
    page(live, tab, child, "findCandidates", query).await
}

/// The hits among the candidates, by their indexes.
pub(crate) async fn find_pick(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    matched: &[usize],
    limit: u32,
) -> Result<Found, BrowserError> {
    page(live, tab, child, "findPick", json!({"matched": matched, "limit": limit})).await
}

/// Whether the main frame shows `text` (case-insensitive, open shadow roots too).
pub(crate) async fn has_text(live: &Live, tab: &Tab, text: &str) -> Result<bool, BrowserError> {
    page(live, tab, None, "hasText", text).await
}

/// Where a ref's element is.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RefState {
    Shown,
    Hidden,
    Gone,
}

pub(crate) async fn ref_state(live: &Live, tab: &Tab, child: Option<u32>, r: &str) -> Result<RefState, BrowserError> {
    page(live, tab, child, "refState", r).await
}

/// Starts recording the main frame's changes, for [`changes`].
pub(crate) async fn watch(live: &Live, tab: &Tab) -> Result<(), BrowserError> {
    page(live, tab, None, "watch", Value::Null).await
}

/// What changed since [`watch`], as at most `limit` lines; stops recording.
pub(crate) async fn changes(live: &Live, tab: &Tab, limit: u64) -> Result<Vec<String>, BrowserError> {
    page(live, tab, None, "changes", limit).await
}

/// How `page_scroll` scrolls.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Scroll {
    pub(crate) dx: f64,
    pub(crate) dy: f64,
    pub(crate) edge: Option<Edge>,
    /// Bring the element into view (an element only).
    pub(crate) into_view: bool,
}

#[derive(Serialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Edge {
    Top,
    Bottom,
}

/// Scrolls the main frame's page; says where it ended.
pub(crate) async fn scroll_page(live: &Live, tab: &Tab, how: &Scroll) -> Result<String, BrowserError> {
    page(live, tab, None, "scroll", how).await
}

// ---- methods of one element --------------------------------------------------------

/// The element behind `r`, or `stale_ref` when it is gone. Refuses a ref of
/// another tab, and any page access while a dialog blocks the page.
pub(crate) async fn element(live: &Live, tab: &Tab, r: &str) -> Result<Element, BrowserError> {
    let child = ref_frame(live, tab, r)?;
    ensure_no_dialog(tab)?;
    world::resolve(live, tab, child, r).await?.ok_or_else(|| stale_ref(r).into())
}

/// Where the mouse goes for an element, scrolled into view.
#[derive(Deserialize)]
pub(crate) struct Aim {
    /// `role "name" [ref]`.
    pub(crate) name: String,
    /// Its centre; `None` when it has no box (hidden, collapsed).
    pub(crate) spot: Option<Spot>,
}

/// A point in the element's frame's viewport (same-origin frames added in).
#[derive(Deserialize)]
pub(crate) struct Spot {
    pub(crate) x: f64,
    pub(crate) y: f64,
    /// The element covering that point, described, if any.
    pub(crate) covered: Option<String>,
}

pub(crate) async fn aim(live: &Live, tab: &Tab, element: &Element) -> Result<Aim, BrowserError> {
    on(live, tab, element, "aim", Value::Null).await
}

/// A box in the element's frame's viewport.
#[derive(Deserialize)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

/// The element's box after scrolling it into view; `None` when it has none.
pub(crate) async fn element_box(live: &Live, tab: &Tab, element: &Element) -> Result<Option<Rect>, BrowserError> {
    on(live, tab, element, "box", Value::Null).await
}

/// Focuses the element; returns its description.
pub(crate) async fn focus(live: &Live, tab: &Tab, element: &Element) -> Result<String, BrowserError> {
    on(live, tab, element, "focus", Value::Null).await
}

/// Scrolls the element's own box, or brings it into view; says where it ended.
pub(crate) async fn scroll_element(
    live: &Live,
    tab: &Tab,
    element: &Element,
    how: &Scroll,
) -> Result<String, BrowserError> {
    on(live, tab, element, "scroll", how).await
}

/// An editable element, focused with its content selected.
#[derive(Deserialize)]
pub(crate) struct Focused {
    pub(crate) name: String,
    /// A date, time, colour or range input: typed text goes nowhere, set its value.
    pub(crate) picker: bool,
}

/// Focuses an editable element and selects its content (unless `append`);
/// refuses one that is not editable, disabled or read-only.
pub(crate) async fn focus_editable(
    live: &Live,
    tab: &Tab,
    element: &Element,
    append: bool,
) -> Result<Focused, BrowserError> {
    on(live, tab, element, "focusEditable", append).await
}

/// Sets the element's value with input and change events; whether it took it.
pub(crate) async fn set_value(live: &Live, tab: &Tab, element: &Element, value: &str) -> Result<bool, BrowserError> {
    on(live, tab, element, "setValue", value).await
}

/// How `page_fill_form` fills an element.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FieldKind {
    Select,
    File,
    Toggle,
    Text,
}

pub(crate) async fn field_kind(live: &Live, tab: &Tab, element: &Element) -> Result<FieldKind, BrowserError> {
    on(live, tab, element, "fieldKind", Value::Null).await
}

/// A checkbox, radio or switch.
#[derive(Deserialize)]
pub(crate) struct Toggle {
    pub(crate) checked: bool,
    pub(crate) radio: bool,
}

/// Refuses an element that is not a checkbox, radio or switch.
pub(crate) async fn toggle_state(live: &Live, tab: &Tab, element: &Element) -> Result<Toggle, BrowserError> {
    on(live, tab, element, "toggleState", Value::Null).await
}

/// What choosing options of a `<select>` came to.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Selection {
    /// Chosen: the select's description and the labels picked.
    Picked { name: String, labels: Vec<String> },
    /// Nothing chosen: `value` matches no option (the first 30 are listed).
    Missing { value: String, options: Vec<String> },
}

/// Chooses options of a `<select>` by value or label; refuses another element,
/// a disabled select, several values for a single select.
pub(crate) async fn select_options(
    live: &Live,
    tab: &Tab,
    element: &Element,
    values: &[String],
) -> Result<Selection, BrowserError> {
    on(live, tab, element, "selectOptions", values).await
}

/// An `<input type=file>`.
#[derive(Deserialize)]
pub(crate) struct FileInput {
    pub(crate) multiple: bool,
}

/// Refuses an element that is not an enabled file input.
pub(crate) async fn file_input(live: &Live, tab: &Tab, element: &Element) -> Result<FileInput, BrowserError> {
    on(live, tab, element, "fileInput", Value::Null).await
}

/// The `<iframe>` of a cross-origin frame in the main frame, scrolled into view.
#[derive(Deserialize)]
pub(crate) struct FrameOwner {
    /// Its ref in the main frame.
    #[serde(rename = "ref")]
    pub(crate) target: String,
    /// Where its content box starts in the viewport.
    pub(crate) x: f64,
    pub(crate) y: f64,
}

/// The `<iframe>` element of child frame `n`.
pub(crate) async fn frame_owner(live: &Live, tab: &Tab, n: u32) -> Result<FrameOwner, BrowserError> {
    let frame = world::frame_rt(tab, Some(n))?;
    let owner = live.call(tab, "DOM.getFrameOwner", json!({"frameId": frame.frame_id})).await?;
    let element = world::adopt(live, tab, &owner["backendNodeId"])
        .await?
        .ok_or_else(|| fail(ErrorCode::OperationFailed, format!("the element of frame f{n} is not reachable")))?;
    on(live, tab, &element, "frameBox", Value::Null).await
}

/// Where the element's frame starts in the tab's viewport: (0, 0) for the
/// main frame; the `<iframe>`'s content box for a cross-origin frame.
pub(crate) async fn viewport_offset(live: &Live, tab: &Tab, element: &Element) -> Result<(f64, f64), BrowserError> {
    match element.child {
        None => Ok((0.0, 0.0)),
        Some(n) => frame_owner(live, tab, n).await.map(|o| (o.x, o.y)),
    }
}

#[cfg(test)]
mod tests {
    use lumo_protocol::ErrorCode;
    use regex::Regex;
    use serde_json::json;

    use super::{FieldKind, Selection, Tree, decode};

    #[test]
    fn replies_decode_into_their_types_and_other_shapes_say_which_method() {
        let tree: Option<Tree> = decode(
            "snapshot",
            json!({"text": "- button \"OK\" [e1]", "truncated": false, "next": -1, "lines": 1, "title": "t"}),
        )
        .expect("a tree");
        assert_eq!(tree.map(|t| t.text).as_deref(), Some("- button \"OK\" [e1]"));
        assert!(decode::<Option<Tree>>("snapshot", json!(null)).expect("a gone subtree").is_none());
        assert_eq!(decode::<FieldKind>("fieldKind", json!("toggle")).expect("a kind"), FieldKind::Toggle);
        let missing = decode::<Selection>("selectOptions", json!({"missing": {"value": "x", "options": ["a"]}}));
        assert!(matches!(missing, Ok(Selection::Missing { value, .. }) if value == "x"));

        let wrong =
            lumo_protocol::ToolFailure::from(decode::<Tree>("snapshot", json!({"text": 3})).err().expect("not a tree"));
        assert_eq!(wrong.code, ErrorCode::OperationFailed);
        assert!(wrong.message.contains("answered snapshot in a shape lumo does not read"), "{}", wrong.message);
        let odd = lumo_protocol::ToolFailure::from(
            decode::<FieldKind>("fieldKind", json!("radio")).expect_err("no such kind"),
        );
        assert!(odd.message.contains("fieldKind"), "{}", odd.message);

        let refused = lumo_protocol::ToolFailure::from(
            decode::<FieldKind>("toggleState", json!({"refused": "link \"a\" [e3] is not a checkbox"}))
                .expect_err("refused"),
        );
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (ErrorCode::InvalidState, "link \"a\" [e3] is not a checkbox")
        );
    }

    /// Every method this module calls is one the page's contract (`js/api.js`) lists, in the right table.
    #[test]
    fn every_method_called_here_is_in_the_helper_s_tables() {
        let rust = include_str!("mod.rs");
        let api = include_str!("../js/api.js");
        let table = |name: &str| -> String {
            let start = api.find(&format!("const {name} = {{")).unwrap_or_else(|| panic!("api.js has no {name} table"));
            let end = api[start..].find("\n};").map(|e| start + e).expect("the table ends");
            api[start..end].to_string()
        };
        let (page, element) = (table("PAGE"), table("ELEMENT"));
        let calls = Regex::new(r#"\b(page|on)\(\s*live,\s*tab,\s*[^,]+,\s*"(\w+)""#).expect("a regex");
        let mut seen = 0;
        for c in calls.captures_iter(rust) {
            let (kind, method) = (&c[1], &c[2]);
            let listed = Regex::new(&format!(r"\b{method}\b")).expect("a regex");
            let home = if kind == "page" { &page } else { &element };
            assert!(
                listed.is_match(home),
                "{method} is called as a {kind} method but js/api.js does not list it there"
            );
            seen += 1;
        }
        assert!(seen >= 20, "found only {seen} calls: did the call pattern change?");
    }
}

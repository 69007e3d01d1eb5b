//! Acting on the page with trusted input: `page_click`, `page_hover`,
//! `page_drag`, `page_type`, `page_fill_form`, `page_select`, `page_check`,
//! `page_press_key`, `page_scroll`. Every element is scrolled into view
//! first; a covered element is reported, never clicked through.

use std::time::Duration;

use lumo_protocol::{ErrorCode, ToolFailure};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::action::Reach;
use crate::error::{BrowserError, refuse};
use crate::helper::{self, Element, FieldKind, Selection, element, viewport_offset};
use crate::page::wait_until;
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Hints, Outcome, Tool, fail};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new("page_click", "Click an element by ref (double, right/middle button, modifiers).", Hints::ACT, click)
            .untrusted(),
        Tool::new("page_hover", "Move the mouse over an element.", Hints::ACT, hover).untrusted(),
        Tool::new("page_drag", "Drag one element onto another with the mouse.", Hints::ACT, drag).untrusted(),
        Tool::new(
            "page_type",
            "Type text into an editable element (replaces its content unless append).",
            Hints::ACT,
            type_text,
        )
        .untrusted(),
        Tool::new(
            "page_fill_form",
            "Fill several fields at once: text, checkbox/radio (true/false), select (option label).",
            Hints::ACT,
            fill_form,
        )
        .untrusted(),
        Tool::new("page_select", "Choose options of a <select> by label or value.", Hints::ACT, select).untrusted(),
        Tool::new("page_check", "Check or uncheck a checkbox, radio or switch.", Hints::ACT, check).untrusted(),
        Tool::new(
            "page_press_key",
            "Press a key or chord (Enter, Tab, Escape, ArrowDown, Control+a …), optionally on an element.",
            Hints::ACT,
            press_key,
        )
        .untrusted(),
        Tool::new(
            "page_scroll",
            "Scroll the page or an element by pixels, to top/bottom, or bring a ref into view.",
            Hints::READ,
            scroll,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Button {
    #[default]
    Left,
    Right,
    Middle,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
enum Modifier {
    Alt,
    Control,
    Meta,
    Shift,
}

fn modifier_bits(modifiers: &[Modifier]) -> u32 {
    modifiers.iter().fold(0, |bits, m| {
        bits | match m {
            Modifier::Alt => 1,
            Modifier::Control => 2,
            Modifier::Meta => 4,
            Modifier::Shift => 8,
        }
    })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ClickArgs {
    /// Element ref from page_snapshot or page_find.
    #[serde(rename = "ref")]
    target: String,
    /// Double-click.
    #[serde(default)]
    double: bool,
    /// Mouse button (default left).
    #[serde(default)]
    button: Button,
    /// Keys held during the click.
    #[serde(default)]
    modifiers: Vec<Modifier>,
}

/// An element made ready for the mouse: scrolled into view, not covered.
struct Target {
    object: Element,
    name: String,
    x: f64,
    y: f64,
}

async fn target(live: &Live, tab: &Tab, r: &str) -> Result<Target, BrowserError> {
    let object = element(live, tab, r).await?;
    let helper::Aim { name, spot } = helper::aim(live, tab, &object).await?;
    let Some(spot) = spot else {
        return Err(refuse(
            ErrorCode::InvalidState,
            format!("{name} is not visible (hidden, collapsed or zero size)."),
        ));
    };
    if let Some(cover) = spot.covered {
        return Err(refuse(
            ErrorCode::InvalidState,
            format!(
                "{name} is covered by {cover} at its centre; close or scroll that away first, or act on it instead."
            ),
        ));
    }
    let (x, y) = (spot.x, spot.y);
    // Input goes to the tab at viewport coordinates; a cross-origin frame's are its own.
    let (dx, dy) = viewport_offset(live, tab, &object).await?;
    Ok(Target { object, name, x: x + dx, y: y + dy })
}

async fn mouse(
    live: &Live,
    tab: &Tab,
    kind: &str,
    (x, y): (f64, f64),
    button: Button,
    clicks: u32,
    modifiers: u32,
) -> Result<(), BrowserError> {
    let button = match button {
        Button::Left => "left",
        Button::Right => "right",
        Button::Middle => "middle",
    };
    let params = json!({"type": kind, "x": x, "y": y, "button": if kind == "mouseMoved" { "none" } else { button }, "clickCount": clicks, "modifiers": modifiers});
    // A click handler that opens alert() keeps the input command from returning
    // until the dialog closes: stop waiting once the dialog shows.
    tokio::select! {
        result = live.call(tab, "Input.dispatchMouseEvent", params) => result.map(|_| ()),
        _ = wait_until(tab, Duration::from_secs(3600), |s| s.dialog.is_some()) => Ok(()),
    }
}

async fn click(session: Ctx, args: ClickArgs) -> Outcome {
    on_tab(&session, TabUse::PAGE.settling(Reach::MayNavigate), |OnTab { live, tab }| async move {
        let t = target(&live, &tab, &args.target).await?;
        let bits = modifier_bits(&args.modifiers);
        mouse(&live, &tab, "mouseMoved", (t.x, t.y), args.button, 0, bits).await?;
        let rounds = if args.double { 2 } else { 1 };
        for clicks in 1..=rounds {
            mouse(&live, &tab, "mousePressed", (t.x, t.y), args.button, clicks, bits).await?;
            mouse(&live, &tab, "mouseReleased", (t.x, t.y), args.button, clicks, bits).await?;
        }
        let verb = match (args.double, args.button) {
            (true, _) => "Double-clicked",
            (false, Button::Right) => "Right-clicked",
            (false, Button::Middle) => "Middle-clicked",
            _ => "Clicked",
        };
        Ok(format!("{verb} {}.", t.name))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RefArgs {
    /// Element ref from page_snapshot or page_find.
    #[serde(rename = "ref")]
    target: String,
}

async fn hover(session: Ctx, args: RefArgs) -> Outcome {
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let t = target(&live, &tab, &args.target).await?;
        mouse(&live, &tab, "mouseMoved", (t.x, t.y), Button::Left, 0, 0).await?;
        Ok(format!("Hovered {}.", t.name))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DragArgs {
    /// Ref of the element to drag.
    from: String,
    /// Ref of the element to drop onto.
    to: String,
}

async fn drag(session: Ctx, args: DragArgs) -> Outcome {
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let from = target(&live, &tab, &args.from).await?;
        // HTML5 drag and drop (draggable elements) does not follow synthetic mouse
        // moves: have Chromium hand the drag over, then drop it ourselves.
        tab.state().drag = None;
        live.call(&tab, "Input.setInterceptDrags", json!({"enabled": true})).await?;
        let dragged = drag_path(&live, &tab, &from, &args.to).await;
        let html5 = tab.state().drag.take();
        let (to, dropped) = match (dragged, html5) {
            (Ok(to), Some(data)) => {
                let mut result = Ok(());
                for kind in ["dragEnter", "dragOver", "drop"] {
                    let event = json!({"type": kind, "x": to.x, "y": to.y, "data": data, "modifiers": 0});
                    if let Err(e) = live.call(&tab, "Input.dispatchDragEvent", event).await {
                        result = Err(e);
                        break;
                    }
                }
                (Ok(to), result)
            }
            (to, _) => (to, Ok(())),
        };
        let released = match &to {
            Ok(to) => mouse(&live, &tab, "mouseReleased", (to.x, to.y), Button::Left, 1, 0).await,
            Err(_) => mouse(&live, &tab, "mouseReleased", (from.x, from.y), Button::Left, 1, 0).await,
        };
        let _ = live.call(&tab, "Input.setInterceptDrags", json!({"enabled": false})).await;
        let to = to?;
        dropped.and(released)?;
        Ok(format!("Dragged {} onto {}.", from.name, to.name))
    })
    .await
}

/// Presses on `from`, finds `to` (scrolling it into view) and moves there in a few
/// steps (many drag libraries need the moves between).
async fn drag_path(live: &Live, tab: &Tab, from: &Target, to: &str) -> Result<Target, BrowserError> {
    mouse(live, tab, "mouseMoved", (from.x, from.y), Button::Left, 0, 0).await?;
    mouse(live, tab, "mousePressed", (from.x, from.y), Button::Left, 1, 0).await?;
    let to = target(live, tab, to).await?;
    for step in 1..=5 {
        let f = f64::from(step) / 5.0;
        let (x, y) = (from.x + (to.x - from.x) * f, from.y + (to.y - from.y) * f);
        live.call(
            tab,
            "Input.dispatchMouseEvent",
            json!({"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1}),
        )
        .await?;
    }
    Ok(to)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TypeArgs {
    /// Ref of an input, textarea or contenteditable element.
    #[serde(rename = "ref")]
    target: String,
    /// The text to type.
    text: String,
    /// Press Enter afterwards.
    #[serde(default)]
    submit: bool,
    /// Add to the current content instead of replacing it.
    #[serde(default)]
    append: bool,
}

/// Types `text` into the element behind `object`; returns its description.
async fn type_into(live: &Live, tab: &Tab, object: &Element, text: &str, append: bool) -> Result<String, BrowserError> {
    let helper::Focused { name, picker } = helper::focus_editable(live, tab, object, append).await?;
    if picker {
        // Date/time pickers ignore text insertion: set the value the way the user agent would, with events.
        if !helper::set_value(live, tab, object, text).await? {
            return Err(refuse(ErrorCode::InvalidArguments, format!("value: {text:?} is not valid for {name}")));
        }
        return Ok(name);
    }
    if text.is_empty() {
        if !append {
            press(live, tab, "Delete").await?;
        }
    } else {
        live.call(tab, "Input.insertText", json!({"text": text})).await?;
    }
    Ok(name)
}

async fn type_text(session: Ctx, args: TypeArgs) -> Outcome {
    let reach = if args.submit { Reach::MayNavigate } else { Reach::InPlace };
    on_tab(&session, TabUse::PAGE.settling(reach), |OnTab { live, tab }| async move {
        let object = element(&live, &tab, &args.target).await?;
        let name = type_into(&live, &tab, &object, &args.text, args.append).await?;
        if args.submit {
            press(&live, &tab, "Enter").await?;
        }
        Ok(format!(
            "Typed {} characters into {name}{}.",
            args.text.chars().count(),
            if args.submit { " and pressed Enter" } else { "" }
        ))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FillArgs {
    /// The fields, filled in order.
    fields: Vec<Field>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Field {
    /// Field ref.
    #[serde(rename = "ref")]
    target: String,
    /// Text; true/false for checkboxes, radios and switches; option label or value for selects.
    value: FieldValue,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum FieldValue {
    Bool(bool),
    Text(String),
    Number(f64),
}

async fn fill_form(session: Ctx, args: FillArgs) -> Outcome {
    if args.fields.is_empty() {
        return Err(refuse(ErrorCode::InvalidArguments, "fields: give at least one field"));
    }
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let mut done = Vec::new();
        for (i, field) in args.fields.iter().enumerate() {
            let object = element(&live, &tab, &field.target).await.map_err(|e| at_field(i, e))?;
            let kind = helper::field_kind(&live, &tab, &object).await?;
            let text_value = match &field.value {
                FieldValue::Text(s) => s.clone(),
                FieldValue::Bool(b) => b.to_string(),
                FieldValue::Number(n) => n.to_string(),
            };
            match kind {
                FieldKind::Toggle => {
                    let want = match &field.value {
                        FieldValue::Bool(b) => *b,
                        FieldValue::Text(s) if s == "true" || s == "false" => s == "true",
                        _ => {
                            return Err(refuse(
                                ErrorCode::InvalidArguments,
                                format!("fields[{i}].value: a checkbox takes true or false"),
                            ));
                        }
                    };
                    set_checked(&live, &tab, &field.target, want).await.map_err(|e| at_field(i, e))?;
                }
                FieldKind::Select => {
                    select_options(&live, &tab, &object, &[text_value]).await.map_err(|e| at_field(i, e))?;
                }
                FieldKind::File => {
                    return Err(refuse(
                        ErrorCode::InvalidArguments,
                        format!("fields[{i}]: {} is a file input; use file_upload", field.target),
                    ));
                }
                FieldKind::Text => {
                    type_into(&live, &tab, &object, &text_value, false).await.map_err(|e| at_field(i, e))?;
                }
            }
            done.push(field.target.clone());
        }
        Ok(format!("Filled {} field(s): {}.", done.len(), done.join(", ")))
    })
    .await
}

fn at_field(i: usize, e: BrowserError) -> BrowserError {
    e.context(&format!("fields[{i}]: "))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SelectArgs {
    /// Ref of the <select>.
    #[serde(rename = "ref")]
    target: String,
    /// Option labels or values; several for a multiple select.
    values: Vec<String>,
}

async fn select_options(live: &Live, tab: &Tab, object: &Element, values: &[String]) -> Result<String, BrowserError> {
    match helper::select_options(live, tab, object, values).await? {
        Selection::Picked { name, labels } => Ok(format!("Selected {} in {name}.", json!(labels))),
        Selection::Missing { value, options } => {
            Err(refuse(ErrorCode::NotFound, format!("no option {value:?}; options: {}", json!(options))))
        }
    }
}

async fn select(session: Ctx, args: SelectArgs) -> Outcome {
    if args.values.is_empty() {
        return Err(refuse(ErrorCode::InvalidArguments, "values: give at least one option"));
    }
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let object = element(&live, &tab, &args.target).await?;
        select_options(&live, &tab, &object, &args.values).await
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    /// Ref of the checkbox, radio or switch.
    #[serde(rename = "ref")]
    target: String,
    /// The state wanted (default true).
    #[serde(default = "yes")]
    checked: bool,
}

fn yes() -> bool {
    true
}

/// Clicks the toggle when its state differs from `want`; says what it did.
async fn set_checked(live: &Live, tab: &Tab, r: &str, want: bool) -> Result<String, BrowserError> {
    let object = element(live, tab, r).await?;
    let state = helper::toggle_state(live, tab, &object).await?;
    if state.checked == want {
        return Ok(format!("{r} was already {}.", if want { "checked" } else { "unchecked" }));
    }
    if !want && state.radio {
        return Err(refuse(
            ErrorCode::InvalidState,
            format!("{r} is a radio button: check another one of its group instead"),
        ));
    }
    let t = target(live, tab, r).await?;
    mouse(live, tab, "mouseMoved", (t.x, t.y), Button::Left, 0, 0).await?;
    mouse(live, tab, "mousePressed", (t.x, t.y), Button::Left, 1, 0).await?;
    mouse(live, tab, "mouseReleased", (t.x, t.y), Button::Left, 1, 0).await?;
    let now = helper::toggle_state(live, tab, &t.object).await?;
    if now.checked != want {
        return Err(refuse(
            ErrorCode::OperationFailed,
            format!("clicked {} but it did not become {}", t.name, if want { "checked" } else { "unchecked" }),
        ));
    }
    Ok(format!("{} {}.", if want { "Checked" } else { "Unchecked" }, t.name))
}

async fn check(session: Ctx, args: CheckArgs) -> Outcome {
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        set_checked(&live, &tab, &args.target, args.checked).await
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    /// Key or chord: Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Space, F1–F12, a single character; modifiers with +, e.g. Control+a, Shift+Tab.
    key: String,
    /// Focus this element first.
    #[serde(rename = "ref")]
    target: Option<String>,
}

/// The DOM `key`, `code`, Windows virtual key code and text of a key name.
fn key_info(key: &str) -> Option<(String, String, u32, Option<String>)> {
    let named: &[(&str, &str, u32, Option<&str>)] = &[
        ("Enter", "Enter", 13, Some("\r")),
        ("Tab", "Tab", 9, None),
        ("Escape", "Escape", 27, None),
        ("Backspace", "Backspace", 8, None),
        ("Delete", "Delete", 46, None),
        ("ArrowUp", "ArrowUp", 38, None),
        ("ArrowDown", "ArrowDown", 40, None),
        ("ArrowLeft", "ArrowLeft", 37, None),
        ("ArrowRight", "ArrowRight", 39, None),
        ("Home", "Home", 36, None),
        ("End", "End", 35, None),
        ("PageUp", "PageUp", 33, None),
        ("PageDown", "PageDown", 34, None),
        ("Space", "Space", 32, Some(" ")),
        ("Insert", "Insert", 45, None),
    ];
    if let Some((name, code, vk, text)) = named.iter().find(|(n, ..)| n.eq_ignore_ascii_case(key)) {
        let dom_key = if *name == "Space" { " " } else { name };
        return Some((dom_key.to_string(), code.to_string(), *vk, text.map(str::to_string)));
    }
    if let Some(n) = key.strip_prefix('F').and_then(|n| n.parse::<u32>().ok()).filter(|n| (1..=12).contains(n)) {
        return Some((key.to_string(), key.to_string(), 111 + n, None));
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return None };
    let upper = c.to_ascii_uppercase();
    let (code, vk) = if c.is_ascii_alphabetic() {
        (format!("Key{upper}"), upper as u32)
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as u32)
    } else {
        (String::new(), 0)
    };
    Some((c.to_string(), code, vk, Some(c.to_string())))
}

/// Names of keys to show when a key is not known.
const KEY_EXAMPLES: &str = "Enter, Tab, Escape, Backspace, Delete, ArrowDown, Home, PageDown, Space, F5, a single character like \"a\" or \"+\", or a chord like Control+a or Shift+Tab";

/// A key with its modifiers, checked before anything is pressed.
#[derive(Debug, PartialEq)]
struct Chord {
    dom_key: String,
    code: String,
    vk: u32,
    text: Option<String>,
    /// CDP modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
    modifiers: u32,
}

/// Reads a key or chord like `Control+Shift+a`; `Control++` is Control and the plus key.
fn parse_chord(chord: &str) -> Result<Chord, ToolFailure> {
    let bad = |what: String| fail(ErrorCode::InvalidArguments, format!("key: {what}; give {KEY_EXAMPLES}"));
    if chord.is_empty() {
        return Err(bad("is empty".to_string()));
    }
    let (mods, key) = match chord.strip_suffix("++") {
        // "Control++": the key is the plus sign.
        Some(mods) => (mods, "+"),
        None if chord == "+" => ("", "+"),
        None => match chord.rsplit_once('+') {
            Some((_, "")) => return Err(bad(format!("{chord:?} ends with + and no key"))),
            Some((mods, key)) => (mods, key),
            None => ("", chord),
        },
    };
    let mut modifiers = 0;
    for m in mods.split('+').filter(|_| !mods.is_empty()) {
        modifiers |= match m.to_ascii_lowercase().as_str() {
            "alt" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" => 4,
            "shift" => 8,
            other => return Err(bad(format!("unknown modifier {other:?} in {chord:?} (Alt, Control, Meta, Shift)"))),
        };
    }
    let (dom_key, code, vk, text) = key_info(key).ok_or_else(|| bad(format!("unknown key {key:?}")))?;
    // With Control/Alt/Meta held a character key types nothing.
    let text = if modifiers & 7 != 0 { None } else { text };
    Ok(Chord { dom_key, code, vk, text, modifiers })
}

/// Presses a key or chord by name (lumo's own: "Enter", "Delete").
async fn press(live: &Live, tab: &Tab, chord: &str) -> Result<(), BrowserError> {
    press_chord(live, tab, &parse_chord(chord)?).await
}

/// Presses a checked chord.
async fn press_chord(live: &Live, tab: &Tab, chord: &Chord) -> Result<(), BrowserError> {
    let Chord { dom_key, code, vk, text, modifiers: bits } = chord;
    let mut down = json!({"type": if text.is_some() { "keyDown" } else { "rawKeyDown" }, "key": dom_key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": bits});
    if let Some(text) = text {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    for (params, name) in [
        (down, "down"),
        (json!({"type": "keyUp", "key": dom_key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": bits}), "up"),
    ] {
        tokio::select! {
            result = live.call(tab, "Input.dispatchKeyEvent", params) => { result?; }
            _ = wait_until(tab, Duration::from_secs(3600), |s| s.dialog.is_some()) => {
                tracing::debug!(name, "a dialog opened during a key press");
                return Ok(());
            }
        }
    }
    Ok(())
}

async fn press_key(session: Ctx, args: KeyArgs) -> Outcome {
    let chord = parse_chord(&args.key)?;
    on_tab(&session, TabUse::PAGE.settling(Reach::MayNavigate), |OnTab { live, tab }| async move {
        let mut on = String::new();
        if let Some(r) = &args.target {
            let object = element(&live, &tab, r).await?;
            let name = helper::focus(&live, &tab, &object).await?;
            on = format!(" on {name}");
        }
        press_chord(&live, &tab, &chord).await?;
        Ok(format!("Pressed {}{on}.", args.key))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ScrollArgs {
    /// Element to scroll (its own scroll area), or with no dx/dy/to: bring it into view.
    #[serde(rename = "ref")]
    target: Option<String>,
    /// Horizontal pixels (positive = right).
    dx: Option<f64>,
    /// Vertical pixels (positive = down).
    dy: Option<f64>,
    /// Scroll to the top or the bottom.
    to: Option<Edge>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Edge {
    Top,
    Bottom,
}

async fn scroll(session: Ctx, args: ScrollArgs) -> Outcome {
    if args.target.is_none() && args.dx.is_none() && args.dy.is_none() && args.to.is_none() {
        return Err(refuse(ErrorCode::InvalidArguments, "give ref, dx/dy or to"));
    }
    let how = helper::Scroll {
        dx: args.dx.unwrap_or(0.0),
        dy: args.dy.unwrap_or(0.0),
        edge: args.to.map(|edge| match edge {
            Edge::Top => helper::Edge::Top,
            Edge::Bottom => helper::Edge::Bottom,
        }),
        into_view: args.target.is_some() && args.dx.is_none() && args.dy.is_none() && args.to.is_none(),
    };
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let said = match &args.target {
            Some(r) => {
                let object = element(&live, &tab, r).await?;
                helper::scroll_element(&live, &tab, &object, &how).await?
            }
            None => helper::scroll_page(&live, &tab, &how).await?,
        };
        Ok(format!("{said}."))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::parse_chord;

    #[test]
    fn chords_parse_and_empty_or_unknown_keys_do_not() {
        let plus = parse_chord("Control++").expect("Control and plus");
        assert_eq!((plus.dom_key.as_str(), plus.modifiers), ("+", 2));
        assert_eq!(parse_chord("+").expect("plus").dom_key, "+");
        let tab = parse_chord("shift+tab").expect("Shift+Tab");
        assert_eq!((tab.dom_key.as_str(), tab.modifiers), ("Tab", 8));
        assert_eq!(parse_chord("Control+Shift+a").expect("a chord").modifiers, 10);
        assert_eq!(parse_chord("Space").expect("space").text.as_deref(), Some(" "));
        for bad in ["", "Control+", "Shift++x", "Entr", "Hyper+x", "F13", "a+b"] {
            let message = parse_chord(bad).expect_err(bad).message;
            assert!(message.starts_with("key: ") && message.contains("ArrowDown"), "{bad:?}: {message}");
        }
    }
}

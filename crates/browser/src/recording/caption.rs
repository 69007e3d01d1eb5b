//! Captions of a recording: the words that say which step a frame shows
//! (`3 click e12 "Submit"`), made from the tool call, and drawn into the frame
//! with the 8x8 bitmap font of the `font8x8` crate.
//!
//! A caption names the tool and its target, never what was typed or run:
//! recordings are shown to people, and typed text may be a password.

use serde_json::Value;

/// Longest caption, in characters, before it is cut.
const MAX_CHARS: usize = 96;

/// Pixel size of one font pixel (the font is 8x8: glyphs are 16x16 on screen).
pub(crate) const SCALE: usize = 2;
/// Height of the caption bar under each frame.
pub(crate) const BAR_HEIGHT: usize = 8 * SCALE + 8;
const BAR_RGB: [u8; 3] = [0x20, 0x22, 0x28];
const TEXT_RGB: [u8; 3] = [0xff, 0xff, 0xff];

/// The caption of a call of `tool` with `args` (the element's name, when lumo
/// could read it, as `label`).
pub(crate) fn of_call(tool: &str, args: &Value, label: Option<&str>) -> String {
    let s = |key: &str| args.get(key).and_then(Value::as_str);
    let verb = tool.strip_prefix("page_").or_else(|| tool.strip_prefix("browser_")).unwrap_or(tool);
    let mut words = match tool {
        "browser_navigate" => match (s("url"), s("go")) {
            (Some(url), _) => format!("navigate {}", short_url(url)),
            (None, Some(go)) => format!("navigate {go}"),
            _ => "navigate".to_string(),
        },
        "browser_tabs" => format!("tabs {}", s("action").unwrap_or("list")),
        "page_press_key" => format!("press {}", s("key").unwrap_or_default()),
        "page_drag" => format!("drag {} to {}", s("from").unwrap_or("?"), s("to").unwrap_or("?")),
        "page_fill_form" => {
            let n = args.get("fields").and_then(Value::as_array).map_or(0, Vec::len);
            format!("fill form ({n} field{})", if n == 1 { "" } else { "s" })
        }
        "page_scroll" => match (s("ref"), s("to")) {
            (Some(r), _) => format!("scroll to {r}"),
            (None, Some(to)) => format!("scroll {to}"),
            _ => "scroll".to_string(),
        },
        "webmcp_call" => format!("page tool {}", s("name").unwrap_or("?")),
        _ if tool.starts_with("webmcp_") && tool != "webmcp_list" => {
            format!("page tool {}", &tool["webmcp_".len()..])
        }
        _ => match s("ref") {
            Some(r) => format!("{} {r}", verb.replace('_', " ")),
            None => verb.replace('_', " "),
        },
    };
    if let Some(label) = label.map(str::trim).filter(|l| !l.is_empty()) {
        words.push_str(&format!(" \"{label}\""));
    }
    cut(&words, MAX_CHARS)
}

/// `http://127.0.0.1:8080/a/b?q` → `127.0.0.1:8080/a/b` (no scheme, query or fragment:
/// a query can carry a token).
fn short_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) if u.host_str().is_some() => {
            let host = u.host_str().unwrap_or_default();
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{host}{port}{}", u.path())
        }
        Ok(u) => u.scheme().to_string() + ":",
        Err(_) => "?".to_string(),
    }
}

/// `text` cut to `max` characters, with `...` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{kept}...")
}

/// Draws the caption bar with `text` at row `top` of an RGB image `width` wide.
pub(crate) fn draw_bar(rgb: &mut [u8], width: usize, top: usize, text: &str) {
    let height = rgb.len() / 3 / width.max(1);
    for y in top..(top + BAR_HEIGHT).min(height) {
        for x in 0..width {
            let at = (y * width + x) * 3;
            rgb[at..at + 3].copy_from_slice(&BAR_RGB);
        }
    }
    let glyph_width = 8 * SCALE;
    let fits = width.saturating_sub(8) / glyph_width;
    let text = cut(text, fits);
    let (x0, y0) = (4, top + (BAR_HEIGHT - 8 * SCALE) / 2);
    for (i, c) in text.chars().enumerate() {
        let glyph = glyph(c);
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) == 0 {
                    continue;
                }
                for dy in 0..SCALE {
                    for dx in 0..SCALE {
                        let (x, y) = (x0 + i * glyph_width + col * SCALE + dx, y0 + row * SCALE + dy);
                        if x < width && y < height {
                            let at = (y * width + x) * 3;
                            rgb[at..at + 3].copy_from_slice(&TEXT_RGB);
                        }
                    }
                }
            }
        }
    }
}

/// The 8x8 glyph of `c` (bit 0 of each row byte is the leftmost pixel); `?` for
/// characters the font lacks.
fn glyph(c: char) -> [u8; 8] {
    let code = c as usize;
    match code {
        0x20..=0x7e => font8x8::legacy::BASIC_LEGACY[code],
        0xa0..=0xff => font8x8::legacy::LATIN_LEGACY[code - 0xa0],
        _ => font8x8::legacy::BASIC_LEGACY[usize::from(b'?')],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn captions_name_the_tool_and_its_target_never_the_text() {
        assert_eq!(of_call("page_click", &json!({"ref": "e12"}), Some("Submit")), "click e12 \"Submit\"");
        assert_eq!(of_call("page_type", &json!({"ref": "e3", "text": "hunter2"}), None), "type e3");
        assert_eq!(
            of_call("browser_navigate", &json!({"url": "http://127.0.0.1:81/login.html?token=x"}), None),
            "navigate 127.0.0.1:81/login.html"
        );
        assert_eq!(of_call("page_press_key", &json!({"key": "Enter"}), None), "press Enter");
        assert_eq!(of_call("webmcp_buy", &json!({"item": "x"}), None), "page tool buy");
        assert_eq!(of_call("page_fill_form", &json!({"fields": [1, 2]}), None), "fill form (2 fields)");
        assert_eq!(cut(&"x".repeat(200), 10), "xxxxxxx...");
    }

    #[test]
    fn the_bar_is_drawn_within_the_image() {
        let (w, h) = (40, BAR_HEIGHT + 2);
        let mut rgb = vec![0u8; w * h * 3];
        draw_bar(&mut rgb, w, 2, "Hi there, a long caption");
        assert!(rgb[..w * 2 * 3].iter().all(|&b| b == 0), "rows above the bar untouched");
        assert!(rgb.chunks(3).any(|p| p == TEXT_RGB), "some text pixels");
        assert!(rgb.chunks(3).any(|p| p == BAR_RGB), "bar pixels");
    }
}

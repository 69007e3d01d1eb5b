//! Bounding text for answers: every cut lands on a character boundary and
//! says so, and sizes read the same everywhere (`1.2 KB`). The browser tools,
//! the gate and the MCP front all cut text with these, never by hand.

/// The longest prefix of `text` within `max` bytes (on a character boundary),
/// and whether anything was cut.
pub fn clip(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// [`clip`], with `…` appended when something was cut.
pub fn clip_marked(text: &str, max: usize) -> String {
    match clip(text, max) {
        (kept, true) => format!("{kept}…"),
        (kept, false) => kept.to_string(),
    }
}

/// Cuts `text` in place to at most `max` bytes (on a character boundary);
/// returns whether it cut.
pub fn truncate(text: &mut String, max: usize) -> bool {
    let end = clip(text, max).0.len();
    let cut = end < text.len();
    text.truncate(end);
    cut
}

/// `312 B`, `1.2 KB`, `3.4 MB` (decimal units).
pub fn human_bytes(n: f64) -> String {
    if n < 1000.0 {
        format!("{n:.0} B")
    } else if n < 1_000_000.0 {
        format!("{:.1} KB", n / 1000.0)
    } else {
        format!("{:.1} MB", n / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_land_on_character_boundaries() {
        assert_eq!(clip("héllo", 2), ("h", true));
        assert_eq!(clip("hello", 5), ("hello", false));
        assert_eq!(clip_marked("héllo", 3), "hé…");
        assert_eq!(clip_marked("hi", 3), "hi");
        let mut s = "aé".to_string();
        assert!(truncate(&mut s, 2));
        assert_eq!(s, "a");
        assert!(!truncate(&mut s, 5));
    }

    #[test]
    fn sizes_read_in_decimal_units() {
        assert_eq!(human_bytes(312.0), "312 B");
        assert_eq!(human_bytes(1234.0), "1.2 KB");
        assert_eq!(human_bytes(3_400_000.0), "3.4 MB");
    }
}

//! The `Log` domain of one tab: the browser's own console messages (failed
//! loads, blocked ports, CSP violations, interventions), marked as the
//! browser's in the console log.

use serde_json::Value;

use super::runtime::console_level;
use super::state::{CONSOLE_CAP, ConsoleEntry, TabState, push_capped};

/// Applies one `Log.*` event; returns whether it changed anything.
pub(super) fn decode(s: &mut TabState, method: &str, params: &Value) -> bool {
    let entry = &params["entry"];
    // Not the 404 of the favicon the browser looks for by itself on every site without one:
    // the page never asked for it.
    let favicon = entry["source"] == "network" && entry["url"].as_str().is_some_and(|u| u.ends_with("/favicon.ico"));
    if method != "Log.entryAdded" || favicon {
        return false;
    }
    let location = match (entry["url"].as_str().filter(|u| !u.is_empty()), entry["lineNumber"].as_i64()) {
        (Some(url), Some(line)) => format!("{url}:{}", line + 1),
        (Some(url), None) => url.to_string(),
        (None, _) => String::new(),
    };
    let level = match entry["level"].as_str().unwrap_or("info") {
        "verbose" => "debug",
        other => other,
    };
    let entry = ConsoleEntry {
        level: console_level(level),
        text: entry["text"].as_str().unwrap_or_default().to_string(),
        location,
        browser_source: Some(entry["source"].as_str().unwrap_or("other").to_string()),
    };
    push_capped(&mut s.console, entry, CONSOLE_CAP);
    true
}

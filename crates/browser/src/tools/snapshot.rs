//! Reading the page: `page_snapshot` (a terse outline with refs) and `page_find`.

use lumo_protocol::{ErrorCode, ToolFailure};
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::{BrowserError, refuse};
use crate::helper::{self, FindQuery, Found, SnapshotOptions};
use crate::page::{check_ref, child_frames, ref_frame, stale_ref};
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Hints, Outcome, Tool, ToolOutput, fail};

/// The default byte budget of a snapshot: enough for a 5,000-element page in
/// lumo's terse format, small enough to leave the model room to think.
pub(crate) const DEFAULT_SNAPSHOT_BYTES: usize = 100_000;
const MAX_SNAPSHOT_BYTES: usize = 2_000_000;

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "page_snapshot",
            "Read the page as a terse outline: text as it reads, links as [words][e12], other controls as role \"name\" [e12]; refs are for other page_* tools. A table row shaped like the row above it drops role words (name [e12]). A link without words shows where it goes in short, [][e7](host/path); a link repeated (same words and target) is [words]: use the ref above. A subtree (ref) shows every link target. Headings (#) have no ref; page_find gives one (its subtree is the section).",
            Hints::READ,
            snapshot,
        )
        .untrusted(),
        Tool::new(
            "page_find",
            "Find elements by text, role or regex; returns matches with refs and context.",
            Hints::READ,
            find,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SnapshotArgs {
    /// Only the subtree of this ref; a heading's ref reads its section (up to the next heading of its level or above).
    #[serde(rename = "ref")]
    root: Option<String>,
    /// Only actionable elements, as a flat list.
    #[serde(default)]
    interactive: bool,
    /// Only what is inside the viewport.
    #[serde(default)]
    viewport: bool,
    /// Byte budget of the answer (default 100000).
    #[schemars(range(min = 200, max = 2_000_000))]
    max_bytes: Option<usize>,
    /// Start at this line: the continuation of a snapshot cut by the budget (its marker gives the number).
    #[serde(default)]
    offset: usize,
}

async fn snapshot(session: Ctx, args: SnapshotArgs) -> Outcome {
    if let Some(r) = &args.root {
        check_ref(r)?;
    }
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_SNAPSHOT_BYTES);
    if !(200..=MAX_SNAPSHOT_BYTES).contains(&max_bytes) {
        return Err(refuse(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside 200–{MAX_SNAPSHOT_BYTES}"),
        ));
    }
    on_tab(&session, TabUse::PAGE, |on| snapshot_on(on, args, max_bytes)).await
}

async fn snapshot_on(OnTab { live, tab }: OnTab, args: SnapshotArgs, max_bytes: usize) -> Outcome {
    let offset = args.offset;
    let options = |max_bytes: usize, offset: usize| SnapshotOptions {
        root: args.root.as_deref(),
        interactive: args.interactive,
        viewport: args.viewport,
        max_bytes,
        offset,
    };
    // A subtree ref names its frame (and must be this tab's); a whole-page snapshot starts in the main frame.
    let root_frame = match args.root.as_deref() {
        Some(r) => ref_frame(&live, &tab, r)?,
        None => None,
    };
    let Some(tree) = helper::snapshot(&live, &tab, root_frame, &options(max_bytes, offset)).await? else {
        return Err(stale_ref(args.root.as_deref().unwrap_or_default()).into());
    };
    let mut body = tree.text;
    if body.is_empty() {
        // Say why, rather than answer with nothing.
        let lines = tree.lines;
        body = match (&args.root, args.interactive, args.viewport) {
            _ if offset > 0 => format!("(nothing from line {offset}: this snapshot has {lines} lines)"),
            (Some(r), ..) => format!("(nothing to show under {r}: it and its contents are hidden or empty)"),
            (None, true, _) => "(no actionable elements)".to_string(),
            (None, _, true) => "(nothing visible in the viewport)".to_string(),
            _ => "(the page is empty)".to_string(),
        };
    }
    let mut truncated = tree.truncated;
    if args.root.is_none() {
        // Cross-origin frames run in other processes: snapshot each and put it under its <iframe>.
        for (n, _) in child_frames(&tab) {
            let left = max_bytes.saturating_sub(body.len());
            let Ok(helper::FrameOwner { target: owner, .. }) = helper::frame_owner(&live, &tab, n).await else {
                continue;
            };
            // A frame's content goes where its <iframe> line is: in a continuation, only if that line is in it.
            let modes = args.interactive || args.viewport;
            if !modes && (offset > 0 || truncated) && !body.contains(&format!("[{owner}]")) {
                continue;
            }
            if left < 200 {
                truncated = true;
                continue;
            }
            let Ok(Some(child)) = helper::snapshot(&live, &tab, Some(n), &options(left, 0)).await else { continue };
            truncated |= child.truncated;
            body = nest_under(&body, &owner, &child.text);
        }
    }
    if truncated {
        let next = u64::try_from(tree.next).ok().filter(|n| *n > 0);
        let how = match next {
            Some(n) => format!("the rest starts at line {n}: page_snapshot with offset={n} (same other arguments)"),
            None => "more below".to_string(),
        };
        body.push_str(&format!(
            "\n[truncated at the {max_bytes}-byte budget; {how}; or narrow it: page_find, a subtree (ref), interactive or viewport, or a larger max_bytes]"
        ));
    }
    let url = tab.state().url.clone();
    let title = tree.title;
    // The URL is the page's (a fragment can hold a token): it goes in the fenced part.
    let text = "Snapshot:".to_string();
    let header = if title.is_empty() { format!("url: {url}\n") } else { format!("url: {url}\ntitle: {title}\n") };
    Ok(ToolOutput::text(text).with_page_text(format!("{header}{body}")))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    /// Case-insensitive text contained in the element's name, value or text.
    text: Option<String>,
    /// ARIA role, e.g. button, link, textbox, heading, row.
    role: Option<String>,
    /// Regular expression (case-insensitive) matched against the same text. Rust `regex` syntax, which
    /// matches in linear time: like JavaScript's, without lookaround or backreferences.
    regex: Option<String>,
    /// Most matches to return (default 20, at most 200).
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

async fn find(session: Ctx, args: FindArgs) -> Outcome {
    if args.text.is_none() && args.role.is_none() && args.regex.is_none() {
        return Err(refuse(ErrorCode::InvalidArguments, "give at least one of text, role or regex"));
    }
    let limit = args.limit.unwrap_or(20);
    if !(1..=200).contains(&limit) {
        return Err(refuse(ErrorCode::InvalidArguments, format!("limit: {limit} is outside 1–200")));
    }
    let regex = args.regex.as_deref().map(compile).transpose()?;
    on_tab(&session, TabUse::PAGE, |on| find_on(on, args, limit, regex)).await
}

async fn find_on(OnTab { live, tab }: OnTab, args: FindArgs, limit: u32, regex: Option<Regex>) -> Outcome {
    let query = FindQuery { text: args.text.as_deref(), role: args.role.as_deref(), regex: regex.is_some(), limit };
    let result = find_in(&live, &tab, None, &query, regex.as_ref()).await?;
    let mut total = result.total;
    let mut lines: Vec<String> = result.text.lines().map(str::to_string).collect();
    for (n, _) in child_frames(&tab) {
        let Ok(found) = find_in(&live, &tab, Some(n), &query, regex.as_ref()).await else { continue };
        total += found.total;
        lines.extend(found.text.lines().map(|l| format!("{l} (frame f{n})")));
    }
    lines.truncate(limit as usize);
    let body = lines.join("\n");
    let text = match total {
        0 => "No match. Try other words, a role, or page_snapshot.".to_string(),
        n if n > u64::from(limit) => format!("{n} matches, first {limit}:"),
        n => format!("{n} match{}:", if n == 1 { "" } else { "es" }),
    };
    let out = ToolOutput::text(text).with_structured(json!({"total": total}));
    Ok(if body.is_empty() { out } else { out.with_page_text(body) })
}

/// The longest regex `page_find` takes, in bytes.
const MAX_REGEX_LEN: usize = 1000;

/// Compiles `page_find`'s regex for the `regex` crate, whose matching time is
/// linear in the text: a JavaScript RegExp like `^(a+)+$` backtracks for
/// minutes on "aaaa…b" and holds the tab's script thread (issue 8 item 7).
fn compile(pattern: &str) -> Result<Regex, ToolFailure> {
    if pattern.len() > MAX_REGEX_LEN {
        return Err(fail(
            ErrorCode::InvalidArguments,
            format!("regex: {} bytes is over the {MAX_REGEX_LEN}-byte limit", pattern.len()),
        ));
    }
    RegexBuilder::new(pattern).case_insensitive(true).size_limit(1 << 20).build().map_err(|e| {
        // The crate's message draws the pattern with a caret over lines; its last line says what is wrong.
        let text = e.to_string();
        let what = text.lines().last().unwrap_or(&text).trim().trim_start_matches("error: ");
        fail(
            ErrorCode::InvalidArguments,
            format!("regex: {what} in {pattern:?} (Rust regex syntax: like JavaScript's, without lookaround or backreferences)"),
        )
    })
}

/// `page_find` in one frame. With a regex, the page hands over the text of
/// each candidate, lumo matches it here, and the page reports the hits.
async fn find_in(
    live: &Live,
    tab: &Tab,
    child: Option<u32>,
    query: &FindQuery<'_>,
    regex: Option<&Regex>,
) -> Result<Found, BrowserError> {
    let Some(regex) = regex else { return helper::find(live, tab, child, query).await };
    let hays = helper::find_candidates(live, tab, child, query).await?;
    let matched: Vec<usize> = hays.iter().enumerate().filter(|(_, hay)| regex.is_match(hay)).map(|(i, _)| i).collect();
    helper::find_pick(live, tab, child, &matched, query.limit).await
}

/// Puts `child` (a frame's snapshot) under the line carrying `[owner]`, one level deeper.
fn nest_under(body: &str, owner: &str, child: &str) -> String {
    if child.is_empty() {
        return body.to_string();
    }
    let marker = format!("[{owner}]");
    let mut out = String::with_capacity(body.len() + child.len() + 64);
    let mut placed = false;
    for line in body.lines() {
        out.push_str(line);
        out.push('\n');
        if !placed && line.contains(&marker) {
            let indent = " ".repeat(line.len() - line.trim_start().len() + 1);
            for child_line in child.lines() {
                out.push_str(&indent);
                out.push_str(child_line);
                out.push('\n');
            }
            placed = true;
        }
    }
    if !placed {
        // The <iframe> line itself was left out (interactive or viewport mode): keep the content, labelled.
        out.push_str(&format!("iframe {marker}\n"));
        for child_line in child.lines() {
            out.push(' ');
            out.push_str(child_line);
            out.push('\n');
        }
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::{compile, nest_under};

    #[test]
    fn find_regexes_match_linearly_and_bad_ones_say_why() {
        let evil = compile("^(a+)+$").expect("compiles");
        let hay = format!("{}b", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!evil.is_match(&hay));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert!(compile("^DELETE").expect("compiles").is_match("delete everything"));
        let unclosed = compile("(unclosed").expect_err("invalid").message;
        assert!(unclosed.starts_with("regex: unclosed group in \"(unclosed\""), "{unclosed}");
        let lookahead = compile("a(?=b)").expect_err("unsupported").message;
        assert!(lookahead.contains("look-around"), "{lookahead}");
        assert!(compile(&"a".repeat(1001)).is_err());
    }

    #[test]
    fn frame_content_goes_under_its_iframe() {
        let body = "# A [e1]\n iframe \"x\" [e2]\nbutton \"B\" [e3]";
        let nested = nest_under(body, "e2", "button \"In\" [f1e1]");
        assert_eq!(nested, "# A [e1]\n iframe \"x\" [e2]\n  button \"In\" [f1e1]\nbutton \"B\" [e3]");
        assert!(nest_under(body, "e9", "x").ends_with("iframe [e9]\n x"));
    }
}

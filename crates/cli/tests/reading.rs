//! A faithful snapshot (issue 13 item 1): every word a person can see reaches
//! `page_snapshot`. Each fixture reproduces one way real pages lost their
//! words: an article inside a layout-table cell, words between links in a
//! cell, long list items and a clickable card with a whole post in it.

mod common;

use std::collections::HashMap;

use common::{FixtureServer, Lumo, ref_in};
use serde_json::json;

/// Lowercase word counts, as the real-pages benchmark counts them.
fn words(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// The words of `passage` that `snapshot` is missing (as a multiset).
fn missing(passage: &str, snapshot: &str) -> Vec<String> {
    let have = words(snapshot);
    let mut out: Vec<String> =
        words(passage).into_iter().filter(|(w, n)| have.get(w).copied().unwrap_or(0) < *n).map(|(w, _)| w).collect();
    out.sort();
    out
}

/// The visible text of the page's body, read in the page.
async fn body_text(lumo: &Lumo) -> String {
    lumo.eval("document.body.innerText.replace(/\\s+/g, ' ')").await
}

async fn snapshot_of(page: &str) -> (String, String, Lumo, FixtureServer) {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url(page)).await;
    let snapshot = lumo.snapshot().await;
    let text = body_text(&lumo).await;
    (snapshot, text, lumo, server)
}

/// LWN's weekly edition kept 5% of its words: the article sat in a layout
/// table cell, which was cut to ~120 characters as part of a "row".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn article_in_a_layout_table_cell_keeps_every_word() {
    let (snapshot, text, lumo, _server) = snapshot_of("reading-layout-table.html").await;
    let lost = missing(&text, &snapshot);
    assert!(lost.is_empty(), "words lost: {lost:?}\n{snapshot}");
    for end in ["firstparagraphend", "secondparagraphend", "listpointend"] {
        assert!(snapshot.contains(end), "{end} is missing from:\n{snapshot}");
    }
    // Read as content, not as table rows; the article's structure and links stay.
    let article = snapshot.lines().find(|l| l.contains("firstparagraphend")).unwrap_or_default();
    assert!(!article.contains('|'), "a layout table was shown as rows:\n{snapshot}");
    assert!(snapshot.contains("# The first article of the edition"), "{snapshot}");
    ref_in(&snapshot, "[linked detail]");
    ref_in(&snapshot, "[Kernel]");
    // A heading's ref (from page_find) reads its section: the article, without the navigation cell before it.
    let found = lumo.ok("page_find", json!({"role": "heading", "text": "The first article of the edition"})).await;
    let heading = found.ref_of("heading \"The first article of the edition\"");
    let section = lumo.ok("page_snapshot", json!({"ref": heading})).await.text();
    for end in ["firstparagraphend", "secondparagraphend", "listpointend"] {
        assert!(section.contains(end), "{end} is missing from the section:\n{section}");
    }
    assert!(!section.contains("Front page") && !section.contains("Weekly edition for"), "{section}");
    lumo.stop().await;
}

/// "Edition for 26, 2015 … The has bee…": a cell's words around its links
/// were rewritten without the links' words and cut to 80 characters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_around_links_in_a_cell_is_kept_in_order() {
    let (snapshot, text, lumo, _server) = snapshot_of("reading-cell-links.html").await;
    let lost = missing(&text, &snapshot);
    assert!(lost.is_empty(), "words lost: {lost:?}\n{snapshot}");
    let row = snapshot.lines().find(|l| l.contains("Edition for")).unwrap_or_default();
    let (edition, nov, date) = (row.find("Edition for"), row.find("[November]"), row.find("26, 2015"));
    assert!(edition < nov && nov < date && edition.is_some(), "the cell's words are out of order:\n{row}");
    assert!(row.contains("summarycellend"), "the long cell was cut:\n{row}");
    // A data table (header cells) stays one line per row, with its links' refs.
    assert!(row.contains('|'), "{snapshot}");
    ref_in(&snapshot, "[the rest]");
    lumo.stop().await;
}

/// List items and a clickable card were named by their text cut to 100
/// characters, and the card's contents were not walked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_list_items_and_clickable_cards_are_not_cut() {
    let (snapshot, text, lumo, _server) = snapshot_of("reading-long-list.html").await;
    let lost = missing(&text, &snapshot);
    assert!(lost.is_empty(), "words lost: {lost:?}\n{snapshot}");
    assert!(snapshot.contains("listitemend"), "{snapshot}");
    assert!(snapshot.contains("cardpostend"), "{snapshot}");
    // The card keeps its ref, and the link inside it gets its own.
    ref_in(&snapshot, "generic");
    ref_in(&snapshot, "[Reply]");
    lumo.stop().await;
}

/// A snapshot cut by the byte budget said only "more below": the marker now
/// names the line where the rest starts, and `offset` reads on from there
/// until every word has been seen, with the same refs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_snapshot_says_where_the_rest_starts_and_offset_reads_on() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("reading-layout-table.html")).await;
    let text = body_text(&lumo).await;
    let whole = lumo.snapshot().await;
    let mut read = String::new();
    let mut args = json!({"max_bytes": 400});
    for call in 0.. {
        assert!(call < 20, "the continuation never ended:\n{read}");
        let part = lumo.ok("page_snapshot", args.clone()).await.text();
        read.push_str(&part);
        let Some(at) = part.find("page_snapshot with offset=") else { break };
        let digits: String =
            part[at + "page_snapshot with offset=".len()..].chars().take_while(char::is_ascii_digit).collect();
        args = json!({"max_bytes": 400, "offset": digits.parse::<usize>().expect("a line number")});
    }
    let lost = missing(&text, &read);
    assert!(lost.is_empty(), "words lost across the parts: {lost:?}\n{read}");
    assert_eq!(ref_in(&read, "[linked detail]"), ref_in(&whole, "[linked detail]"));
    let past = lumo.ok("page_snapshot", json!({"offset": 10_000})).await.text();
    assert!(past.contains("nothing from line 10000"), "{past}");
    lumo.stop().await;
}

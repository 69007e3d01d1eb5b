//! `page_extract`'s rules for choosing the content (issue 13 item 3), each on
//! a small fixture shaped like the real page it was found on (Mozilla
//! Readability's test pages, `bench/run --extract`): every fixture holds words
//! only that rule keeps, and furniture that must stay out.

mod common;

use common::{FixtureServer, Lumo};
use serde_json::json;

/// A fixture, the words its content must keep, the words that must stay out, and the rule.
struct Case {
    page: &'static str,
    keeps: &'static [&'static str],
    leaves_out: &'static [&'static str],
    rule: &'static str,
}

const CASES: &[Case] = &[
    Case {
        page: "veiled.html",
        keeps: &["Veilfirstword", "Veillastword"],
        leaves_out: &["Displaynoneword", "Home"],
        rule: "a body hidden by an anti-flicker `visibility: hidden` is read as it will show (display: none still out)",
    },
    Case {
        page: "wrapped-article.html",
        keeps: &["Wrapfirstword", "Wraplastword"],
        leaves_out: &["This page was printed"],
        rule: "a container named like furniture (site_header) that is mostly one <article> is not furniture",
    },
    Case {
        page: "feature-list.html",
        keeps: &["## Features and tools", "Page Inspector", "Featurelastword", "Get to know the features"],
        leaves_out: &["Download"],
        rule: "a container whose text is nearly all a list is judged as a list, not by its link density",
    },
    Case {
        page: "wrapped-paragraph.html",
        keeps: &["Lorem ipsum", "Atrootword", "## Foo", "Wrappedlastword"],
        leaves_out: &[],
        rule: "a <div> around a single paragraph is that paragraph when scoring, so the article around it wins",
    },
    Case {
        page: "download-button.html",
        keeps: &["Downloadfirstword", "Downloadlastword"],
        leaves_out: &["Free Download for Windows", "Commentword"],
        rule: "words inside a link (a download button's spans, class \"download-content\") score nothing",
    },
    Case {
        page: "download-button.html",
        keeps: &["Chart: [![A \\[bracketed\\] chart]](/gallery/chart)[e"],
        leaves_out: &["[!\\["],
        rule: "an image inside a link stays an image in the link's text, its alt escaped once",
    },
    Case {
        page: "list-items.html",
        keeps: &["## Listheadword the first thing", "Paragraph 6 of the story"],
        leaves_out: &["Promoword"],
        rule: "a sibling of the same kind as the top (same first class: items of one list) is joined to it",
    },
    Case {
        page: "lede.html",
        keeps: &["Ledeword", "Paragraph 6 of the story"],
        leaves_out: &[],
        rule: "a <div> of text only beside the top (a lede) is joined like a <p>",
    },
    Case {
        page: "image-list.html",
        keeps: &["- ![Imgalt one]", "- ![Imgalt three]", "Figcapword the first boat", "The second boat"],
        leaves_out: &[],
        rule: "a list of images, one to an item (a gallery), is content, not furniture",
    },
];

/// Title and byline as Mozilla Readability reads them when the page has no metadata for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_extract_finds_title_and_byline_in_the_page_as_readability_does() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("extract-rules/metadata.html")).await;
    let answer = lumo.ok("page_extract", json!({})).await;
    let s = answer.structured();
    // The document's title cut at its last separator only; the others stay as written.
    assert_eq!(s["title"], "Tide tables | Harbour notes", "{s}");
    // The menu whose class says "author" is too long for a name as written; the byline's itemprop=name is the name.
    assert_eq!(s["byline"], "Ada Fieldstone", "{s}");
    let md = answer.page_text();
    assert!(!md.contains("staff writer"), "the byline is metadata, not content:\n{md}");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_extract_keeps_the_article_that_each_rule_finds() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let mut failures = Vec::new();
    for case in CASES {
        lumo.open(&server.url(&format!("extract-rules/{}", case.page))).await;
        let md = lumo.ok("page_extract", json!({})).await.page_text();
        let body = md.split_once("\n---\n").map(|(_, b)| b).unwrap_or_default();
        let lost: Vec<_> = case.keeps.iter().filter(|w| !body.contains(*w)).collect();
        let leaked: Vec<_> = case.leaves_out.iter().filter(|w| body.contains(*w)).collect();
        if !lost.is_empty() || !leaked.is_empty() {
            failures.push(format!("{} ({}): lost {lost:?}, leaked {leaked:?}:\n{body}", case.page, case.rule));
        }
    }
    lumo.stop().await;
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! `page_extract` (issue 13 item 3): the main content as compact Markdown with
//! metadata, refs that other page tools take, cross-origin frames in place,
//! a byte budget with continuation; and real pages nobody here wrote
//! (Mozilla Readability's test pages from the `readabilityrs` crate).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{FixtureServer, Lumo, ref_in};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_extract_reads_the_article_as_markdown_with_refs_frames_and_a_budget() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("extract-article.html")).await;
    // The cross-origin frame loads after the page: wait for its words.
    lumo.ok("page_wait", json!({"text": "Scriptaddedwords"})).await;
    let mut md = String::new();
    for _ in 0..50 {
        let answer = lumo.ok("page_extract", json!({})).await;
        md = answer.page_text();
        if md.contains("Framewords") {
            let s = answer.structured();
            assert_eq!(s["title"], "Tide tables of the north coast", "{s}");
            assert_eq!(s["byline"], "Ada Fieldstone");
            assert_eq!(s["lang"], "en-GB");
            assert_eq!(s["published"], "2026-11-20T08:30:00Z");
            assert_eq!(s["untrustedData"], true, "page content is marked untrusted: {s}");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(md.contains("Framewords"), "the cross-origin frame's content is missing:\n{md}");
    for want in [
        "title: Tide tables of the north coast",
        "byline: Ada Fieldstone",
        "lang: en-GB",
        "published: 2026-11-20T08:30:00Z",
        "## What changed",
        "- The survey of the sandbanks was repeated with new sonar.",
        "- Two gauges moved to the *outer* breakwater.",
        "![Chart of the north coast sandbanks]",
        "High water at three ports",
        "| Port | Morning | Evening |",
        "| Saltmarsh | 06:31 | 18:58 |",
        "Scriptaddedwords",
        "Lastparagraphend",
    ] {
        assert!(md.contains(want), "{want:?} is missing from:\n{md}");
    }
    // The page's furniture stays out; the title is not repeated as a heading.
    for furniture in ["Sidebarlinkone", "footerwords", "Share this", "Sport", "# Tide tables"] {
        assert!(!md.contains(furniture), "{furniture:?} leaked into:\n{md}");
    }
    // The frame's content sits in place of its <iframe>, before the last paragraph.
    let (frame, last) = (md.find("Framewords"), md.find("Lastparagraphend"));
    assert!(frame < last, "the frame is out of place:\n{md}");
    // Links carry their target (same-origin shortened to the path) and a ref.
    let tables_link = ref_in(&md, "[full tables](/tides/2026)");
    ref_in(&md, "[hydrographic office](https://example.org/office)");
    assert!(md.contains("[Gauge history](/gauge/history)[f"), "a frame's link has the frame's ref form:\n{md}");
    // Its refs are page_snapshot's: the same element, the same ref; and they act.
    let subscribe = ref_in(&md, "[button: Subscribe]");
    let snapshot = lumo.snapshot().await;
    assert_eq!(ref_in(&snapshot, "button \"Subscribe\""), subscribe, "{snapshot}");
    assert_eq!(ref_in(&snapshot, "[full tables]"), tables_link);
    lumo.ok("page_click", json!({"ref": subscribe})).await;
    assert_eq!(lumo.eval("document.getElementById('subscribe').textContent").await, "Subscribed");

    // A small budget cuts at a block and says where to go on; reading on gives it all, in order.
    let mut all = String::new();
    let mut offset = 0;
    let mut calls = 0;
    loop {
        let answer = lumo.ok("page_extract", json!({"max_bytes": 400, "offset": offset})).await;
        let text = answer.page_text();
        let body = text.split_once("---\n").map(|(_, b)| b).unwrap_or_default();
        calls += 1;
        let Some(at) = body.find("[truncated at the 400-byte budget; the rest starts at block ") else {
            all.push_str(body);
            break;
        };
        assert!(at <= 400, "a piece is over its budget ({at} bytes):\n{body}");
        all.push_str(&body[..at]);
        let rest = &body[at..];
        let n: String = rest["[truncated at the 400-byte budget; the rest starts at block ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        assert!(rest.contains(&format!("page_extract with offset={n}")), "{rest}");
        offset = n.parse().expect("a block number");
        assert!(calls < 40, "no end in sight:\n{all}");
    }
    assert!(calls > 2, "400 bytes should take several calls, took {calls}");
    for want in ["## What changed", "| Gullhaven | 06:47 | 19:15 |", "Scriptaddedwords", "Lastparagraphend"] {
        assert!(all.contains(want), "{want:?} lost across continuations:\n{all}");
    }
    assert!(all.find("## What changed") < all.find("Lastparagraphend"));
    let past = lumo.ok("page_extract", json!({"offset": 10_000})).await.page_text();
    assert!(past.contains("(nothing from block 10000: the content has"), "{past}");
    let refused = lumo.fails("page_extract", json!({"max_bytes": 10}), "invalid_arguments").await;
    assert!(
        refused.error_message().contains("max_bytes: 10 is less than the minimum of 200"),
        "{}",
        refused.error_message()
    );
    lumo.stop().await;
}

// ------------------------------------------------------------------ real pages

const READABILITYRS: &str = "0.1.4";
const CSP: &str = "default-src 'self' 'unsafe-inline' data:";

/// Readability's test pages, from the `readabilityrs` crate in cargo's registry
/// (fetched with `cargo fetch` into a scratch manifest when missing; never committed).
fn test_pages() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let find = || {
        std::fs::read_dir(home.join("registry/src")).ok()?.flatten().find_map(|index| {
            let pages = index.path().join(format!("readabilityrs-{READABILITYRS}/tests/test-pages"));
            pages.is_dir().then_some(pages)
        })
    };
    if let Some(pages) = find() {
        return pages;
    }
    let scratch = std::env::temp_dir().join(format!("lumo-readabilityrs-fetch-{}", std::process::id()));
    std::fs::create_dir_all(scratch.join("src")).expect("scratch dir");
    std::fs::write(
        scratch.join("Cargo.toml"),
        format!("[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\nreadabilityrs = \"={READABILITYRS}\"\n\n[workspace]\n"),
    )
    .expect("manifest");
    std::fs::write(scratch.join("src/lib.rs"), "").expect("lib.rs");
    let status = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["fetch", "--quiet", "--manifest-path"])
        .arg(scratch.join("Cargo.toml"))
        .status()
        .expect("run cargo fetch");
    assert!(status.success(), "cargo fetch readabilityrs failed");
    find().expect("readabilityrs test pages after cargo fetch")
}

/// Serves `root` on 127.0.0.1 with a Content-Security-Policy that keeps every request on loopback.
async fn serve_with_csp(root: PathBuf) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let root = root.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let path = head.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
                let file = (!path.split('/').any(|p| p == "..")).then(|| root.join(&path)).filter(|p| p.is_file());
                let (status, body) = match file {
                    Some(f) => ("200 OK", tokio::fs::read(f).await.unwrap_or_default()),
                    None => ("404 Not Found", b"not found".to_vec()),
                };
                let header = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: {CSP}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(header.as_bytes()).await;
                let _ = stream.write_all(&body).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (port, task)
}

/// The page with the CSP first in its <head>.
fn with_csp(source: &str) -> String {
    let meta = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">");
    let lower = source.to_ascii_lowercase();
    match lower.find("<head").and_then(|at| lower[at..].find('>').map(|end| at + end + 1)) {
        Some(at) => format!("{}{meta}{}", &source[..at], &source[at..]),
        None => format!("<head>{meta}</head>{source}"),
    }
}

/// The words of an HTML document's text (tags, scripts and styles left out), lowercased.
fn html_words(html: &str) -> HashMap<String, usize> {
    let no_code = regex_lite(html);
    words(&no_code)
}

fn regex_lite(html: &str) -> String {
    // Drop <script>/<style> blocks, then tags; decode the few entities that split words.
    let mut out = String::with_capacity(html.len());
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        if lower[i..].starts_with("<script") || lower[i..].starts_with("<style") {
            let close = if lower[i..].starts_with("<script") { "</script>" } else { "</style>" };
            i = lower[i..].find(close).map_or(html.len(), |e| i + e + close.len());
            continue;
        }
        if html.as_bytes()[i] == b'<' {
            i = lower[i..].find('>').map_or(html.len(), |e| i + e + 1);
            out.push(' ');
            continue;
        }
        let next = html[i..].find('<').map_or(html.len(), |e| i + e);
        out.push_str(&html[i..next]);
        i = next;
    }
    out.replace("&amp;", "&").replace("&nbsp;", " ").replace("&#39;", "'").replace("&quot;", "\"")
}

fn words(text: &str) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for w in text.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()) {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// The Markdown's words as prose: link targets and refs left out.
fn prose(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at]);
        rest = rest[at + 2..].split_once(')').map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    let mut cleaned = String::with_capacity(out.len());
    let mut it = out.as_str();
    while let Some(at) = it.find("][") {
        cleaned.push_str(&it[..at]);
        it = it[at + 2..].split_once(']').map_or("", |(_, r)| r);
    }
    cleaned.push_str(it);
    cleaned
}

fn recall(expected: &HashMap<String, usize>, got: &HashMap<String, usize>) -> f64 {
    let total: usize = expected.values().sum();
    let kept: usize = expected.iter().map(|(w, n)| (*n).min(got.get(w).copied().unwrap_or(0))).sum();
    kept as f64 / total.max(1) as f64
}

/// Real articles keep their words, at a size bounded by the article's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_readability_pages_keep_the_article_at_a_bounded_size() {
    let pages = test_pages();
    let served = std::env::temp_dir().join(format!("lumo-extract-pages-{}", std::process::id()));
    let cases = ["ars-1", "wikipedia", "lwn-1", "medium-1", "nytimes-1"];
    for case in cases {
        let source = std::fs::read(pages.join(case).join("source.html")).expect("source.html");
        std::fs::create_dir_all(served.join(case)).expect("dir");
        std::fs::write(served.join(case).join("index.html"), with_csp(&String::from_utf8_lossy(&source)))
            .expect("write");
    }
    let (port, task) = serve_with_csp(served.clone()).await;
    let lumo = Lumo::start().await;
    let mut report = Vec::new();
    for case in cases {
        lumo.open(&format!("http://127.0.0.1:{port}/{case}/index.html")).await;
        let answer = lumo.ok("page_extract", json!({"max_bytes": 2_000_000})).await;
        let md = answer.page_text();
        let expected_html = std::fs::read_to_string(pages.join(case).join("expected.html")).expect("expected.html");
        let expected = html_words(&expected_html);
        let expected_text: String = regex_lite(&expected_html).split_whitespace().collect::<Vec<_>>().join(" ");
        let kept = recall(&expected, &words(&prose(&md)));
        let ratio = md.len() as f64 / expected_text.len().max(1) as f64;
        report.push(format!("{case}: {:.1}% of the words, {:.2}× the article's size", kept * 100.0, ratio));
        assert!(kept >= 0.9, "{case}: only {:.1}% of the article's words:\n{md}", kept * 100.0);
        assert!(ratio <= 2.0, "{case}: {ratio:.2}× the article's size:\n{md}");
    }
    eprintln!("{}", report.join("\n"));
    lumo.stop().await;
    task.abort();
    let _ = std::fs::remove_dir_all(&served);
    let _: &Path = &pages;
}

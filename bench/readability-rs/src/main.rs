//! Runs readabilityrs on each `<pages>/<case>/source.html` named on the
//! command line and prints one JSON object per line: the case, the article's
//! text and its metadata, and the time it took.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(pages) = args.next() else {
        eprintln!("usage: lumo-bench-readability PAGES_DIR CASE…");
        std::process::exit(2);
    };
    for case in args {
        let path = std::path::Path::new(&pages).join(&case).join("source.html");
        let html = match std::fs::read(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                println!("{}", serde_json::json!({"case": case, "error": e.to_string()}));
                continue;
            }
        };
        let started = Instant::now();
        // The URL Mozilla's own test suite gives every page.
        let article = readabilityrs::Readability::new(&html, Some("http://fakehost/test/page.html"), None)
            .ok()
            .and_then(|r| r.parse());
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let line = match article {
            Some(a) => serde_json::json!({
                "case": case, "ms": ms, "text": a.text_content, "content_bytes": a.content.as_ref().map_or(0, String::len),
                "title": a.title, "byline": a.byline, "lang": a.lang, "published": a.published_time,
            }),
            None => serde_json::json!({"case": case, "ms": ms, "error": "no article"}),
        };
        println!("{line}");
    }
}

//! `page_record` and `lumo call --record`, end to end: a real `lumo serve`
//! driven through rmcp against headless Chromium records a five-step session;
//! the GIF it writes is decoded here, frame by frame, to check that it plays,
//! that its captions change with the steps and that it stays small.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{FixtureServer, Lumo, ref_in};
use serde_json::json;

const PASSWORD: &str = "secret";

/// What a GIF holds, decoded and composited the way a viewer shows it.
struct Played {
    frames: usize,
    width: usize,
    height: usize,
    /// The bottom `bar` rows of each shown picture, distinct ones in order of appearance.
    bars: Vec<Vec<u8>>,
}

fn play(path: &Path, bar: usize) -> Played {
    let file = std::fs::File::open(path).expect("open the GIF");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(file).expect("a GIF header");
    let (width, height) = (usize::from(decoder.width()), usize::from(decoder.height()));
    let mut canvas = vec![0u8; width * height * 4];
    let mut frames = 0;
    let mut bars: Vec<Vec<u8>> = Vec::new();
    while let Some(frame) = decoder.read_next_frame().expect("a readable frame") {
        frames += 1;
        let (left, top, w) = (usize::from(frame.left), usize::from(frame.top), usize::from(frame.width));
        for (i, pixel) in frame.buffer.chunks_exact(4).enumerate() {
            let (x, y) = (left + i % w, top + i / w);
            if pixel[3] > 0 && x < width && y < height {
                let at = (y * width + x) * 4;
                canvas[at..at + 4].copy_from_slice(pixel);
            }
        }
        let bottom = canvas[(height - bar) * width * 4..].to_vec();
        if !bars.contains(&bottom) {
            bars.push(bottom);
        }
    }
    Played { frames, width, height, bars }
}

/// Files in the recordings folder, partial ones included.
fn recordings(data: &Path) -> Vec<PathBuf> {
    let dir = data.join("recordings");
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    found.sort();
    found
}

async fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !path.is_file() {
        assert!(Instant::now() < deadline, "{} was not written", path.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_five_step_session_becomes_a_small_captioned_gif_and_every_end_finishes_the_file() {
    let server = FixtureServer::start().await;
    let data = tempfile::tempdir().expect("tempdir");
    let lumo = Lumo::start_with(&[], &[("LUMO_DATA_DIR", data.path().as_os_str())]).await;

    // Stop without start: a clear error.
    let nothing = lumo.fails("page_record", json!({"action": "stop"}), "invalid_state").await;
    assert!(nothing.error_message().contains("page_record {action: \"start\"}"), "{}", nothing.error_message());

    lumo.open(&server.url("login.html")).await;
    let snapshot = lumo.snapshot().await;
    let (user, password) = (ref_in(&snapshot, "textbox \"Username\""), ref_in(&snapshot, "textbox \"Password\""));
    let (remember, submit) = (ref_in(&snapshot, "checkbox \"Remember me\""), ref_in(&snapshot, "button \"Sign in\""));

    let started = lumo.ok("page_record", json!({"action": "start"})).await;
    let path = PathBuf::from(started.structured()["path"].as_str().expect("the path it will write"));
    assert!(path.starts_with(data.path().join("recordings")), "{}", path.display());
    let again = lumo.fails("page_record", json!({"action": "start"}), "invalid_state").await;
    assert!(again.error_message().contains("already running"), "{}", again.error_message());

    lumo.ok("page_type", json!({"ref": user, "text": "ada"})).await;
    lumo.ok("page_type", json!({"ref": password, "text": PASSWORD})).await;
    lumo.ok("page_check", json!({"ref": remember})).await;
    lumo.ok("page_click", json!({"ref": submit})).await;
    lumo.ok("page_wait", json!({"text": "Welcome, ada"})).await;
    let stopped = lumo.ok("page_record", json!({"action": "stop"})).await;
    let saved = stopped.structured();
    assert_eq!(saved["path"], path.to_str().expect("utf-8"), "{saved}");
    assert_eq!(saved["steps"], 5, "{saved}");
    let captions: Vec<&str> =
        saved["captions"].as_array().expect("captions").iter().filter_map(|c| c.as_str()).collect();
    assert_eq!(captions[0], format!("1 type {user} \"Username\""), "{captions:?}");
    assert_eq!(captions[3], format!("4 click {submit} \"Sign in\""), "{captions:?}");
    assert!(!captions.iter().any(|c| c.contains(PASSWORD)), "typed text stays out of captions: {captions:?}");
    let preview = stopped.images();
    assert_eq!(preview.len(), 1, "a preview image");
    assert_eq!(preview[0].0, "image/gif");
    assert!(preview[0].1.len() < 100_000, "the preview is small: {} base64 bytes", preview[0].1.len());

    let bytes = std::fs::metadata(&path).expect("the GIF exists").len();
    assert!(bytes < 2_000_000, "{bytes} bytes");
    assert_eq!(saved["bytes"], bytes);
    let played = play(&path, 24);
    eprintln!("five steps: {bytes} bytes, {} frames, {}x{}", played.frames, played.width, played.height);
    assert!(played.frames >= 5, "{} frames", played.frames);
    assert!(played.width <= 800 && played.width >= 200, "{}", played.width);
    assert!(played.bars.len() >= 5, "each step's caption shows: {} distinct caption bars", played.bars.len());
    assert_eq!(recordings(data.path()), std::slice::from_ref(&path), "no partial file left");

    // A recording ends with its tab: the file is written without a stop.
    lumo.ok("browser_tabs", json!({"action": "new", "url": server.url("login.html")})).await;
    let started = lumo.ok("page_record", json!({"action": "start"})).await;
    let closing = PathBuf::from(started.structured()["path"].as_str().expect("path"));
    lumo.ok("page_scroll", json!({"dy": 200})).await;
    // Close defaults to the selected tab: the recorded one.
    lumo.ok("browser_tabs", json!({"action": "close"})).await;
    wait_for_file(&closing).await;
    let ended = lumo.ok("page_record", json!({"action": "stop"})).await;
    assert_eq!(ended.structured()["ended"], "its tab closed", "{}", ended.text());
    assert!(ended.text().contains("It had ended when its tab closed"), "{}", ended.text());
    assert!(play(&closing, 24).frames >= 1);

    // And when lumo stops.
    lumo.ok("page_record", json!({"action": "start"})).await;
    lumo.ok("page_press_key", json!({"key": "Tab"})).await;
    lumo.stop().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while recordings(data.path()).len() < 3 {
        assert!(Instant::now() < deadline, "lumo stopped without saving: {:?}", recordings(data.path()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let all = recordings(data.path());
    assert!(all.iter().all(|p| p.extension().is_some_and(|e| e == "gif")), "only whole GIFs: {all:?}");
    assert!(play(all.iter().find(|p| **p != path && **p != closing).expect("the third"), 24).frames >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lumo_call_records_a_sequence_of_calls_to_a_file() {
    let server = FixtureServer::start().await;
    let data = tempfile::tempdir().expect("tempdir");
    let gif = data.path().join("demo.gif");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .arg("call")
        .arg("--record")
        .arg(&gif)
        .args([
            "browser_navigate",
            &json!({"url": server.url("login.html")}).to_string(),
            "page_find",
            r#"{"text": "Username"}"#,
            "page_press_key",
            r#"{"key": "Tab"}"#,
            "page_scroll",
            r#"{"dy": 100}"#,
        ])
        .env("LUMO_DATA_DIR", data.path())
        .env("LUMO_AUDIT_DB", data.path().join("audit.db"))
        .env("LUMO_BROWSER", "/usr/lib/chromium/chromium")
        .output()
        .await
        .expect("run lumo call");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("recorded 4 calls to"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Username"), "each answer is printed: {stdout}");
    let played = play(&gif, 24);
    assert!(played.frames >= 4, "{} frames", played.frames);
    assert!(recordings(data.path()).is_empty(), "moved, not copied: {:?}", recordings(data.path()));

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["call", r#"{"url": "x"}"#])
        .output()
        .expect("run lumo call");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no tool before them"));
}

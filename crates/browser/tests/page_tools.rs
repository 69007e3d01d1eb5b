//! The page tools that wait, capture, answer dialogs, upload files and drag
//! (page_wait, page_screenshot, page_dialog, file_upload, page_drag), called at
//! the library level against a real headless Chromium and inline pages from
//! the test kit's fixture server. One test per tool family.

use std::time::{Duration, Instant};

use base64::Engine;
use lumo_browser::ToolOutput;
use lumo_protocol::ErrorCode;
use lumo_testkit::{Browser, FixtureServer, Route};
use serde_json::json;

#[tokio::test]
async fn page_wait_waits_for_text_refs_network_and_time() {
    let server = FixtureServer::builder()
        .no_files()
        .route("/", Route::html(
            r#"<title>wait</title><h1>Waiting</h1><p id="gone">Loading…</p><button id="b">Temporary</button>
            <script>
              function go() {
                setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Ready  NOW'; document.body.append(p); }, 300);
                setTimeout(() => document.getElementById('gone').remove(), 300);
                setTimeout(() => document.getElementById('b').remove(), 300);
              }
            </script>"#))
        .route("/slow", Route::new("text/plain", "slow").delay(600))
        .start()
        .await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    let button = b.ref_of("Temporary").await;
    b.eval("go(); 1").await;

    let started = Instant::now();
    let out = b.ok("page_wait", json!({"text": "ready now"})).await;
    assert!(out.text.starts_with("Text \"ready now\" is on the page"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(3));
    let out = b.ok("page_wait", json!({"text_gone": "Loading"})).await;
    assert!(out.text.contains("is gone"), "{}", out.text);
    let out = b.ok("page_wait", json!({"ref_gone": button})).await;
    assert!(out.text.contains(&format!("{button} is gone")), "{}", out.text);
    // Headings carry no ref in a snapshot: page_find gives one.
    let heading = b.found_ref("heading", "Waiting").await;
    let out = b.ok("page_wait", json!({"ref": heading})).await;
    assert!(out.text.contains("is shown"), "{}", out.text);

    // A slow request keeps the network busy for 600 ms, then idle takes 500 ms more.
    b.eval("fetch('/slow'); 1").await;
    let started = Instant::now();
    let out = b.ok("page_wait", json!({"network_idle": true})).await;
    assert!(out.text.starts_with("The network is idle"), "{}", out.text);
    assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
    let started = Instant::now();
    let out = b.ok("page_wait", json!({"time_ms": 150})).await;
    assert_eq!(out.text, "Waited 150 ms.");
    assert!(started.elapsed() >= Duration::from_millis(150));

    b.fails(
        "page_wait",
        json!({"text": "never there", "timeout_ms": 300}),
        ErrorCode::Timeout,
        "still not on the page",
    )
    .await;
    b.fails("page_wait", json!({"text_gone": "Waiting", "timeout_ms": 200}), ErrorCode::Timeout, "still on the page")
        .await;

    b.fails("page_wait", json!({}), ErrorCode::InvalidArguments, "exactly one").await;
    b.fails("page_wait", json!({"text": "a", "time_ms": 5}), ErrorCode::InvalidArguments, "text, time_ms").await;
    b.fails("page_wait", json!({"time_ms": 40000}), ErrorCode::InvalidArguments, "time_ms:").await;
    b.fails("page_wait", json!({"text": "a", "timeout_ms": 0}), ErrorCode::InvalidArguments, "timeout_ms:").await;
    b.fails("page_wait", json!({"text": " "}), ErrorCode::InvalidArguments, "text:").await;
    b.fails("page_wait", json!({"ref": "x1"}), ErrorCode::InvalidArguments, "ref:").await;
    b.fails("page_wait", json!({"ref_gone": "bad"}), ErrorCode::InvalidArguments, "ref_gone:").await;
    b.fails("page_wait", json!({"txt": "a"}), ErrorCode::InvalidArguments, "txt").await;
    b.close().await;
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

fn decode(out: &ToolOutput) -> (String, Vec<u8>) {
    assert_eq!(out.images.len(), 1, "{out:?}");
    let image = &out.images[0];
    (image.mime.clone(), base64::engine::general_purpose::STANDARD.decode(&image.data).expect("base64"))
}

#[tokio::test]
async fn page_screenshot_captures_viewport_element_and_full_page_within_budget() {
    let noise: String = (0..3000)
        .map(|i| format!("<span style='color:#{:06x}'>{i:x}</span> ", (i * 2_654_435_761u64) & 0xFF_FFFF))
        .collect();
    let server = FixtureServer::builder()
        .no_files()
        .route(
            "/",
            Route::html(format!(
                r#"<title>shot</title><body style="margin:0"><button style="width:120px;height:40px">Save</button>
            <div style="height:3000px;background:linear-gradient(red,blue)">{noise}</div></body>"#
            )),
        )
        .start()
        .await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;

    let out = b.ok("page_screenshot", json!({})).await;
    let (mime, bytes) = decode(&out);
    assert_eq!(mime, "image/png");
    let (w, h) = png_size(&bytes);
    assert!(w >= 800 && h >= 500, "{w}×{h}");
    assert!(out.text.starts_with(&format!("Screenshot of the viewport: {w}×{h} PNG")), "{}", out.text);

    let save = b.ref_of("Save").await;
    let out = b.ok("page_screenshot", json!({"ref": save})).await;
    let (_, element) = decode(&out);
    let (ew, eh) = png_size(&element);
    assert!((118..=122).contains(&ew) && (38..=42).contains(&eh), "{ew}×{eh}");
    assert!(element.len() < bytes.len());
    assert!(out.text.starts_with(&format!("Screenshot of {save}: ")), "{}", out.text);

    let out = b.ok("page_screenshot", json!({"format": "jpeg", "quality": 50})).await;
    let (mime, jpeg) = decode(&out);
    assert_eq!(mime, "image/jpeg");
    assert!(jpeg.starts_with(&[0xFF, 0xD8]));
    assert!(out.text.contains(&format!("{w}×{h} JPEG")), "{}", out.text);

    // The full page is over a small budget: it comes back as a smaller JPEG.
    let out = b.ok("page_screenshot", json!({"full_page": true, "max_bytes": 60000})).await;
    assert!(out.images[0].data.len() <= 60000);
    assert_eq!(out.images[0].mime, "image/jpeg");
    assert!(out.text.contains("the full page") && out.text.contains("shrunk to fit max_bytes"), "{}", out.text);
    let out = b.ok("page_screenshot", json!({"full_page": true, "max_bytes": 20_000_000})).await;
    let (_, full) = decode(&out);
    let (fw, fh) = png_size(&full);
    assert!(fh >= 3000 && fw >= w, "{fw}×{fh}");

    b.fails("page_screenshot", json!({"ref": save, "full_page": true}), ErrorCode::InvalidArguments, "full_page:")
        .await;
    b.fails("page_screenshot", json!({"quality": 50}), ErrorCode::InvalidArguments, "quality:").await;
    b.fails("page_screenshot", json!({"format": "jpeg", "quality": 0}), ErrorCode::InvalidArguments, "quality:").await;
    b.fails("page_screenshot", json!({"max_bytes": 5}), ErrorCode::InvalidArguments, "max_bytes:").await;
    b.fails("page_screenshot", json!({"ref": "nope"}), ErrorCode::InvalidArguments, "ref:").await;
    b.fails("page_screenshot", json!({"ref": "e99999"}), ErrorCode::NotFound, "never given out").await;
    b.close().await;
}

#[tokio::test]
async fn page_dialog_answers_alert_confirm_and_prompt() {
    let server = FixtureServer::builder()
        .no_files()
        .route(
            "/",
            Route::html(
                r#"<title>dialogs</title>
        <button onclick="alert('Hello there')">Alert</button>
        <button onclick="document.getElementById('out').textContent = String(confirm('Sure?'))">Confirm</button>
        <button onclick="document.getElementById('out').textContent = String(prompt('Name?', 'anon'))">Prompt</button>
        <p id="out">none</p>"#,
            ),
        )
        .start()
        .await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    b.fails("page_dialog", json!({"accept": true}), ErrorCode::InvalidState, "No dialog is open.").await;

    let alert = b.ref_of("\"Alert\"").await;
    let out = b.ok("page_click", json!({"ref": alert})).await;
    assert!(out.text.contains("A dialog is open (alert)"), "{}", out.text);
    // The page's own words are page content, fenced by the gate, never lumo's text.
    assert!(!out.text.contains("Hello there"), "{}", out.text);
    assert!(
        out.page_text.as_deref().unwrap_or_default().contains("dialog message: \"Hello there\""),
        "{:?}",
        out.page_text
    );
    // Other tools keep telling the agent while it is open.
    let out = b.ok("devtools_console", json!({})).await;
    assert!(out.text.contains("dialog is open"), "{}", out.text);
    let out = b.ok("page_wait", json!({"time_ms": 1})).await;
    assert!(out.text.contains("answer it with page_dialog"), "{}", out.text);
    b.fails("page_snapshot", json!({}), ErrorCode::InvalidState, "page_dialog").await;
    b.fails("page_dialog", json!({"accept": true, "prompt_text": "x"}), ErrorCode::InvalidArguments, "prompt_text:")
        .await;
    let out = b.ok("page_dialog", json!({"accept": true})).await;
    assert!(out.text.starts_with("Accepted the alert dialog."), "{}", out.text);
    assert!(!out.text.contains("dialog is open"), "{}", out.text);
    assert!(out.page_text.as_deref().unwrap_or_default().contains("\"Hello there\""), "{:?}", out.page_text);

    let confirm = b.ref_of("\"Confirm\"").await;
    b.ok("page_click", json!({"ref": confirm})).await;
    let out = b.ok("page_dialog", json!({"accept": false})).await;
    assert!(out.text.starts_with("Dismissed the confirm dialog."), "{}", out.text);
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "false");
    b.ok("page_click", json!({"ref": confirm})).await;
    b.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "true");

    let prompt = b.ref_of("\"Prompt\"").await;
    b.ok("page_click", json!({"ref": prompt})).await;
    let out = b.ok("page_dialog", json!({"accept": true, "prompt_text": "lumo"})).await;
    assert!(out.text.starts_with("Accepted the prompt dialog with 4 characters."), "{}", out.text);
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "lumo");
    b.ok("page_click", json!({"ref": prompt})).await;
    b.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "anon");
    b.ok("page_click", json!({"ref": prompt})).await;
    b.ok("page_dialog", json!({"accept": false})).await;
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "null");

    // A dialog opened by evaluated code: the evaluation reports it instead of hanging.
    let out = b.ok("devtools_evaluate", json!({"expression": "alert('from code')"})).await;
    assert!(out.text.contains("opened a dialog") && out.text.contains("A dialog is open (alert)"), "{}", out.text);
    b.ok("page_dialog", json!({"accept": true})).await;
    b.fails("page_dialog", json!({"accept": true}), ErrorCode::InvalidState, "No dialog is open.").await;
    b.fails("page_dialog", json!({}), ErrorCode::InvalidArguments, "accept").await;
    b.close().await;
}

#[tokio::test]
async fn file_upload_by_ref_and_through_the_file_chooser() {
    let dir = std::env::temp_dir().join(format!("lumo-upload-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let a = dir.join("a.txt");
    let c = dir.join("c.txt");
    std::fs::write(&a, "alpha").expect("write");
    std::fs::write(&c, "gamma").expect("write");
    let (a, c) = (a.display().to_string(), c.display().to_string());
    let server = FixtureServer::builder().no_files().route("/", Route::html(
        r#"<title>upload</title>
        <input type="file" id="one" aria-label="single">
        <input type="file" id="many" aria-label="several" multiple>
        <button>Not a file input</button>
        <p id="out"></p>
        <script>
          for (const id of ['one', 'many']) document.getElementById(id).addEventListener('change', (e) =>
            document.getElementById('out').textContent = id + ':' + Array.from(e.target.files, (f) => f.name + '/' + f.size).join(','));
        </script>"#,
    )).start().await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    let single = b.ref_of("\"single\"").await;
    let several = b.ref_of("\"several\"").await;
    let button = b.ref_of("Not a file input").await;

    let out = b.ok("file_upload", json!({"paths": [a], "ref": single})).await;
    assert_eq!(out.text.lines().next(), Some(format!("Chose 1 file(s) for {single}: a.txt.").as_str()), "{}", out.text);
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "one:a.txt/5");
    b.ok("file_upload", json!({"paths": [a, c], "ref": several})).await;
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "many:a.txt/5,c.txt/5");
    b.fails("file_upload", json!({"paths": [a, c], "ref": single}), ErrorCode::InvalidArguments, "paths: 2 files")
        .await;
    b.fails("file_upload", json!({"paths": [a], "ref": button}), ErrorCode::InvalidState, "not a file input").await;

    // Clicking the input opens a file chooser, which lumo intercepts and reports.
    let out = b.ok("page_click", json!({"ref": single})).await;
    assert!(out.text.contains("A file chooser is open (one file)"), "{}", out.text);
    let out = b.ok("file_upload", json!({"paths": [c]})).await;
    assert!(out.text.starts_with("Chose 1 file(s) in the file chooser: c.txt."), "{}", out.text);
    assert!(!out.text.contains("file chooser is open"), "{}", out.text);
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "one:c.txt/5");
    let out = b.ok("page_click", json!({"ref": several})).await;
    assert!(out.text.contains("A file chooser is open (several files)"), "{}", out.text);
    b.ok("file_upload", json!({"paths": [c, a]})).await;
    assert_eq!(b.eval("document.getElementById('out').textContent").await, "many:c.txt/5,a.txt/5");

    b.fails("file_upload", json!({"paths": [a]}), ErrorCode::InvalidArguments, "ref: no file chooser").await;
    b.fails("file_upload", json!({"paths": []}), ErrorCode::InvalidArguments, "paths:").await;
    b.fails(
        "file_upload",
        json!({"paths": ["a.txt"], "ref": single}),
        ErrorCode::InvalidArguments,
        "paths[0]: a.txt is not an absolute path",
    )
    .await;
    b.fails(
        "file_upload",
        json!({"paths": [a, "/no/such/file"], "ref": single}),
        ErrorCode::InvalidArguments,
        "paths[1]: /no/such/file does not exist",
    )
    .await;
    let folder = dir.display().to_string();
    b.fails("file_upload", json!({"paths": [folder], "ref": single}), ErrorCode::InvalidArguments, "is not a file")
        .await;
    b.fails("file_upload", json!({"paths": [a], "ref": "one"}), ErrorCode::InvalidArguments, "ref:").await;
    b.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn page_drag_drops_html5_draggables_and_drives_mouse_drags() {
    let server = FixtureServer::builder().no_files().route("/", Route::html(
        r#"<title>drag</title>
        <div id="card" draggable="true" role="button" aria-label="Card" style="width:80px;height:40px;background:#ccc">Card</div>
        <div id="bin" role="region" aria-label="Bin" style="margin-top:200px;width:200px;height:100px;background:#eee">Bin</div>
        <p id="out">nothing</p>
        <script>
          card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-1'));
          bin.addEventListener('dragover', (e) => e.preventDefault());
          bin.addEventListener('drop', (e) => { e.preventDefault(); out.textContent = 'dropped ' + e.dataTransfer.getData('text/plain'); });
        </script>"#,
    )).start().await;
    let base = server.base();
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    let card = b.ref_of("\"Card\"").await;
    let bin = b.ref_of("\"Bin\"").await;
    let out = b.ok("page_drag", json!({"from": card, "to": bin})).await;
    assert!(out.text.starts_with("Dragged button \"Card\""), "{}", out.text);
    let result = b.ok("devtools_evaluate", json!({"expression": "out.textContent"})).await;
    assert!(result.page_text.as_deref().unwrap_or_default().contains("dropped card-1"), "{result:?}");
    b.close().await;
}

//! The wait, screenshot, dialog, upload, devtools and network tools against a
//! real headless Chromium and fixture pages from a tiny local HTTP server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use lumo_browser::{BrowserSource, Session, Tool, ToolOutput, ToolResult, builtin_tools};
use lumo_protocol::ErrorCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type Ctx = Arc<Session>;

/// One fixture: a path and what it answers.
struct Route {
    path: &'static str,
    mime: &'static str,
    body: String,
    status: u16,
    delay_ms: u64,
}

fn page(path: &'static str, html: &str) -> Route {
    Route { path, mime: "text/html; charset=utf-8", body: html.to_string(), status: 200, delay_ms: 0 }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Serves `routes` on 127.0.0.1 (any other path is a 404; `/echo` answers its request body).
async fn serve(routes: Vec<Route>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let head_end = loop {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    if let Some(i) = find(&buf, b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))
                    })
                    .unwrap_or(0usize);
                while buf.len() < head_end + length {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let path = head.split_whitespace().nth(1).unwrap_or("/").split('?').next().unwrap_or("/").to_string();
                let (status, mime, body, delay) = match routes.iter().find(|r| r.path == path) {
                    Some(r) if r.path == "/echo" => {
                        (200, r.mime, String::from_utf8_lossy(&buf[head_end..]).to_string(), r.delay_ms)
                    }
                    Some(r) => (r.status, r.mime, r.body.clone(), r.delay_ms),
                    None => (404, "text/plain", "not found".to_string(), 0),
                };
                tokio::time::sleep(Duration::from_millis(delay)).await;
                // A 3xx route's body is where it redirects to.
                let (location, body) = if (300..400).contains(&status) {
                    (format!("Location: {body}\r\n"), String::new())
                } else {
                    (String::new(), body)
                };
                let response = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: {mime}\r\nContent-Length: {}\r\n{location}X-Fixture: yes\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

struct Browser {
    session: Ctx,
    tools: Vec<Tool<Ctx>>,
}

impl Browser {
    fn new() -> Self {
        Self { session: Arc::new(Session::new(BrowserSource::Launch(Default::default()))), tools: builtin_tools() }
    }

    async fn call(&self, name: &str, args: Value) -> ToolResult {
        let tool = self.tools.iter().find(|t| t.spec.name == name).unwrap_or_else(|| panic!("no tool {name}"));
        tool.call(self.session.clone(), args).await
    }

    async fn ok(&self, name: &str, args: Value) -> ToolOutput {
        match self.call(name, args.clone()).await {
            Ok(out) => out,
            Err(e) => panic!("{name} {args}: {:?} {}", e.code, e.message),
        }
    }

    /// Expects a failure with `code` whose message contains `needle`.
    async fn fails(&self, name: &str, args: Value, code: ErrorCode, needle: &str) {
        match self.call(name, args.clone()).await {
            Ok(out) => panic!("{name} {args} should fail, answered {out:?}"),
            Err(e) => {
                assert_eq!(e.code, code, "{name} {args}: {}", e.message);
                assert!(e.message.contains(needle), "{name} {args}: {:?} lacks {needle:?}", e.message);
            }
        }
    }

    async fn open(&self, url: &str) {
        self.ok("browser_navigate", json!({"url": url})).await;
    }

    /// The value of a page expression, as devtools_evaluate shows it.
    async fn eval(&self, expression: &str) -> String {
        self.ok("devtools_evaluate", json!({"expression": expression})).await.page_text.unwrap_or_default()
    }

    /// The ref of the snapshot line that contains `needle`.
    async fn ref_of(&self, needle: &str) -> String {
        let snapshot = self.ok("page_snapshot", json!({})).await.page_text.unwrap_or_default();
        let line =
            snapshot.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in {snapshot}"));
        let start = line.find("[e").unwrap_or_else(|| panic!("no ref in {line}")) + 1;
        let end = start + line[start..].find(']').unwrap_or(0);
        line[start..end].to_string()
    }

    async fn close(self) {
        self.session.shutdown().await;
    }
}

#[tokio::test]
async fn page_wait_waits_for_text_refs_network_and_time() {
    let base = serve(vec![
        page(
            "/",
            r#"<title>wait</title><h1>Waiting</h1><p id="gone">Loading…</p><button id="b">Temporary</button>
            <script>
              function go() {
                setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Ready  NOW'; document.body.append(p); }, 300);
                setTimeout(() => document.getElementById('gone').remove(), 300);
                setTimeout(() => document.getElementById('b').remove(), 300);
              }
            </script>"#,
        ),
        Route { path: "/slow", mime: "text/plain", body: "slow".into(), status: 200, delay_ms: 600 },
    ])
    .await;
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
    let heading = b.ref_of("Waiting").await;
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
    let base = serve(vec![page(
        "/",
        &format!(
            r#"<title>shot</title><body style="margin:0"><button style="width:120px;height:40px">Save</button>
            <div style="height:3000px;background:linear-gradient(red,blue)">{noise}</div></body>"#
        ),
    )])
    .await;
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
    let base = serve(vec![page(
        "/",
        r#"<title>dialogs</title>
        <button onclick="alert('Hello there')">Alert</button>
        <button onclick="document.getElementById('out').textContent = String(confirm('Sure?'))">Confirm</button>
        <button onclick="document.getElementById('out').textContent = String(prompt('Name?', 'anon'))">Prompt</button>
        <p id="out">none</p>"#,
    )])
    .await;
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
    let base = serve(vec![page(
        "/",
        r#"<title>upload</title>
        <input type="file" id="one" aria-label="single">
        <input type="file" id="many" aria-label="several" multiple>
        <button>Not a file input</button>
        <p id="out"></p>
        <script>
          for (const id of ['one', 'many']) document.getElementById(id).addEventListener('change', (e) =>
            document.getElementById('out').textContent = id + ':' + Array.from(e.target.files, (f) => f.name + '/' + f.size).join(','));
        </script>"#,
    )])
    .await;
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
async fn devtools_console_and_evaluate() {
    let base = serve(vec![page(
        "/",
        r#"<title>devtools</title><h1 id="h">Heading</h1>
        <script>
          window.pageVar = 42;
          console.log('hello', 1, {a: 1});
          console.info('info line');
          console.debug('debug line');
          console.warn('careful');
          console.error('bad thing');
          console.log('again'); console.log('again'); console.log('again');
          console.log('x'.repeat(1000));
          setTimeout(() => { throw new Error('boom'); }, 0);
        </script>"#,
    )])
    .await;
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    b.ok("page_wait", json!({"time_ms": 100})).await;

    let out = b.ok("devtools_console", json!({})).await;
    let log = out.page_text.unwrap_or_default();
    assert!(out.text.starts_with("10 console messages, newest last:"), "{}", out.text);
    assert!(log.contains("[log] hello 1 {a: 1} (/:4)"), "{log}");
    assert!(log.contains("[info] info line") && log.contains("[debug] debug line"), "{log}");
    assert!(log.contains("[warning] careful") && log.contains("[error] bad thing"), "{log}");
    assert!(log.contains("[log] again (") && log.contains(") ×3"), "{log}");
    assert!(log.contains("Uncaught Error: boom") || log.contains("Error: boom"), "{log}");
    assert!(log.lines().all(|l| l.len() < 500), "{log}");
    assert!(log.lines().last().unwrap_or_default().contains("boom"), "{log}");

    let out = b.ok("devtools_console", json!({"level": "warning"})).await;
    let log = out.page_text.unwrap_or_default();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(!log.contains("[log]") && log.contains("[warning]") && log.contains("boom"), "{log}");
    let out = b.ok("devtools_console", json!({"limit": 1, "clear": true})).await;
    assert!(out.text.starts_with("Last 1 of 10"), "{}", out.text);
    assert!(out.page_text.unwrap_or_default().contains("boom"));
    let out = b.ok("devtools_console", json!({})).await;
    assert_eq!(out.text, "No console messages.");
    b.fails("devtools_console", json!({"limit": 0}), ErrorCode::InvalidArguments, "limit:").await;
    b.fails("devtools_console", json!({"level": "loud"}), ErrorCode::InvalidArguments, "loud").await;

    let out = b.ok("devtools_evaluate", json!({"expression": "1 + 2"})).await;
    assert_eq!(out.text, "Result (number):");
    assert_eq!(out.page_text.as_deref(), Some("3"));
    // The page's own world: its globals are visible.
    assert_eq!(b.eval("pageVar").await, "42");
    assert_eq!(
        b.eval("({a: 1, b: [1, 'two', null], f() {}})").await,
        r#"{"a":1,"b":[1,"two",null],"f":"[Function f]"}"#
    );
    assert_eq!(b.eval("await new Promise((r) => setTimeout(() => r('late'), 20))").await, "late");
    assert_eq!(b.eval("(() => { const a = {n: 1}; a.self = a; return a; })()").await, r#"{"n":1,"self":"[Circular]"}"#);
    assert_eq!(b.eval("document.querySelectorAll('h1')").await, r#"["<h1#h>"]"#);
    assert_eq!(b.eval("Promise.resolve(7)").await, "7");
    assert_eq!(b.eval("''").await, "\"\"");
    assert_eq!(b.eval("undefined").await, "undefined");
    assert_eq!(b.eval("10n ** 20n").await, "100000000000000000000n");
    let out = b.ok("devtools_evaluate", json!({"function": "() => document.title"})).await;
    assert_eq!(out.page_text.as_deref(), Some("devtools"));

    let heading = b.ref_of("Heading").await;
    let out = b
        .ok(
            "devtools_evaluate",
            json!({"function": "function (el) { return [this === el, el.id, window.pageVar]; }", "ref": heading}),
        )
        .await;
    assert_eq!(out.page_text.as_deref(), Some("[true,\"h\",42]"));

    let out = b.ok("devtools_evaluate", json!({"expression": "'é'.repeat(50000)", "max_bytes": 1001})).await;
    let body = out.page_text.unwrap_or_default();
    assert!(body.starts_with("éé") && body.contains("\n[cut at 1001 bytes of about 100.0 KB"), "{body}");
    assert!(body.len() < 1200);
    let out = b
        .ok("devtools_evaluate", json!({"expression": "Array.from({length: 10000}, (_, i) => i)", "max_bytes": 100}))
        .await;
    assert!(out.page_text.unwrap_or_default().contains("[cut at 100 bytes"));

    b.fails("devtools_evaluate", json!({"expression": "throw new Error('nope')"}), ErrorCode::OperationFailed, "nope")
        .await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "Promise.reject(new TypeError('later'))"}),
        ErrorCode::OperationFailed,
        "later",
    )
    .await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "missingName"}),
        ErrorCode::OperationFailed,
        "missingName is not defined",
    )
    .await;
    b.fails("devtools_evaluate", json!({}), ErrorCode::InvalidArguments, "exactly one").await;
    b.fails(
        "devtools_evaluate",
        json!({"expression": "1", "function": "() => 1"}),
        ErrorCode::InvalidArguments,
        "exactly one",
    )
    .await;
    b.fails("devtools_evaluate", json!({"expression": "1", "ref": heading}), ErrorCode::InvalidArguments, "ref:").await;
    b.fails("devtools_evaluate", json!({"function": "el => el", "ref": "h1"}), ErrorCode::InvalidArguments, "ref:")
        .await;
    b.fails("devtools_evaluate", json!({"expression": " "}), ErrorCode::InvalidArguments, "expression:").await;
    b.fails("devtools_evaluate", json!({"expression": "1", "max_bytes": 5}), ErrorCode::InvalidArguments, "max_bytes:")
        .await;
    b.fails(
        "devtools_evaluate",
        json!({"function": "el => el", "ref": "e99999"}),
        ErrorCode::NotFound,
        "never given out",
    )
    .await;
    b.close().await;
}

#[tokio::test]
async fn network_requests_list_filter_and_detail() {
    let big: String = format!("[{}]", (0..2000).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let base = serve(vec![
        page(
            "/",
            r#"<title>network</title><img src="/missing.png">
            <script>
              fetch('/data.json').then((r) => r.json()).then((d) => { document.title = 'got ' + d.items.length; });
              fetch('/echo', {method: 'POST', body: JSON.stringify({q: 'lumo'}), headers: {'Content-Type': 'application/json'}});
            </script>"#,
        ),
        Route { path: "/data.json", mime: "application/json", body: r#"{"items":[1,2,3]}"#.into(), status: 200, delay_ms: 0 },
        Route { path: "/big.json", mime: "application/json", body: big, status: 200, delay_ms: 0 },
        Route { path: "/echo", mime: "application/json", body: String::new(), status: 200, delay_ms: 0 },
        Route { path: "/hop", mime: "text/plain", body: "/data.json?hopped".into(), status: 302, delay_ms: 0 },
        Route { path: "/pixel.png", mime: "image/png", body: "\u{89}PNG\r\n\u{1a}\n\0\0\0".into(), status: 200, delay_ms: 0 },
    ])
    .await;
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    b.ok("page_wait", json!({"network_idle": true})).await;

    let out = b.ok("network_requests", json!({})).await;
    let list = out.page_text.unwrap_or_default();
    assert!(
        out.text.ends_with("requests since the page loaded (newest last; details: network_request {id}):"),
        "{}",
        out.text
    );
    let doc = list.lines().find(|l| l.contains(" document ")).unwrap_or_else(|| panic!("{list}"));
    assert!(doc.starts_with("#") && doc.contains(" GET 200 document http://127.0.0.1:"), "{doc}");
    assert!(list.lines().any(|l| l.contains("GET 404 image") && l.contains("/missing.png (")), "{list}");
    let data = list.lines().find(|l| l.contains("/data.json")).unwrap_or_else(|| panic!("{list}"));
    assert!(data.contains(" GET 200 fetch ") && data.ends_with(" B)"), "{data}");
    let data_id = data[1..data.find(' ').unwrap_or(1)].to_string();

    let out = b.ok("network_requests", json!({"type": "FETCH"})).await;
    let fetches = out.page_text.unwrap_or_default();
    assert_eq!(fetches.lines().count(), 2, "{fetches}");
    assert!(fetches.lines().all(|l| l.contains(" fetch ")), "{fetches}");
    let out = b.ok("network_requests", json!({"url": "data\\.json$"})).await;
    assert_eq!(out.page_text.unwrap_or_default().lines().count(), 1);
    let out = b.ok("network_requests", json!({"status": "4xx"})).await;
    let missing = out.page_text.unwrap_or_default();
    assert!(missing.contains("/missing.png") && !missing.contains("data.json"), "{missing}");
    let out = b.ok("network_requests", json!({"status": 404, "type": "image,xhr"})).await;
    assert!(out.page_text.unwrap_or_default().contains("/missing.png"));
    let out = b.ok("network_requests", json!({"status": "failed"})).await;
    assert!(out.text.starts_with("No matching requests"), "{}", out.text);
    let out = b.ok("network_requests", json!({"limit": 1})).await;
    assert!(out.text.starts_with("Last 1 of "), "{}", out.text);

    let out = b.ok("network_request", json!({"id": format!("#{data_id}"), "body": true})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(
        detail
            .starts_with(&format!("#{data_id} GET {base}/data.json\nstatus: 200, type: fetch, mime: application/json")),
        "{detail}"
    );
    assert!(detail.contains("response headers:\n") && detail.contains("  X-Fixture: yes"), "{detail}");
    assert!(
        detail.contains("request headers:\n  Referer: ") && detail.contains("  (not shown: User-Agent"),
        "{detail}"
    );
    assert!(detail.ends_with("body (17 B):\n{\"items\":[1,2,3]}"), "{detail}");
    let out = b.ok("network_request", json!({"id": data_id.parse::<u64>().expect("number")})).await;
    assert!(!out.page_text.unwrap_or_default().contains("body"));

    let out = b.ok("network_requests", json!({"url": "/echo"})).await;
    let echo = out.page_text.unwrap_or_default();
    let echo_id = echo[1..echo.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": echo_id, "body": true})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(detail.contains(" POST ") && detail.contains("post data (12 B):\n{\"q\":\"lumo\"}"), "{detail}");
    assert!(detail.ends_with("body (12 B):\n{\"q\":\"lumo\"}"), "{detail}");

    b.eval("fetch('/big.json'); fetch('/pixel.png'); 1").await;
    b.ok("page_wait", json!({"network_idle": true})).await;
    let out = b.ok("network_requests", json!({"url": "big"})).await;
    let line = out.page_text.unwrap_or_default();
    let big_id = line[1..line.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": big_id, "body": true, "max_bytes": 100})).await;
    let detail = out.page_text.unwrap_or_default();
    assert!(
        detail.contains("body (8.9 KB):\n[0,1,2,") && detail.ends_with("[cut at 100 bytes; raise max_bytes for more]"),
        "{detail}"
    );
    let out = b.ok("network_requests", json!({"url": "pixel"})).await;
    let line = out.page_text.unwrap_or_default();
    let pixel_id = line[1..line.find(' ').unwrap_or(1)].to_string();
    let out = b.ok("network_request", json!({"id": pixel_id, "body": true})).await;
    assert!(out.page_text.unwrap_or_default().contains("of image/png (binary, not shown)"));

    // A redirect is one entry (its last hop), and it does not keep the network busy.
    b.eval("fetch('/hop'); 1").await;
    let started = Instant::now();
    b.ok("page_wait", json!({"network_idle": true, "timeout_ms": 3000})).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    let out = b.ok("network_requests", json!({"url": "hop"})).await;
    let hops = out.page_text.unwrap_or_default();
    assert!(
        hops.lines().count() == 1 && hops.contains("GET 200 fetch ") && hops.contains("/data.json?hopped"),
        "{hops}"
    );

    b.fails("network_request", json!({"id": 99999}), ErrorCode::NotFound, "network_requests").await;
    b.fails("network_request", json!({"id": "abc"}), ErrorCode::InvalidArguments, "id:").await;
    b.fails("network_request", json!({"id": 1, "max_bytes": 1}), ErrorCode::InvalidArguments, "max_bytes:").await;
    b.fails("network_requests", json!({"url": "("}), ErrorCode::InvalidArguments, "url:").await;
    b.fails("network_requests", json!({"type": "bogus"}), ErrorCode::InvalidArguments, "type:").await;
    b.fails("network_requests", json!({"status": "6xx"}), ErrorCode::InvalidArguments, "status:").await;
    b.fails("network_requests", json!({"status": true}), ErrorCode::InvalidArguments, "status:").await;
    b.fails("network_requests", json!({"limit": 0}), ErrorCode::InvalidArguments, "limit:").await;

    // A new page starts a new list.
    b.open(&format!("{base}/data.json")).await;
    let out = b.ok("network_requests", json!({})).await;
    assert_eq!(out.page_text.unwrap_or_default().lines().count(), 1);
    b.close().await;
}

#[test]
fn new_tool_schemas_are_small_and_named() {
    let tools = builtin_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
    let mine = [
        "page_wait",
        "page_screenshot",
        "page_dialog",
        "file_upload",
        "devtools_console",
        "devtools_evaluate",
        "network_requests",
        "network_request",
    ];
    let at =
        |name: &str| names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("{name} not listed in {names:?}"));
    for pair in mine.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{names:?}");
    }
    for name in mine {
        let tool = &tools[at(name)];
        let bytes = tool.spec.input_schema.to_string().len() + tool.spec.description.len() + name.len();
        assert!(bytes < 1200, "{name}: {bytes} bytes: {}", tool.spec.input_schema);
        assert_eq!(tool.spec.input_schema["additionalProperties"], json!(false), "{name}");
    }
}

#[tokio::test]
async fn page_drag_drops_html5_draggables_and_drives_mouse_drags() {
    let base = serve(vec![page(
        "/",
        r#"<title>drag</title>
        <div id="card" draggable="true" role="button" aria-label="Card" style="width:80px;height:40px;background:#ccc">Card</div>
        <div id="bin" role="region" aria-label="Bin" style="margin-top:200px;width:200px;height:100px;background:#eee">Bin</div>
        <p id="out">nothing</p>
        <script>
          card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card-1'));
          bin.addEventListener('dragover', (e) => e.preventDefault());
          bin.addEventListener('drop', (e) => { e.preventDefault(); out.textContent = 'dropped ' + e.dataTransfer.getData('text/plain'); });
        </script>"#,
    )])
    .await;
    let b = Browser::new();
    b.open(&format!("{base}/")).await;
    let card = b.ref_of("\"Card\"").await;
    let bin = b.ref_of("\"Bin\"").await;
    let out = b.ok("page_drag", json!({"from": card, "to": bin})).await;
    assert!(out.text.starts_with("Dragged button \"Card\""), "{}", out.text);
    let result = b.ok("devtools_evaluate", json!({"expression": "out.textContent"})).await;
    assert!(result.page_text.as_deref().unwrap_or_default().contains("dropped card-1"), "{result:?}");
}

//! Tools that act on the page, family by family (input, dialogs, files), over
//! stdio MCP: the real `lumo` binary, a real headless Chromium, the pages in
//! `fixtures/` and rmcp's client. Each test starts its own lumo, so a red
//! test's name is the family that broke.

mod common;

use common::{FixtureServer, Lumo, assert_answer, ref_in};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_logs_in_by_typing_checking_and_clicking() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("login.html")).await;
    let snapshot = lumo.snapshot().await;
    let (username, password, remember, submit) = (
        ref_in(&snapshot, "textbox \"Username\""),
        ref_in(&snapshot, "textbox \"Password\""),
        ref_in(&snapshot, "checkbox \"Remember me\""),
        ref_in(&snapshot, "button \"Sign in\""),
    );
    // A wrong password shows the error, without navigating.
    lumo.ok("page_type", json!({"ref": username, "text": "alice"})).await;
    let typed = lumo.ok("page_type", json!({"ref": password, "text": "wrong", "submit": true})).await;
    assert_answer!(typed, contains "Typed 5 characters");
    assert_answer!(typed, contains "pressed Enter");
    assert!(typed.text().contains("Wrong username or password."), "the answer shows what changed:\n{}", typed.text());
    assert_answer!(typed, lacks "Navigated");

    // The right one: type replaces, check, click.
    lumo.ok("page_type", json!({"ref": password, "text": "secret"})).await;
    assert_eq!(lumo.eval("document.getElementById('password').value").await, "secret");
    let checked = lumo.ok("page_check", json!({"ref": remember})).await;
    assert_answer!(checked, starts_with "Checked checkbox \"Remember me\"");
    let again = lumo.ok("page_check", json!({"ref": remember, "checked": true})).await;
    assert_answer!(again, contains "already checked");
    let clicked = lumo.ok("page_click", json!({"ref": submit})).await;
    assert_answer!(clicked, starts_with format!("Clicked button \"Sign in\" [{submit}]."));
    assert_answer!(clicked, contains "Welcome, alice (remembered)");
    let after = lumo.snapshot().await;
    assert!(after.contains("Welcome, alice (remembered)"), "{after}");
    assert!(!after.contains("textbox \"Username\""), "the form is hidden after the login:\n{after}");
    // Acting on a hidden element is refused, not clicked through.
    lumo.fails("page_click", json!({"ref": submit}), "invalid_state").await;
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_fills_a_form_selects_and_submits() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("form.html")).await;
    let snapshot = lumo.ok("page_snapshot", json!({"interactive": true})).await.text();
    let r = |needle: &str| ref_in(&snapshot, needle);
    let fields = json!([
        {"ref": r("textbox \"Full name\""), "value": "Ada Lovelace"},
        {"ref": r("textbox \"Email\""), "value": "ada@example.com"},
        {"ref": r("textbox \"Password\""), "value": "pw123"},
        {"ref": r("spinbutton \"Age\""), "value": 36},
        {"ref": r("textbox \"Birthday\""), "value": "1815-12-10"},
        {"ref": r("slider \"Volume\""), "value": 80},
        {"ref": r("textbox \"Favourite colour\""), "value": "#ff0000"},
        {"ref": r("checkbox \"Subscribe to the newsletter\""), "value": true},
        {"ref": r("radio \"Team\""), "value": true},
        {"ref": r("combobox \"Country"), "value": "Japan"},
        {"ref": r("textbox \"Comments\""), "value": "First line"},
        {"ref": r("textbox \"Bio\""), "value": "Mathematician"},
    ]);
    let filled = lumo.ok("page_fill_form", json!({"fields": fields})).await;
    assert_answer!(filled, starts_with "Filled 12 field(s)");

    // A multiple select by label and by value.
    let languages = r("listbox \"Languages");
    let selected = lumo.ok("page_select", json!({"ref": languages, "values": ["Rust", "go"]})).await;
    assert_answer!(selected, contains r#"["Rust","Go"]"#);
    let missing = lumo.fails("page_select", json!({"ref": languages, "values": ["Cobol"]}), "not_found").await;
    assert!(missing.error_message().contains("Python"), "the error lists the options: {}", missing.error_message());
    lumo.fails("page_select", json!({"ref": r("combobox \"Country"), "values": ["France", "Japan"]}), "invalid_state")
        .await;
    lumo.fails("page_select", json!({"ref": r("textbox \"Email\""), "values": ["x"]}), "invalid_state").await;

    // A file input by ref.
    let file = std::env::temp_dir().join(format!("lumo-e2e-{}-notes.txt", std::process::id()));
    std::fs::write(&file, "some notes\n").expect("write the upload file");
    let attachment = r("button \"Attachment\"");
    let path = file.to_str().expect("a UTF-8 temp path").to_string();
    let uploaded = lumo.ok("file_upload", json!({"ref": attachment, "paths": [path]})).await;
    assert_answer!(uploaded, contains "Chose 1 file(s)");
    lumo.fails("file_upload", json!({"ref": attachment, "paths": [path, path]}), "invalid_arguments").await;
    lumo.fails("page_fill_form", json!({"fields": [{"ref": attachment, "value": path}]}), "invalid_arguments").await;
    lumo.fails("page_type", json!({"ref": r("checkbox \"Subscribe"), "text": "x"}), "invalid_state").await;
    lumo.fails("page_check", json!({"ref": r("radio \"Team\""), "checked": false}), "invalid_state").await;
    lumo.fails("page_check", json!({"ref": r("textbox \"Email\"")}), "invalid_state").await;

    // Append, then submit and read what the page received.
    lumo.ok("page_type", json!({"ref": r("textbox \"Comments\""), "text": ", second", "append": true})).await;
    lumo.ok("page_click", json!({"ref": r("button \"Submit\"")})).await;
    let out = lumo.eval("document.getElementById('out').textContent").await;
    let got: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("#out is not JSON ({e}): {out}"));
    let expected = json!({
        "text": "Ada Lovelace",
        "email": "ada@example.com",
        "password": "pw123",
        "number": "36",
        "date": "1815-12-10",
        "range": "80",
        "color": "#ff0000",
        "newsletter": true,
        "plan": "team",
        "country": "jp",
        "languages": ["rust", "go"],
        "comments": "First line, second",
        "bio": "Mathematician",
        "attachment": [file.file_name().and_then(|n| n.to_str()).expect("a file name")],
    });
    for (key, want) in expected.as_object().expect("an object") {
        assert_eq!(&got[key], want, "#out.{key} in {out}");
    }
    // The snapshot shows the values (a password masked).
    let after = lumo.ok("page_snapshot", json!({"interactive": true})).await.text();
    assert!(after.contains("= \"Ada Lovelace\""), "{after}");
    assert!(after.contains("= \"•••••\"") && !after.contains("pw123"), "passwords are masked:\n{after}");
    assert!(after.contains("radio \"Team\"") && after.contains("checked"), "{after}");
    let _ = std::fs::remove_file(&file);
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_hovers_drags_presses_keys_and_scrolls_a_box() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("pointer.html")).await;
    let snapshot = lumo.snapshot().await;
    let hover = ref_in(&snapshot, "button \"Hover me\"");
    let hovered = lumo.ok("page_hover", json!({"ref": hover})).await;
    assert_answer!(hovered, starts_with "Hovered button \"Hover me\"");
    assert_answer!(hovered, contains "Hovered!");

    let dragged = lumo
        .ok(
            "page_drag",
            json!({"from": ref_in(&snapshot, "button \"Drag me\""), "to": ref_in(&snapshot, "region \"Drop zone\"")}),
        )
        .await;
    assert_answer!(dragged, starts_with "Dragged button \"Drag me\"");
    assert_eq!(lumo.eval("document.getElementById('drag-status').textContent").await, "Dropped on target");

    let key = "document.getElementById('key-status').textContent";
    lumo.ok("page_press_key", json!({"key": "Control+a"})).await;
    assert_eq!(lumo.eval(key).await, "Key: a with Control");
    let pressed = lumo.ok("page_press_key", json!({"key": "Escape", "ref": hover})).await;
    assert_answer!(pressed, starts_with "Pressed Escape on button \"Hover me\"");
    assert_eq!(lumo.eval(key).await, "Key: Escape");
    assert_eq!(lumo.eval("document.activeElement.id").await, "hover-me");
    lumo.fails("page_press_key", json!({"key": "NotAKey"}), "invalid_arguments").await;

    // Scrolling an element's own box.
    let scroller = ref_in(&snapshot, "region \"Scroller\"");
    let scrolled = lumo.ok("page_scroll", json!({"ref": scroller, "dy": 50})).await;
    assert_answer!(scrolled, contains "scrolled to 50px of 300px");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_scrolls_a_long_page_and_into_view() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("long-list.html")).await;
    let button = lumo.ok("page_find", json!({"text": "Select 777", "role": "button"})).await;
    assert_eq!(button.structured()["total"], 1, "{}", button.text());
    let select = button.ref_of("button \"Select 777\"");
    let clicked = lumo.ok("page_click", json!({"ref": select})).await;
    assert_answer!(clicked, contains "Selected Row 777");
    assert_eq!(lumo.eval("document.getElementById('status').textContent").await, "Selected Row 777");

    // Scrolling (the click above scrolled row 777 into view).
    let top = lumo.ok("page_scroll", json!({"to": "top"})).await;
    assert_answer!(top, starts_with "Page scrolled to 0px of ");
    let down = lumo.ok("page_scroll", json!({"dy": 500})).await;
    assert_answer!(down, contains "Page scrolled to 500px");
    let bottom = lumo.ok("page_scroll", json!({"to": "bottom"})).await;
    let y: f64 = lumo.eval("scrollY").await.parse().expect("scrollY is a number");
    assert!(y > 10_000.0, "scrolled to the bottom, scrollY = {y}: {}", bottom.text());
    lumo.ok("page_scroll", json!({"to": "top"})).await;
    assert_eq!(lumo.eval("scrollY").await, "0");
    let into_view = lumo.ok("page_scroll", json!({"ref": select})).await;
    assert_answer!(into_view, contains "is in view");
    let inside: bool = lumo
        .eval("(() => { const r = document.querySelector('#row-777').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()")
        .await
        .parse()
        .expect("a boolean");
    assert!(inside, "row 777 should be in the viewport");
    lumo.fails("page_scroll", json!({}), "invalid_arguments").await;
    lumo.stop().await;
}

/// The answer says a dialog of `kind` is open, with its message, and how to answer it.
fn assert_dialog_notice(answer: &common::Answer, kind: &str, message: &str) {
    let text = answer.text();
    assert!(text.contains("dialog") && text.contains(kind), "no notice of the {kind} dialog:\n{text}");
    assert!(text.contains(message), "the notice carries the dialog's message {message:?}:\n{text}");
    assert!(text.contains("page_dialog"), "the notice says how to answer:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_alert_confirm_prompt() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("dialog.html")).await;
    let snapshot = lumo.snapshot().await;
    let (alert, confirm, prompt) = (
        ref_in(&snapshot, "button \"Alert\""),
        ref_in(&snapshot, "button \"Confirm\""),
        ref_in(&snapshot, "button \"Prompt\""),
    );
    let result = "document.getElementById('result').textContent";

    lumo.fails("page_dialog", json!({"accept": true}), "invalid_state").await;

    // alert: the click reports the open dialog; the page is blocked until it is answered.
    let clicked = lumo.ok("page_click", json!({"ref": alert})).await;
    assert_dialog_notice(&clicked, "alert", "Hello from alert");
    let blocked = lumo.fails("page_snapshot", json!({}), "invalid_state").await;
    assert!(blocked.error_message().contains("page_dialog"), "{}", blocked.error_message());
    lumo.fails("page_dialog", json!({"accept": true, "prompt_text": "x"}), "invalid_arguments").await;
    let answered = lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_answer!(answered, contains "Accepted the alert dialog.");
    assert_answer!(answered, contains "dialog message: \"Hello from alert\"");
    assert_eq!(lumo.eval(result).await, "alert closed");

    // confirm: dismiss, then accept.
    lumo.ok("page_click", json!({"ref": confirm})).await;
    let dismissed = lumo.ok("page_dialog", json!({"accept": false})).await;
    assert_answer!(dismissed, contains "Dismissed the confirm dialog.");
    assert_eq!(lumo.eval(result).await, "confirm: false");
    lumo.ok("page_click", json!({"ref": confirm})).await;
    lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(lumo.eval(result).await, "confirm: true");

    // prompt: with text, with its default, dismissed.
    let clicked = lumo.ok("page_click", json!({"ref": prompt})).await;
    assert_dialog_notice(&clicked, "prompt", "Your name?");
    let answered = lumo.ok("page_dialog", json!({"accept": true, "prompt_text": "Grace"})).await;
    assert_answer!(answered, contains "with 5 characters");
    assert_eq!(lumo.eval(result).await, "prompt: Grace");
    lumo.ok("page_click", json!({"ref": prompt})).await;
    let default = lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_answer!(default, contains "with its default value");
    assert_eq!(lumo.eval(result).await, "prompt: Anonymous");
    lumo.ok("page_click", json!({"ref": prompt})).await;
    lumo.ok("page_dialog", json!({"accept": false})).await;
    assert_eq!(lumo.eval(result).await, "prompt: null");

    // A dialog opened by evaluated code.
    let evaluated = lumo.ok("devtools_evaluate", json!({"expression": "confirm('from code')"})).await;
    assert_dialog_notice(&evaluated, "confirm", "from code");
    lumo.fails("devtools_evaluate", json!({"expression": "1"}), "invalid_state").await;
    lumo.ok("page_dialog", json!({"accept": true})).await;
    assert_eq!(lumo.eval("1 + 1").await, "2");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_upload_by_ref_and_through_the_file_chooser() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;
    let dir = std::env::temp_dir();
    let a = dir.join(format!("lumo-e2e-{}-a.txt", std::process::id()));
    let b = dir.join(format!("lumo-e2e-{}-b.txt", std::process::id()));
    std::fs::write(&a, "aaa").expect("write a");
    std::fs::write(&b, "bbbbb").expect("write b");
    let (a_path, b_path) = (a.display().to_string(), b.display().to_string());

    // file_upload: by ref (several files), and through the file chooser a click opens.
    lumo.open(&server.url("upload.html")).await;
    let snapshot = lumo.snapshot().await;
    let files = ref_in(&snapshot, "button \"Files\"");
    let single = ref_in(&snapshot, "button \"One file\"");
    let chosen = lumo.ok("file_upload", json!({"ref": files, "paths": [a_path, b_path]})).await;
    assert_answer!(chosen, contains "Chose 2 file(s)");
    let shown = lumo.eval("document.getElementById('chosen').textContent").await;
    assert!(shown.contains("a.txt (3 B)") && shown.contains("b.txt (5 B)"), "{shown}");
    lumo.fails("file_upload", json!({"ref": single, "paths": [a_path, b_path]}), "invalid_arguments").await;
    lumo.fails("file_upload", json!({"paths": ["/no/such/file.txt"], "ref": single}), "invalid_arguments").await;
    lumo.fails("file_upload", json!({"paths": [a_path]}), "invalid_arguments").await;
    let clicked = lumo.ok("page_click", json!({"ref": single})).await;
    assert_answer!(clicked, contains "file chooser");
    assert_answer!(clicked, contains "file_upload");
    let answered = lumo.ok("file_upload", json!({"paths": [b_path]})).await;
    assert_answer!(answered, contains "in the file chooser");
    let shown = lumo.eval("document.getElementById('chosen').textContent").await;
    assert!(shown.starts_with("single: ") && shown.contains("b.txt"), "{shown}");

    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    lumo.stop().await;
}

//! A terse snapshot (issue 13 item 2): the outline keeps every word and every
//! ref an agent acts on, in far fewer bytes than the first format (`- row:
//! Row 7 | link "Details 7" [e395] | textbox "Qty 7" [e396] | button
//! "Select" [e397]`, 72% of the bench's 5,000-element page). Cells are split by
//! a bare `|`; rows shaped like the row above drop their role words; their refs still act.

mod common;

use common::{FixtureServer, Lumo, Route, ref_in};
use serde_json::json;

const ROWS: usize = 300;

fn page() -> String {
    let rows: String = (1..=ROWS)
        .map(|n| {
            format!(
                "<tr><td>Row {n}</td><td><a href=\"/detail/{n}\">Details {n}</a></td>\
                 <td><input aria-label=\"Qty {n}\"></td><td><button onclick=\"pick({n})\">Select</button></td></tr>"
            )
        })
        .collect();
    format!(
        "<!doctype html><title>Orders</title><body>\
         <p>Read <a href=\"/guide\">the ordering guide</a> before you pick a row.</p>\
         <p id=\"status\">Nothing selected</p>\
         <table aria-label=\"Orders\"><thead><tr><th>Name</th><th>Link</th><th>Qty</th><th>Action</th></tr></thead>\
         <tbody>{rows}</tbody></table>\
         <script>function pick(n) {{ document.getElementById('status').textContent = 'Selected row ' + n; }}</script>\
         </body>"
    )
}

/// The row line of `Row {n}` and the ref of its `cell`-th control (0-based).
fn row_ref(snapshot: &str, n: usize, control: usize) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("Row {n}|")))
        .unwrap_or_else(|| panic!("no line for Row {n} in:\n{snapshot}"));
    let refs: Vec<&str> = line.split('[').filter_map(|p| p.split_once(']')).map(|(r, _)| r).collect();
    refs.iter().filter(|r| r.starts_with('e')).nth(control).unwrap_or_else(|| panic!("{line}")).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_same_shaped_rows_is_terse_keeps_every_word_and_its_refs_act() {
    let server = FixtureServer::builder().route("/orders.html", Route::html(page())).start().await;
    let lumo = Lumo::start().await;
    lumo.open(&server.url("orders.html")).await;
    let snapshot = lumo.snapshot().await;

    // Bytes: the first format wrote ~90 bytes a row (27 kB here); the terse one ~62.
    let bound = ROWS * 66;
    assert!(snapshot.len() <= bound, "{} bytes for {ROWS} rows, over {bound}:\n{}", snapshot.len(), &snapshot[..3000]);

    // Every word of every row, each control with its ref.
    for n in 1..=ROWS {
        for word in [format!("Row {n}|"), format!("Details {n}"), format!("Qty {n}")] {
            assert!(snapshot.contains(&word), "{word:?} is missing from:\n{snapshot}");
        }
    }
    assert!(snapshot.contains("Read [the ordering guide]["), "a paragraph's link stays inline:\n{snapshot}");
    // The first row names its controls' roles; the rows below it, shaped alike, do not repeat them.
    assert!(snapshot.contains("|textbox \"Qty 1\" [e") && snapshot.contains("|button \"Select\" [e"), "{snapshot}");
    let bare = snapshot.lines().find(|l| l.trim_start().starts_with("Row 250|")).unwrap_or_default();
    assert!(!bare.contains("button") && !bare.contains("textbox"), "a repeated row is written bare: {bare}");

    // A bare row's refs act: type into its textbox, click its button.
    let (qty, select) = (row_ref(&snapshot, 250, 1), row_ref(&snapshot, 250, 2));
    lumo.ok("page_type", json!({"ref": qty, "text": "7"})).await;
    assert_eq!(lumo.eval("document.querySelectorAll('input')[249].value").await, "7");
    lumo.ok("page_click", json!({"ref": select})).await;
    assert_eq!(lumo.eval("document.getElementById('status').textContent").await, "Selected row 250");
    // The typed value shows on the row.
    let again = lumo.snapshot().await;
    assert!(again.contains(&format!("Qty 250 [{qty}] = \"7\"")), "{again}");

    // page_find gives a row's context in full.
    let found = lumo.ok("page_find", json!({"text": "Row 250"})).await.text();
    assert!(found.contains("Row 250|[Details 250][") && found.contains("button \"Select\" ["), "{found}");

    // Link targets: left out of the whole page, shown in a subtree.
    assert!(!snapshot.contains("/detail/"), "{snapshot}");
    let table = ref_in(&snapshot, "table \"Orders\"");
    let sub = lumo.ok("page_snapshot", json!({"ref": table, "max_bytes": 3000})).await.text();
    assert!(sub.contains("[Details 1][") && sub.contains("](/detail/1)"), "{sub}");
    assert!(sub.contains("](/detail/2)"), "{sub}");
    lumo.stop().await;
}

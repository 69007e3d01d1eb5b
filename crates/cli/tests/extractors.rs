//! Extractors as data (issue 13 item 4): the built-in definitions read typed
//! fields and records from pages shaped like the apps they are for
//! (`fixtures/apps/`), user definitions in a folder are picked up without
//! recompiling or restarting, and a bad definition is refused naming its file
//! and field.

mod common;

use common::{FixtureServer, Lumo};
use serde_json::{Value, json};

/// Runs `extractor` on `page` and returns (structured data, the text lumo wrote).
async fn read(lumo: &Lumo, server: &FixtureServer, page: &str, extractor: &str) -> (Value, String) {
    lumo.open(&server.url(page)).await;
    let answer = lumo.ok("page_extract", json!({"extractor": extractor})).await;
    (answer.structured(), answer.text())
}

/// A ref that page tools take: `e12`.
fn is_ref(v: &Value) -> bool {
    v.as_str().is_some_and(|r| r.starts_with('e') && r[1..].parse::<u64>().is_ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn platform_extractors_read_pages_shaped_like_their_apps() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;

    let (g, text) = read(&lumo, &server, "apps/gmail.html", "gmail").await;
    assert!(text.contains("untested against the live site"), "{text}");
    assert!(text.contains("it is meant for https://mail.google.com/*, not this URL"), "{text}");
    assert_eq!(g["fields"]["subject"], "Quarterly report", "{g}");
    assert_eq!(g["fields"]["labels"], json!(["Work", "Finance"]));
    let m = &g["records"]["messages"];
    assert_eq!(m.as_array().map(Vec::len), Some(2), "{g}");
    assert_eq!(m[0]["from"], "Bruno Marsh");
    assert_eq!(m[0]["from_email"], "bruno@example.com");
    assert_eq!(m[1]["to"], json!(["bruno@example.com", "cara@example.com"]));
    assert_eq!(m[0]["date"], "Mon, Nov 30, 2026, 9:14 AM");
    let body = m[0]["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("The **draft** is attached; see the [shared folder](https://docs.example.com/q3)[e"),
        "{body}"
    );
    assert!(is_ref(&m[1]["ref"]), "{m}");
    assert_eq!(g["untrustedData"], true, "records are page content: {g}");

    let (s, _) = read(&lumo, &server, "apps/slack.html", "slack").await;
    assert_eq!(s["fields"]["channel"], "release", "{s}");
    assert_eq!(s["fields"]["topic"], "Ship 4.2 on Friday");
    let m = &s["records"]["messages"];
    assert_eq!((m[0]["sender"].as_str(), m[1]["sender"].as_str()), (Some("Dana"), Some("Eli")), "{s}");
    assert_eq!(m[0]["ts"], "1764500000.000100");
    assert_eq!(m[0]["replies"], 3);
    assert_eq!(m[1]["replies"], Value::Null);
    assert!(m[0]["text"].as_str().unwrap_or_default().contains("[CI run](https://ci.example.com/b/77)"), "{s}");

    let (j, _) = read(&lumo, &server, "apps/jira.html", "jira").await;
    let f = &j["fields"];
    assert_eq!(
        (&f["key"], &f["summary"], &f["status"], &f["assignee"], &f["priority"]),
        (&json!("OPS-42"), &json!("Disk alerts on db-3"), &json!("In Progress"), &json!("Farah Quill"), &json!("High")),
        "{j}"
    );
    assert!(f["description"].as_str().unwrap_or_default().contains("- Started on Nov 28"), "{j}");
    let c = &j["records"]["comments"];
    assert_eq!(c.as_array().map(Vec::len), Some(2), "{j}");
    assert_eq!(c[0]["author"], "Gus Lee");
    assert_eq!(c[1]["time"], "2026-11-30T09:00:00Z");
    assert_eq!(c[0]["text"], "Log rotation stopped after the upgrade.");

    let (sf, _) = read(&lumo, &server, "apps/salesforce.html", "salesforce").await;
    assert_eq!(
        (sf["fields"]["type"].as_str(), sf["fields"]["name"].as_str()),
        (Some("Account"), Some("Harbour Freight Ltd"))
    );
    let rows = &sf["records"]["fields"];
    assert_eq!(rows.as_array().map(Vec::len), Some(4), "{sf}");
    assert_eq!((rows[0]["label"].as_str(), rows[0]["value"].as_str()), (Some("Account Owner"), Some("Hana Roe")));
    assert!(is_ref(&rows[0]["link"]["ref"]), "{sf}");
    assert_eq!(rows[3]["value"], "£12,500,000");

    let (sn, _) = read(&lumo, &server, "apps/servicenow.html", "servicenow").await;
    assert_eq!(sn["fields"]["number"], "INC0010042", "{sn}");
    assert_eq!(sn["fields"]["short_description"], "VPN drops every hour");
    let rows = &sn["records"]["fields"];
    assert_eq!(rows.as_array().map(Vec::len), Some(4), "the hidden sys_id is not a field: {sn}");
    assert_eq!((rows[2]["label"].as_str(), rows[2]["value"].as_str()), (Some("State"), Some("In Progress")));
    // The control's ref works with page_type.
    let comments = rows[3]["control"].as_str().unwrap_or_default().to_string();
    lumo.ok("page_type", json!({"ref": comments, "text": "Watching it"})).await;
    assert_eq!(lumo.eval("document.getElementById('incident.comments').value").await, "Watching it");
    assert_eq!(sn["records"]["activity"][0]["author"], "Ivo Park");

    let (h, _) = read(&lumo, &server, "apps/hubspot.html", "hubspot").await;
    assert_eq!(h["fields"]["name"], "Jun Ito", "{h}");
    let p = &h["records"]["properties"];
    assert_eq!(p.as_array().map(Vec::len), Some(3), "{h}");
    assert_eq!((p[0]["label"].as_str(), p[0]["value"].as_str()), (Some("Email"), Some("jun@example.com")));
    let a = &h["records"]["activities"];
    assert_eq!((a[1]["type"].as_str(), a[1]["time"].as_str()), (Some("Call"), Some("2026-11-30T10:30:00.000Z")), "{h}");

    // page_extract without an extractor names those that fit the page (site ones first).
    lumo.open(&server.url("apps/jira.html")).await;
    let plain = lumo.ok("page_extract", json!({})).await.text();
    assert!(!plain.contains("Extractors that fit this page: jira"), "jira's patterns are for atlassian.net: {plain}");
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generic_extractors_read_common_app_shapes() {
    let server = FixtureServer::start().await;
    let lumo = Lumo::start().await;

    let (m, _) = read(&lumo, &server, "apps/mail.html", "mail-thread").await;
    assert_eq!(m["fields"]["subject"], "Boat trip on Saturday", "{m}");
    let msgs = &m["records"]["messages"];
    assert_eq!((msgs[0]["from"].as_str(), msgs[1]["from"].as_str()), (Some("Kim Vale"), Some("Lou Brandt")), "{m}");
    assert_eq!(msgs[0]["to"], "crew@example.com");
    assert_eq!(msgs[1]["date"], "2026-11-28T19:30:00.000Z");
    assert_eq!(msgs[0]["body"], "Meet at pier 4 at **nine**.");

    let (c, _) = read(&lumo, &server, "apps/chat.html", "chat-channel").await;
    assert_eq!(c["fields"]["channel"], "#general", "{c}");
    let msgs = &c["records"]["messages"];
    assert_eq!(msgs.as_array().map(Vec::len), Some(3), "{c}");
    assert_eq!(msgs[1]["sender"], "Ned");
    assert!(msgs[1]["text"].as_str().unwrap_or_default().starts_with("Standup moved to [room B](/rooms/b)[e"), "{c}");

    let (i, _) = read(&lumo, &server, "apps/issue.html", "issue").await;
    let f = &i["fields"];
    assert_eq!(
        (f["key"].as_str(), f["status"].as_str(), f["assignee"].as_str()),
        (Some("WEB-7"), Some("Open"), Some("Pia Holt")),
        "{i}"
    );
    assert_eq!(f["title"], "Login button does nothing on Safari");
    assert_eq!(i["records"]["comments"][0]["text"], "Reproduced on 18.1.");

    let (r, _) = read(&lumo, &server, "apps/crm.html", "crm-record").await;
    let p = &r["records"]["properties"];
    let pairs: Vec<(String, String)> = p
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|x| (x["label"].as_str().unwrap_or("").to_string(), x["value"].as_str().unwrap_or("").to_string()))
        .collect();
    assert_eq!(
        pairs,
        [("Company", "Northwick Ferries"), ("Email", "rosa@example.com"), ("Stage", "Customer"), ("Owner", "Sam Reed")]
            .map(|(a, b)| (a.to_string(), b.to_string())),
        "{r}"
    );

    let (t, _) = read(&lumo, &server, "apps/table.html", "data-table").await;
    assert_eq!(t["fields"]["caption"], "Open orders", "{t}");
    let rows = &t["fields"]["rows"];
    assert_eq!(rows[1]["Customer"], "Saltmarsh Co", "{t}");
    assert_eq!(rows[1]["Total"], "99.50");
    // A row's link ref acts: it opens the order.
    assert!(is_ref(&rows[0]["Order ref"]), "{t}");

    let (s, _) = read(&lumo, &server, "apps/search.html", "search-results").await;
    assert_eq!(s["fields"]["query"], "tide tables", "{s}");
    let results = &s["records"]["results"];
    assert_eq!(results.as_array().map(Vec::len), Some(3), "{s}");
    assert_eq!(results[1]["title"], "Hydrographic office");
    assert_eq!(results[1]["link"]["url"], "https://example.org/office");
    assert_eq!(results[2]["snippet"], "Weather and tides for sailors.");

    // On a plain page, the answer names the generic extractors that fit.
    lumo.open(&server.url("apps/search.html")).await;
    let plain = lumo.ok("page_extract", json!({})).await.text();
    assert!(plain.contains("Extractors that fit this page: search-results"), "{plain}");
    let unknown = lumo.fails("page_extract", json!({"extractor": "nope"}), "not_found").await;
    assert!(
        unknown.error_message().contains("no extractor \"nope\"; there are: mail-thread"),
        "{}",
        unknown.error_message()
    );
    lumo.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_extractors_load_from_a_folder_and_bad_ones_name_file_and_field() {
    let dir = std::env::temp_dir().join(format!("lumo-extractors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let server = FixtureServer::start().await;
    let lumo = Lumo::start_with(&["--extractors", dir.to_str().expect("utf-8 path")], &[]).await;
    lumo.open(&server.url("apps/table.html")).await;
    // Added while lumo runs: read on the next call.
    std::fs::write(
        dir.join("orders.json"),
        r#"{"name": "orders", "description": "Order numbers", "match": ["http://127.0.0.1:*/apps/table.html"],
            "records": {"orders": {"each": {"role": "row", "name": "^\\d+"}, "fields": {"number": {"role": "link"}, "total": {"selector": "td:last-child", "type": "number"}}}}}"#,
    )
    .expect("write");
    let answer = lumo.ok("page_extract", json!({"extractor": "orders"})).await;
    let data = answer.structured();
    assert_eq!(data["records"]["orders"][0]["number"], "1001", "{data}");
    assert_eq!(data["records"]["orders"][1]["total"], 99.5);
    assert!(
        answer.text().contains(&format!("Extractor orders ({}", dir.join("orders.json").display())),
        "{}",
        answer.text()
    );
    let plain = lumo.ok("page_extract", json!({})).await.text();
    assert!(
        plain.contains("Extractors that fit this page: orders, "),
        "user ones that match the URL come first: {plain}"
    );

    // A bad field: the call says which file and which field.
    std::fs::write(
        dir.join("orders.json"),
        r#"{"name": "orders", "description": "d", "match": ["*"], "records": {"orders": {"each": {"role": "row"}, "fields": {"total": {"selector": "td", "type": "money"}}}}}"#,
    )
    .expect("write");
    let bad = lumo.fails("page_extract", json!({"extractor": "orders"}), "invalid_state").await;
    let msg = bad.error_message();
    assert!(msg.contains("orders.json: records.orders.fields.total.type: unknown variant `money`"), "{msg}");
    // A selector only the browser can judge: named by its path too.
    std::fs::write(
        dir.join("orders.json"),
        r#"{"name": "orders", "description": "d", "match": ["*"], "fields": {"total": {"selector": "td[["}}}"#,
    )
    .expect("write");
    let bad = lumo.fails("page_extract", json!({"extractor": "orders"}), "invalid_state").await;
    assert!(bad.error_message().contains("fields.total: not a valid CSS selector"), "{}", bad.error_message());
    lumo.stop().await;

    // At start, a bad definition stops lumo with the file and the field.
    std::fs::write(dir.join("orders.json"), r#"{"name": "orders", "description": "d", "match": []}"#).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"))
        .args(["call", "page_extract", "{}", "--extractors"])
        .arg(&dir)
        .output()
        .expect("run lumo call");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("orders.json: match: give at least one URL pattern"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

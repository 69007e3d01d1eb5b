//! Tabs, navigation and the viewport: `browser_navigate`, `browser_tabs`, `browser_resize`.

use std::time::Duration;

use lumo_protocol::ErrorCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, Page, TabUse, off_tab, on_tab};
use crate::action::{Reach, open};
use crate::error::refuse;
use crate::session::{Live, Session};
use crate::tab::Tab;
use crate::tool::{Hints, Outcome, Tool, ToolOutput, fail};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "browser_navigate",
            "Open a URL in the current tab, or go back, forward or reload; waits for the load.",
            Hints::OPEN,
            navigate,
        )
        // Where the page went and its title: the page's words.
        .untrusted(),
        Tool::new("browser_tabs", "List, open, select or close tabs.", Hints::ACT, tabs).untrusted(),
        Tool::new("browser_resize", "Set the viewport size in CSS pixels.", Hints::ACT, resize),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NavigateArgs {
    /// Absolute URL to open: http or https (file with --allow-file-urls), or about:blank.
    url: Option<String>,
    /// Instead of a URL: history or reload.
    go: Option<Go>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Go {
    Back,
    Forward,
    Reload,
}

async fn navigate(session: Ctx, args: NavigateArgs) -> Outcome {
    // A tab on a page lumo does not read may still be taken elsewhere. History
    // moves are actions (what they set off is waited for and described); opening
    // a URL waits for its load itself.
    let how = match (&args.url, args.go) {
        (None, Some(_)) => TabUse::NAVIGATE.settling(Reach::MayNavigate),
        _ => TabUse::NAVIGATE,
    };
    let policy = &session.policy;
    on_tab(&session, how, |OnTab { live, tab }| async move {
        match (&args.url, args.go) {
            (Some(url), None) => {
                let url = policy.check_open(url)?;
                open(&live, &tab, &url).await?;
                Ok(landed(&live, &tab, "Opened").await)
            }
            (None, Some(go)) => {
                match go {
                    Go::Reload => {
                        live.call(&tab, "Page.reload", json!({})).await?;
                    }
                    Go::Back | Go::Forward => {
                        let history = live.call(&tab, "Page.getNavigationHistory", json!({})).await?;
                        let index =
                            history["currentIndex"].as_i64().unwrap_or(0) + if matches!(go, Go::Back) { -1 } else { 1 };
                        let entry = history["entries"].get(usize::try_from(index).unwrap_or(usize::MAX)).cloned();
                        let Some(entry) = entry else {
                            return Err(refuse(
                                ErrorCode::InvalidState,
                                format!(
                                    "There is no page to go {} to.",
                                    if matches!(go, Go::Back) { "back" } else { "forward" }
                                ),
                            ));
                        };
                        // History may hold a page lumo would not open (an attached browser's own).
                        policy.check_open(entry["url"].as_str().unwrap_or_default())?;
                        live.call(&tab, "Page.navigateToHistoryEntry", json!({"entryId": entry["id"]})).await?;
                    }
                }
                Ok(ToolOutput::text(match go {
                    Go::Back => "Went back.",
                    Go::Forward => "Went forward.",
                    Go::Reload => "Reloaded.",
                }))
            }
            _ => Err(refuse(ErrorCode::InvalidArguments, "give exactly one of url or go")),
        }
    })
    .await
}

/// The answer after a navigation: where we are. The URL and title are the page's
/// (a redirect or a script chose them; a fragment can hold a token): page data.
async fn landed(live: &Live, tab: &Tab, verb: &str) -> ToolOutput {
    let title = live
        .call(tab, "Runtime.evaluate", json!({"expression": "document.title", "returnByValue": true}))
        .await
        .ok()
        .and_then(|r| r["result"]["value"].as_str().map(str::to_string))
        .unwrap_or_default();
    let url = tab.state().url.clone();
    let page = if title.is_empty() { format!("url: {url}") } else { format!("url: {url}\ntitle: {title}") };
    ToolOutput::text(format!("{verb}:")).with_structured(json!({"url": url, "title": title})).with_page_text(page)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TabsArgs {
    /// What to do.
    action: TabAction,
    /// Tab index (from list) for select and close; close defaults to the current tab.
    index: Option<usize>,
    /// URL for a new tab (default about:blank).
    url: Option<String>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum TabAction {
    List,
    New,
    Select,
    Close,
}

async fn tabs(session: Ctx, args: TabsArgs) -> Outcome {
    // It lists tabs whatever they show: the way off a page lumo does not read.
    off_tab(&session, Page::Any, list_tabs(&session, args)).await
}

async fn list_tabs(session: &Session, args: TabsArgs) -> Outcome {
    let live = session.live().await?;
    // Only this handle's own tabs (its browser context): never another client's.
    let scope = session.scope;
    let pick = |index: Option<usize>| -> Result<String, lumo_protocol::ToolFailure> {
        let tabs = live.tabs_in(scope);
        let selected = live.selected(scope).map(|t| t.target_id.clone());
        let index = match index {
            Some(i) => i,
            None => tabs.iter().position(|t| Some(&t.target_id) == selected.as_ref()).unwrap_or(0),
        };
        tabs.get(index).map(|t| t.target_id.clone()).ok_or_else(|| {
            fail(
                ErrorCode::NotFound,
                format!("index: no tab {index}; there are {} (browser_tabs {{action: \"list\"}})", tabs.len()),
            )
        })
    };
    match args.action {
        TabAction::List => {}
        TabAction::New => {
            let url = session.policy.check_open(args.url.as_deref().unwrap_or("about:blank"))?;
            // Open it blank, then navigate once lumo listens: a URL given to createTarget
            // starts loading before the tab's events are on, and its load can go unseen.
            let tab = live.new_tab(scope, "about:blank").await?;
            if url != "about:blank" {
                open(&live, &tab, &url).await?;
            }
        }
        TabAction::Select => {
            let index = args.index.ok_or_else(|| fail(ErrorCode::InvalidArguments, "index: required for select"))?;
            let target = pick(Some(index))?;
            live.cdp.call("Target.activateTarget", json!({"targetId": target}), None).await?;
            live.select(scope, &target);
        }
        TabAction::Close => {
            let target = pick(args.index)?;
            live.cdp.call("Target.closeTarget", json!({"targetId": target}), None).await?;
            wait_until_gone(&live, &target).await;
        }
    }
    // The browser's own view has the current titles (events can lag behind).
    let infos = live.cdp.call("Target.getTargets", json!({}), None).await?;
    let info_of = |id: &str| {
        infos["targetInfos"].as_array().into_iter().flatten().find(|t| t["targetId"].as_str() == Some(id)).cloned()
    };
    let tabs = live.tabs_in(scope);
    let selected = live.selected(scope).map(|t| t.target_id.clone());
    let lines: Vec<String> = tabs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let s = t.state();
            let info = info_of(&t.target_id);
            let title = info.as_ref().and_then(|i| i["title"].as_str()).unwrap_or(&s.title).to_string();
            let url = info.as_ref().and_then(|i| i["url"].as_str()).unwrap_or(&s.url).to_string();
            let mark = if Some(&t.target_id) == selected.as_ref() { "*" } else { " " };
            // Chromium titles an untitled page with its URL: say nothing twice.
            let title = if title.is_empty() || url.ends_with(&title) { "(untitled)".to_string() } else { title };
            format!("{mark}{i} {title} — {url}")
        })
        .collect();
    Ok(ToolOutput::text(format!("{} tab(s), * is current:", lines.len())).with_page_text(lines.join("\n")))
}

async fn wait_until_gone(live: &crate::session::Live, target: &str) {
    for _ in 0..50 {
        if !live.tabs().list.iter().any(|t| t.target_id == target) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResizeArgs {
    /// Width in CSS pixels (100–10000).
    #[schemars(range(min = 100, max = 10_000))]
    width: u32,
    /// Height in CSS pixels (100–10000).
    #[schemars(range(min = 100, max = 10_000))]
    height: u32,
}

async fn resize(session: Ctx, args: ResizeArgs) -> Outcome {
    for (field, value) in [("width", args.width), ("height", args.height)] {
        if !(100..=10_000).contains(&value) {
            return Err(refuse(ErrorCode::InvalidArguments, format!("{field}: {value} is outside 100–10000")));
        }
    }
    on_tab(&session, TabUse::UNLOCKED, |OnTab { live, tab }| async move {
        live.call(
            &tab,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
        Ok(ToolOutput::text(format!("Viewport is {}×{}.", args.width, args.height)))
    })
    .await
}

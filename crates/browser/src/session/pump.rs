//! The event pump: one task per browser reads every CDP event and applies it.
//! Browser-level events (targets created, attached, changed, destroyed;
//! paused document requests) change the live browser's tab list here; every
//! other event goes to the tab (or the cross-origin frame) whose session sent
//! it, whose decoders keep its state.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::live::{Events, Live, page_targets};
use crate::tab::{ChildFrame, Tab, Worlds};

pub(super) async fn run(live: Weak<Live>, mut events: Events) {
    while let Some(event) = events.recv().await {
        let Some(live) = live.upgrade() else { return };
        match event.method.as_str() {
            lumo_cdp::CARRIER_RESUMED => {
                tokio::spawn(resync(live.clone()));
            }
            "Target.targetCreated" => {
                let info = &event.params["targetInfo"];
                if info["type"] == "page"
                    && !info["url"].as_str().unwrap_or_default().starts_with("chrome-extension://")
                {
                    let target = info["targetId"].as_str().unwrap_or_default().to_string();
                    let context = info["browserContextId"].as_str().unwrap_or_default().to_string();
                    let live = live.clone();
                    // Pages opened by the page (window.open, target=_blank) become tabs too,
                    // in the opener's browser context.
                    tokio::spawn(async move {
                        if let Err(e) = live.attach(&target, &context).await {
                            tracing::debug!(%target, error = %e, "could not attach to a new tab");
                        }
                    });
                }
            }
            "Target.targetDestroyed" => {
                if let Some(target) = event.params["targetId"].as_str() {
                    live.forget(target);
                }
            }
            "Target.targetInfoChanged" => {
                let info = &event.params["targetInfo"];
                if info["type"] == "iframe" {
                    // A cross-origin frame learnt its URL: page tools name their origin.
                    let frame = info["targetId"].as_str().unwrap_or_default();
                    let owner = live
                        .tabs()
                        .list
                        .iter()
                        .find(|t| t.state().children.iter().any(|c| c.frame_id == frame))
                        .cloned();
                    if let Some(tab) = owner {
                        tab.state().webmcp.record_tree(&json!({"frame": {"id": frame, "url": info["url"]}}));
                    }
                    continue;
                }
                let tab = live.tabs().list.iter().find(|t| info["targetId"].as_str() == Some(&t.target_id)).cloned();
                if let Some(tab) = tab {
                    let mut s = tab.state();
                    s.title = info["title"].as_str().unwrap_or_default().to_string();
                    // A document being replaced (Chromium's new-tab page moving to another
                    // process) shows no URL for a moment: the last one known stays until the
                    // next is, or a tab on a page lumo does not read would pass for a blank one.
                    if let Some(url) = info["url"].as_str().filter(|u| !u.is_empty()) {
                        s.url = url.to_string();
                    }
                }
            }
            "Target.attachedToTarget" => {
                let parent = event.session_id.as_ref().and_then(|s| live.sessions().get(s).cloned());
                let info = &event.params["targetInfo"];
                if let (Some(tab), Some(child)) = (parent, event.params["sessionId"].as_str())
                    && info["type"] == "iframe"
                {
                    let frame = info["targetId"].as_str().unwrap_or_default();
                    tab.state().webmcp.record_tree(&json!({"frame": {"id": frame, "url": info["url"]}}));
                    adopt_frame(&live, &tab, frame, child);
                }
            }
            "Target.detachedFromTarget" => {
                if let Some(child) = event.params["sessionId"].as_str() {
                    let tab = live.sessions().remove(child);
                    if let Some(tab) = tab {
                        let gone: Vec<String> = {
                            let mut s = tab.state();
                            let gone = s
                                .children
                                .iter()
                                .filter(|c| c.session_id == child)
                                .map(|c| c.frame_id.clone())
                                .collect();
                            s.children.retain(|c| c.session_id != child);
                            gone
                        };
                        // The frame's page tools go with it.
                        for frame in gone {
                            tab.on_event("Page.frameDetached", &json!({"frameId": frame}));
                        }
                    }
                }
            }
            "Fetch.requestPaused" => {
                if let Some(session) = event.session_id.as_deref() {
                    on_request_paused(&live, session, &event.params);
                }
            }
            _ => {
                let Some(session) = event.session_id.as_deref() else { continue };
                let tab = live.sessions().get(session).cloned();
                match tab {
                    Some(tab) if tab.session_id == session => tab.on_event(&event.method, &event.params),
                    Some(tab) => tab.on_frame_event(session, &event.method, &event.params),
                    None => {}
                }
            }
        }
    }
}

/// Records a cross-origin frame of `tab` that got its own session, and
/// routes that session's events (console) to the tab.
fn adopt_frame(live: &Live, tab: &Arc<Tab>, frame_id: &str, session: &str) {
    {
        let mut s = tab.state();
        let index = s.next_child;
        s.next_child += 1;
        // The frame's document request ends in the frame's own process, before we
        // listen there: its frame exists, so count the request as done.
        for r in s.requests.iter_mut().filter(|r| r.frame_id == frame_id && r.resource_type == "Document") {
            r.finished = true;
        }
        s.children.push(ChildFrame {
            index,
            frame_id: frame_id.to_string(),
            session_id: session.to_string(),
            worlds: Worlds::default(),
        });
    }
    live.sessions().insert(session.to_string(), tab.clone());
    let cdp = live.cdp.clone();
    let session = session.to_string();
    let fetch = live.fetch_enable();
    tokio::spawn(async move {
        // Console, network, page tools and dialogs of the frame are the tab's too; the
        // helper runs in the frame's documents as in the tab's (its world is announced
        // to Runtime, see Tab::on_frame_event).
        let domains = ["Page.enable", "Runtime.enable", "Log.enable", "Network.enable", "WebMCP.enable"];
        let preload = ("Page.addScriptToEvaluateOnNewDocument", crate::helper::script::preload_frame());
        for (method, params) in fetch.into_iter().chain(domains.map(|m| (m, json!({})))).chain([preload]) {
            if let Err(e) = cdp.call(method, params, Some(&session)).await {
                tracing::debug!(%session, error = %e, method, "could not enable a domain in a frame");
            }
        }
    });
}

/// A paused document request: continue it, or fail it when its origin is
/// refused, so a blocked origin is never loaded (a redirect to one included:
/// each hop pauses again).
fn on_request_paused(live: &Live, session: &str, params: &Value) {
    // Paused by another lumo sharing the bridge, for its lists: its answer, not ours
    // (ours, "continue", would let through what its lists refuse).
    if !live.policy.intercepts() {
        return;
    }
    let url = params["request"]["url"].as_str().unwrap_or_default().to_string();
    let request = params["requestId"].clone();
    let (method, args) = match live.policy.check_request(&url) {
        Ok(()) => ("Fetch.continueRequest", json!({"requestId": request})),
        Err(why) => {
            if let Some(tab) = live.sessions().get(session) {
                tab.state().blocked = Some(why.clone());
            }
            tracing::debug!(%url, %why, "blocked a document request");
            ("Fetch.failRequest", json!({"requestId": request, "errorReason": "BlockedByClient"}))
        }
    };
    let (cdp, session) = (live.cdp.clone(), session.to_string());
    tokio::spawn(async move {
        if let Err(e) = cdp.call(method, args, Some(&session)).await {
            tracing::debug!(%session, error = %e, method, "could not answer a paused request");
        }
    });
}

/// Re-reads the tabs and their main frames after the carrier (the bridge) was
/// away: events sent meanwhile (a tab opened or closed, a navigation, a load)
/// may never have arrived, so what they would have said is fed in now.
async fn resync(live: Arc<Live>) {
    if let Ok(targets) = live.cdp.call("Target.getTargets", json!({}), None).await {
        let pages = page_targets(&targets);
        let known: Vec<String> = live.tabs().list.iter().map(|t| t.target_id.clone()).collect();
        for gone in known.iter().filter(|k| !pages.iter().any(|(id, _)| id == *k)) {
            live.forget(gone);
        }
        for (target, context) in pages.iter().filter(|(id, _)| !known.contains(id)) {
            if let Err(e) = live.attach(target, context).await {
                tracing::debug!(%target, error = %e, "could not attach to a tab found on resync");
            }
        }
    }
    let tabs: Vec<Arc<Tab>> = live.tabs().list.clone();
    for tab in tabs {
        let Ok(tree) = live.call_in(&tab.session_id, "Page.getFrameTree", json!({})).await else { continue };
        let frame = &tree["frameTree"]["frame"];
        let (url, id) = (frame["url"].as_str().unwrap_or_default(), frame["id"].as_str().unwrap_or_default());
        let moved = {
            let s = tab.state();
            s.url != url || s.main_frame != id
        };
        if moved {
            tab.on_event("Page.frameNavigated", &json!({"frame": frame}));
            tab.state().webmcp.record_tree(&tree["frameTree"]);
        }
        if tab.state().loading {
            let ready = json!({"expression": "document.readyState", "returnByValue": true});
            let state = live.call_in(&tab.session_id, "Runtime.evaluate", ready).await;
            if state.is_ok_and(|r| r["result"]["value"] == "complete") {
                tab.on_event("Page.loadEventFired", &json!({}));
            }
        }
    }
}

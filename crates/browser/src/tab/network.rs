//! The `Network` domain of one tab: its request log (one entry per request,
//! redirects folded into their latest hop) and when the network last moved,
//! which waits for a quiet page read.

use std::time::Instant;

use serde_json::Value;

use super::state::{NETWORK_CAP, Request, TabState, push_capped};

/// Applies one `Network.*` event; returns whether it changed anything.
pub(super) fn decode(s: &mut TabState, method: &str, params: &Value) -> bool {
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match method {
        "Network.requestWillBeSent" => {
            let request = &params["request"];
            let id = str_of(&params["requestId"]);
            // A redirect reuses the id (and ends with one loadingFinished): keep
            // one entry, the latest hop, and count it in flight once.
            let hop = s.requests.iter().find(|r| r.id == id).map(|r| r.seq);
            s.last_network_activity = Some(Instant::now());
            s.requests.retain(|r| r.id != id);
            let seq = hop.unwrap_or(s.request_seq + 1);
            s.request_seq = s.request_seq.max(seq);
            let entry = Request {
                id,
                seq,
                url: str_of(&request["url"]),
                method: str_of(&request["method"]),
                resource_type: str_of(&params["type"]),
                request_headers: request["headers"].clone(),
                post_data: request["postData"].as_str().map(str::to_string),
                started: Some(Instant::now()),
                frame_id: str_of(&params["frameId"]),
                ..Request::default()
            };
            push_capped(&mut s.requests, entry, NETWORK_CAP);
        }
        "Network.responseReceived" => {
            let response = &params["response"];
            if let Some(r) = find_request(s, &params["requestId"]) {
                r.status = response["status"].as_i64();
                r.mime = str_of(&response["mimeType"]);
                r.response_headers = response["headers"].clone();
                if r.resource_type.is_empty() {
                    r.resource_type = str_of(&params["type"]);
                }
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            s.last_network_activity = Some(Instant::now());
            let failed = method == "Network.loadingFailed";
            if let Some(r) = find_request(s, &params["requestId"]) {
                r.finished = true;
                r.encoded_size = params["encodedDataLength"].as_f64();
                if failed {
                    r.failure = Some(str_of(&params["errorText"]));
                }
            }
        }
        _ => return false,
    }
    true
}

fn find_request<'a>(s: &'a mut TabState, id: &Value) -> Option<&'a mut Request> {
    let id = id.as_str()?;
    s.requests.iter_mut().rev().find(|r| r.id == id)
}

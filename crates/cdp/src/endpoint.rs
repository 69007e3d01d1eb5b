//! Attaching to a browser that is already running (`--cdp-endpoint`).

use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::connection::Connection;
use crate::error::CdpError;

/// How long reading `/json/version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// `/json/version` is a few hundred bytes; anything much bigger is not a browser.
const VERSION_MAX: usize = 64 * 1024;

/// Connects to `endpoint`: a `ws://…` DevTools address as is, or an
/// `http://host:port` whose `/json/version` names the browser's WebSocket.
pub async fn connect_endpoint(endpoint: &str) -> Result<Connection, CdpError> {
    if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") {
        return Connection::connect(endpoint).await;
    }
    let ws_url = browser_ws_url(endpoint).await?;
    Connection::connect(&ws_url).await
}

async fn browser_ws_url(endpoint: &str) -> Result<String, CdpError> {
    let fail = |reason: String| CdpError::Connect { endpoint: endpoint.to_string(), reason };
    let authority = endpoint
        .strip_prefix("http://")
        .ok_or_else(|| fail("expected ws://… or http://host:port".into()))?
        .split('/')
        .next()
        .unwrap_or_default();
    if authority.is_empty() {
        return Err(fail("expected ws://… or http://host:port".into()));
    }
    let body = tokio::time::timeout(VERSION_TIMEOUT, get_version(authority))
        .await
        .map_err(|_| fail(format!("/json/version did not answer within {VERSION_TIMEOUT:?}")))?
        .map_err(fail)?;
    let version: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| fail(format!("/json/version is not JSON: {e}")))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| fail("/json/version has no webSocketDebuggerUrl".into()))
}

/// The body of `GET http://AUTHORITY/json/version`, over HTTP/1.1.
async fn get_version(authority: &str) -> Result<Bytes, String> {
    let stream = TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let request = hyper::Request::get("/json/version")
        .header(hyper::header::HOST, authority)
        .body(Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    let answered = async {
        let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("/json/version answered {status}"));
        }
        Limited::new(response.into_body(), VERSION_MAX)
            .collect()
            .await
            .map(|body| body.to_bytes())
            .map_err(|e| format!("cannot read /json/version: {e}"))
    }
    .await;
    driver.abort();
    answered
}

//! Attaching to a browser that is already running (`--cdp-endpoint`).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{CdpError, Connection};

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
        .trim_end_matches('/');
    let authority = authority.split('/').next().unwrap_or(authority);
    let mut stream = TcpStream::connect(authority).await.map_err(|e| fail(e.to_string()))?;
    let request = format!("GET /json/version HTTP/1.0\r\nHost: {authority}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.map_err(|e| fail(e.to_string()))?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.map_err(|e| fail(e.to_string()))?;
    let response = String::from_utf8_lossy(&response);
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    let version: serde_json::Value =
        serde_json::from_str(body).map_err(|e| fail(format!("/json/version is not JSON: {e}")))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| fail("/json/version has no webSocketDebuggerUrl".into()))
}

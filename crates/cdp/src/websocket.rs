//! CDP over a WebSocket: how lumo talks to a browser it attached to
//! (`--cdp-endpoint ws://…`).

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::connection::Connection;
use crate::connection::MAX_MESSAGE;
use crate::error::CdpError;

impl Connection {
    /// Opens a WebSocket to `ws_url` (a `ws://…/devtools/browser/…` address).
    pub async fn connect(ws_url: &str) -> Result<Self, CdpError> {
        connect(ws_url).await
    }
}

/// Opens a WebSocket to `ws_url` and runs a [`Connection`] over it.
pub(crate) async fn connect(ws_url: &str) -> Result<Connection, CdpError> {
    let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
    let (socket, _) = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true)
        .await
        .map_err(|e| CdpError::Connect { endpoint: ws_url.to_string(), reason: e.to_string() })?;
    let (sink, stream) = socket.split();
    let outgoing = sink
        .sink_map_err(|_| CdpError::ConnectionLost)
        .with(|text: String| async move { Ok::<_, CdpError>(Message::text(text)) });
    // Text frames carry CDP; binary ones too if valid UTF-8. A close frame or
    // an error ends the stream; pings and pongs are the library's business.
    let incoming = stream
        .take_while(|message| std::future::ready(!matches!(message, Ok(Message::Close(_)))))
        .filter_map(|message| {
            std::future::ready(match message {
                Ok(Message::Text(text)) => Some(Ok(text)),
                Ok(Message::Binary(bytes)) => bytes.try_into().ok().map(Ok),
                Ok(_) => None,
                Err(e) => {
                    tracing::debug!(error = %e, "the CDP WebSocket failed");
                    Some(Err(CdpError::ConnectionLost))
                }
            })
        });
    Ok(Connection::over(incoming, outgoing))
}

//! A lumo that attaches to the lumo owning the bridge address (see
//! [`super::role`]): a loopback WebSocket with no `Origin` (no web page can
//! open one), on which both sides prove they hold the same bridge secret.
//! The owner's `ready` / `away` attach and detach this process's relay as an
//! extension socket would, so its calls wait, resend and deduplicate the same way.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::auth::Store;
use super::relay::Relay;

/// How long the hello may take.
const HELLO_WITHIN: Duration = Duration::from_secs(5);
/// How often the owner is pinged, and how long it may stay silent before this
/// lumo gives up on it (a stopped or hung owner must not hold calls for ever).
const PING_EVERY: Duration = Duration::from_secs(3);
const SILENCE_LIMIT: Duration = Duration::from_secs(8);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A connection to the owning lumo that passed the hello.
pub(crate) struct Attached(Socket);

/// Says hello to whatever listens on `addr`; `Err` says why it is not a lumo we may attach to.
pub(crate) async fn hello(addr: SocketAddr, store: &Store, lane: u64) -> Result<Attached, String> {
    let url = format!("ws://{addr}/bridge");
    let (mut ws, _) = tokio::time::timeout(HELLO_WITHIN, tokio_tungstenite::connect_async(url))
        .await
        .map_err(|_| format!("{addr} did not answer a WebSocket handshake within 5 s; it is not a lumo bridge"))?
        .map_err(|e| format!("{addr} is not a lumo bridge ({e})"))?;
    let nonce = Store::nonce().map_err(|e| e.to_string())?;
    let proof = store.proof("client", &nonce).map_err(|e| e.to_string())?;
    let hello = json!({"type": "client", "lane": lane, "nonce": nonce, "proof": proof});
    ws.send(Message::text(hello.to_string())).await.map_err(|e| format!("{addr}: {e}"))?;
    let welcome = tokio::time::timeout(HELLO_WITHIN, ws.next())
        .await
        .map_err(|_| format!("{addr} did not answer lumo's hello within 5 s; it is not a lumo bridge"))?;
    let welcome: Value = match welcome {
        Some(Ok(Message::Text(text))) => serde_json::from_str(text.as_str()).unwrap_or_default(),
        Some(Ok(Message::Close(Some(frame)))) => return Err(format!("the lumo on {addr} refused: {}", frame.reason)),
        other => return Err(format!("{addr} answered lumo's hello with {other:?}; it is not a lumo bridge")),
    };
    let owner_proof = welcome["proof"].as_str().unwrap_or_default();
    if welcome["type"] != "welcome" || !store.check_proof("owner", &nonce, owner_proof) {
        return Err(format!("{addr} could not prove it is a lumo with this bridge state; it is not ours"));
    }
    Ok(Attached(ws))
}

impl Attached {
    /// Relays through the owner until the connection drops (the owner stopped).
    pub(crate) async fn relay(self, relay: &Relay) {
        let (mut tx, mut rx) = self.0.split();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        let mut attached = None;
        let mut ping = tokio::time::interval(PING_EVERY);
        let mut heard = tokio::time::Instant::now();
        loop {
            tokio::select! {
                Some(text) = out_rx.recv() => if tx.send(Message::text(text)).await.is_err() { break },
                _ = ping.tick() => {
                    if heard.elapsed() > SILENCE_LIMIT {
                        tracing::warn!("bridge: the owning lumo has not answered for {} s; leaving it", SILENCE_LIMIT.as_secs());
                        break;
                    }
                    if tx.send(Message::text(r#"{"type":"ping"}"#)).await.is_err() { break }
                }
                incoming = rx.next() => {
                    heard = tokio::time::Instant::now();
                    let text = match incoming {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                        Some(Ok(_)) => continue,
                    };
                    let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else { continue };
                    match message["type"].as_str() {
                        Some("ready") => attached = Some(relay.attach(out_tx.clone())),
                        Some("away") => {
                            if let Some(number) = attached.take() {
                                relay.detach(number);
                            }
                        }
                        Some("cdp") => relay.extension_sent(&message["msg"]),
                        Some("pong") => {}
                        other => tracing::warn!(kind = ?other, "bridge: ignored a message of unknown type from the owning lumo"),
                    }
                }
            }
        }
        if let Some(number) = attached {
            relay.detach(number);
        }
    }
}

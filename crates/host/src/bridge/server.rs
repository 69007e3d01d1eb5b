//! The WebSocket endpoint the extension connects to: checks `Origin`, then
//! the first message (`auth`, `refresh` or `pair`), then relays CDP and
//! answers heartbeats and token refreshes. Every refusal is logged with its
//! reason and sent to the extension as a close code and reason.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::auth::{Expiry, Kind, REFRESH_TTL, Store};
use super::{BridgeError, BridgeOptions, Relay, close};

/// How long a new socket has to authenticate.
const AUTH_WITHIN: Duration = Duration::from_secs(10);

/// A running bridge endpoint.
#[derive(Debug)]
pub struct Bridge {
    relay: Relay,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Bridge {
    /// The relay (its connection is what browser tools run over).
    pub fn relay(&self) -> &Relay {
        &self.relay
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Shared {
    options: BridgeOptions,
    store: Store,
    relay: Relay,
    epoch: String,
}

/// Starts listening (loopback only).
pub async fn start(options: BridgeOptions) -> Result<Bridge, BridgeError> {
    if !options.addr.ip().is_loopback() {
        return Err(BridgeError::Listen(format!(
            "{} is not a loopback address; the bridge listens on 127.0.0.1 or ::1 only",
            options.addr
        )));
    }
    let store = Store::open(&options.dir)?;
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|e| BridgeError::Listen(format!("cannot listen on {}: {e}", options.addr)))?;
    let addr = listener.local_addr().map_err(|e| BridgeError::Listen(e.to_string()))?;
    let mut epoch = [0u8; 8];
    getrandom::fill(&mut epoch).map_err(|e| BridgeError::State(format!("no randomness: {e}")))?;
    let relay = Relay::new(options.wait);
    let shared = Arc::new(Shared { options, store, relay: relay.clone(), epoch: hex::encode(epoch) });
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else { continue };
            let shared = shared.clone();
            tokio::spawn(async move { handle(stream, peer, shared).await });
        }
    });
    tracing::info!(%addr, "bridge listening");
    Ok(Bridge { relay, addr, task })
}

type Tx = futures_util::stream::SplitSink<tokio_tungstenite::WebSocketStream<TcpStream>, Message>;

async fn refuse(tx: &mut Tx, peer: SocketAddr, code: u16, reason: &str) {
    tracing::warn!(%peer, code, reason, "bridge: refused a connection");
    // A close frame carries at most 123 bytes of reason; the log has it whole.
    let mut cut = reason.len().min(123);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    let frame = CloseFrame { code: CloseCode::from(code), reason: reason[..cut].to_string().into() };
    let _ = tx.send(Message::Close(Some(frame))).await;
    let _ = tx.close().await;
}

fn token_message(shared: &Shared, with_refresh: bool) -> Result<(String, Expiry), String> {
    let ext = &shared.options.extension_id;
    let ttl = shared.options.token_ttl;
    let token = shared.store.issue(Kind::Access, ext, ttl).map_err(|e| e.to_string())?;
    let expiry = shared.store.verify(&token, Kind::Access, ext)?;
    let mut message = json!({"type": "token", "token": token, "expires_in": ttl.as_secs_f64()});
    if with_refresh {
        message["refresh"] = shared.store.issue(Kind::Refresh, ext, REFRESH_TTL).map_err(|e| e.to_string())?.into();
    }
    Ok((message.to_string(), expiry))
}

/// Checks the first message; returns what to send back first (a token, if any) and the access expiry.
fn authenticate(shared: &Shared, first: &Value) -> Result<(Option<String>, Expiry), (u16, String)> {
    let ext = &shared.options.extension_id;
    let field = |name: &str| first[name].as_str().unwrap_or_default();
    match first["type"].as_str() {
        Some("auth") => {
            let expiry = shared
                .store
                .verify(field("token"), Kind::Access, ext)
                .map_err(|why| (close::BAD_TOKEN, format!("access token refused: {why}")))?;
            Ok((None, expiry))
        }
        Some("refresh") => {
            shared.store.verify(field("refresh"), Kind::Refresh, ext).map_err(|why| {
                (close::BAD_CODE, format!("refresh token refused: {why}; pair again with `lumo pair`"))
            })?;
            let (message, expiry) = token_message(shared, false).map_err(|e| (close::BAD_TOKEN, e))?;
            Ok((Some(message), expiry))
        }
        Some("pair") => {
            let ok = shared.store.redeem(field("code")).map_err(|e| (close::BAD_CODE, e.to_string()))?;
            if !ok {
                return Err((
                    close::BAD_CODE,
                    "pairing code refused: unknown, used or expired; run `lumo pair` again".into(),
                ));
            }
            let (message, expiry) = token_message(shared, true).map_err(|e| (close::BAD_TOKEN, e))?;
            Ok((Some(message), expiry))
        }
        other => Err((close::NO_AUTH, format!("the first message must be auth, refresh or pair, not {other:?}"))),
    }
}

async fn handle(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let mut origin = None;
    // The handshake never fails here: a wrong Origin is refused after it, with a close reason.
    #[allow(clippy::result_large_err)]
    let callback = |request: &Request, response: Response| {
        origin = request.headers().get("origin").and_then(|o| o.to_str().ok()).map(str::to_string);
        Ok(response)
    };
    let ws = match tokio_tungstenite::accept_hdr_async(stream, callback).await {
        Ok(ws) => ws,
        Err(e) => {
            tracing::warn!(%peer, error = %e, "bridge: a connection that is not a WebSocket");
            return;
        }
    };
    let (mut tx, mut rx) = ws.split();
    let expected = format!("chrome-extension://{}", shared.options.extension_id);
    if origin.as_deref() != Some(expected.as_str()) {
        let reason =
            format!("origin {} refused; only the paired extension may connect", origin.as_deref().unwrap_or("(none)"));
        return refuse(&mut tx, peer, close::BAD_ORIGIN, &reason).await;
    }
    let first = match tokio::time::timeout(AUTH_WITHIN, next_json(&mut rx)).await {
        Ok(Some(first)) => first,
        _ => return refuse(&mut tx, peer, close::NO_AUTH, "no auth, refresh or pair message within 10 s").await,
    };
    let mut expiry = match authenticate(&shared, &first) {
        Ok((token, expiry)) => {
            if let Some(token) = token {
                let _ = tx.send(Message::text(token)).await;
            }
            expiry
        }
        Err((code, reason)) => return refuse(&mut tx, peer, code, &reason).await,
    };
    if tx.send(Message::text(Relay::ready(&shared.epoch))).await.is_err() {
        return;
    }
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let number = shared.relay.attach(out_tx.clone());
    shared.options.providers.attach(number, out_tx);
    tracing::info!(%peer, "bridge: extension connected");
    let silence = shared.options.silence_limit;
    loop {
        tokio::select! {
            out = out_rx.recv() => match out {
                Some(text) => if tx.send(Message::text(text)).await.is_err() { break },
                None => {
                    refuse(&mut tx, peer, close::REPLACED, "a newer connection from the extension replaced this one").await;
                    return;
                }
            },
            incoming = tokio::time::timeout(silence, next_json(&mut rx)) => {
                let message = match incoming {
                    Err(_) => {
                        let reason = format!("no message for {} s (heartbeat lost)", silence.as_secs());
                        refuse(&mut tx, peer, close::SILENT, &reason).await;
                        break;
                    }
                    Ok(None) => break,
                    Ok(Some(message)) => message,
                };
                if expiry.passed() {
                    refuse(&mut tx, peer, close::BAD_TOKEN, "access token expired; refresh it").await;
                    break;
                }
                match message["type"].as_str() {
                    Some("cdp") => shared.relay.extension_sent(&message["msg"]),
                    Some("ping") => {
                        let _ = tx.send(Message::text(json!({"type": "pong", "n": message["n"]}).to_string())).await;
                    }
                    Some("pong") => {}
                    Some(kind) if kind.starts_with("provider.") => shared.options.providers.bridge_sent(&message),
                    Some("refresh") => match authenticate(&shared, &message) {
                        Ok((Some(token), new_expiry)) => {
                            expiry = new_expiry;
                            let _ = tx.send(Message::text(token)).await;
                        }
                        Ok((None, _)) => {}
                        Err((code, reason)) => {
                            refuse(&mut tx, peer, code, &reason).await;
                            break;
                        }
                    },
                    other => tracing::warn!(%peer, kind = ?other, "bridge: ignored a message of unknown type"),
                }
            }
        }
    }
    shared.relay.detach(number);
    shared.options.providers.detach(number);
    tracing::info!(%peer, "bridge: extension disconnected");
}

/// The next text message as JSON; `None` when the socket closed or failed.
async fn next_json(
    rx: &mut futures_util::stream::SplitStream<tokio_tungstenite::WebSocketStream<TcpStream>>,
) -> Option<Value> {
    loop {
        match rx.next().await? {
            Ok(Message::Text(text)) => match serde_json::from_str(text.as_str()) {
                Ok(v) => return Some(v),
                Err(e) => tracing::warn!(error = %e, "bridge: a message that is not JSON"),
            },
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

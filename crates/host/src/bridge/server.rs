//! The WebSocket endpoint the extension connects to: checks `Origin`, then
//! the first message (`auth`, `refresh` or `pair`), then relays CDP and
//! answers heartbeats and token refreshes. Every refusal is logged and
//! audited with its reason and sent to the extension as a close code and
//! reason. Sockets without an `Origin` are other lumo processes attaching
//! (see [`super::role`]); the owner routes their commands and answers.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::auth::{Expiry, Kind, REFRESH_TTL, Store};
use super::hub::{self, Clients};
use super::options::{BridgeError, BridgeOptions, close};
use super::relay::{self, Relay};
use crate::audit::{Audit, Entry};

/// How long a new socket has to authenticate.
const AUTH_WITHIN: Duration = Duration::from_secs(10);

/// What every connection of the bridge endpoint shares.
pub(crate) struct Shared {
    pub(crate) options: BridgeOptions,
    pub(crate) store: Store,
    pub(crate) relay: Relay,
    epoch: String,
    /// Other lumo processes relaying through this one (while it owns the address).
    clients: Clients,
    /// Where refused connections are recorded (set once the gate's log is open).
    pub(crate) audit: OnceLock<Audit>,
}

impl Shared {
    pub(crate) fn new(options: BridgeOptions) -> Result<Self, BridgeError> {
        if !options.addr.ip().is_loopback() {
            return Err(BridgeError::Listen(format!(
                "{} is not a loopback address; the bridge listens on 127.0.0.1 or ::1 only",
                options.addr
            )));
        }
        let store = Store::open(&options.dir)?;
        let mut epoch = [0u8; 8];
        getrandom::fill(&mut epoch).map_err(|e| BridgeError::State(format!("no randomness: {e}")))?;
        let relay = Relay::new(options.wait);
        Ok(Self {
            options,
            store,
            relay,
            epoch: hex::encode(epoch),
            clients: Clients::default(),
            audit: OnceLock::new(),
        })
    }
}

/// Accepts the extension (and other lumo processes) on `listener`, for good.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    tracing::info!(addr = ?listener.local_addr().ok(), "bridge listening");
    loop {
        let Ok((stream, peer)) = listener.accept().await else { continue };
        let shared = shared.clone();
        tokio::spawn(async move { handle(stream, peer, shared).await });
    }
}

/// Why a connection was refused: its close code, the audit outcome, the reason it is told.
struct Refusal {
    code: u16,
    outcome: &'static str,
    reason: String,
}

impl Refusal {
    fn new(code: u16, outcome: &'static str, reason: impl Into<String>) -> Self {
        Self { code, outcome, reason: reason.into() }
    }
}

type Tx = futures_util::stream::SplitSink<tokio_tungstenite::WebSocketStream<TcpStream>, Message>;
type Rx = futures_util::stream::SplitStream<tokio_tungstenite::WebSocketStream<TcpStream>>;

/// Closes with the refusal's code and reason, logs it and records it in the audit log.
async fn refuse<S>(tx: &mut S, peer: SocketAddr, shared: &Shared, origin: Option<&str>, refusal: Refusal)
where
    S: futures_util::Sink<Message> + Unpin,
{
    let Refusal { code, outcome, reason } = refusal;
    let reason = reason.as_str();
    tracing::warn!(%peer, code, outcome, reason, "bridge: refused a connection");
    if let Some(audit) = shared.audit.get() {
        audit.record(Entry {
            at_ms: crate::audit::now_ms(),
            client: peer.to_string(),
            session: String::new(),
            source: "bridge".into(),
            tool: "connect".into(),
            target: origin.unwrap_or_default().to_string(),
            params_hash: String::new(),
            outcome: outcome.into(),
            duration_ms: 0,
        });
    }
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

/// The audit outcome of a refused access token: expired, or wrong.
fn token_outcome(why: &str) -> &'static str {
    if why.contains("expired") { "token_expired" } else { "bad_token" }
}

/// Checks the first message; returns what to send back first (a token, if any) and the access expiry.
fn authenticate(shared: &Shared, first: &Value) -> Result<(Option<String>, Expiry), Refusal> {
    let ext = &shared.options.extension_id;
    let field = |name: &str| first[name].as_str().unwrap_or_default();
    let issue_failed = |e: String| Refusal::new(close::BAD_TOKEN, "bad_token", e);
    match first["type"].as_str() {
        Some("auth") => {
            let expiry = shared.store.verify(field("token"), Kind::Access, ext).map_err(|why| {
                Refusal::new(close::BAD_TOKEN, token_outcome(&why), format!("access token refused: {why}"))
            })?;
            Ok((None, expiry))
        }
        Some("refresh") => {
            shared.store.verify(field("refresh"), Kind::Refresh, ext).map_err(|why| {
                let outcome = if why.contains("expired") { "refresh_expired" } else { "bad_refresh" };
                Refusal::new(
                    close::BAD_CODE,
                    outcome,
                    format!("refresh token refused: {why}; pair again with `lumo pair`"),
                )
            })?;
            let (message, expiry) = token_message(shared, false).map_err(issue_failed)?;
            Ok((Some(message), expiry))
        }
        Some("pair") => {
            let ok = shared
                .store
                .redeem(field("code"))
                .map_err(|e| Refusal::new(close::BAD_CODE, "bad_pair_code", e.to_string()))?;
            if !ok {
                return Err(Refusal::new(
                    close::BAD_CODE,
                    "bad_pair_code",
                    "pairing code refused: unknown, used or expired; run `lumo pair` again",
                ));
            }
            let (message, expiry) = token_message(shared, true).map_err(issue_failed)?;
            Ok((Some(message), expiry))
        }
        other => Err(Refusal::new(
            close::NO_AUTH,
            "no_auth",
            format!("the first message must be auth, refresh or pair, not {other:?}"),
        )),
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
    // Browsers always send an Origin: a socket without one is another lumo process, or nothing.
    let Some(origin) = origin else { return serve_lumo(tx, rx, peer, shared).await };
    let expected = format!("chrome-extension://{}", shared.options.extension_id);
    if origin != expected {
        let reason = format!("origin {origin} refused; only the paired extension may connect");
        let origin = Some(origin.as_str());
        return refuse(&mut tx, peer, &shared, origin, Refusal::new(close::BAD_ORIGIN, "wrong_origin", reason)).await;
    }
    let origin = Some(origin.as_str());
    let first = match tokio::time::timeout(AUTH_WITHIN, next_json(&mut rx)).await {
        Ok(Some(first)) => first,
        _ => {
            let refusal = Refusal::new(close::NO_AUTH, "no_auth", "no auth, refresh or pair message within 10 s");
            return refuse(&mut tx, peer, &shared, origin, refusal).await;
        }
    };
    let mut expiry = match authenticate(&shared, &first) {
        Ok((token, expiry)) => {
            if let Some(token) = token {
                let _ = tx.send(Message::text(token)).await;
            }
            expiry
        }
        Err(refusal) => return refuse(&mut tx, peer, &shared, origin, refusal).await,
    };
    if tx.send(Message::text(Relay::ready(&shared.epoch))).await.is_err() {
        return;
    }
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let number = shared.relay.attach(out_tx.clone());
    shared.options.providers.attach(number, out_tx);
    // The attached lumos send their unanswered commands to this socket now.
    shared.clients.broadcast(hub::READY);
    tracing::info!(%peer, "bridge: extension connected");
    let silence = shared.options.silence_limit;
    loop {
        tokio::select! {
            out = out_rx.recv() => match out {
                Some(text) => if tx.send(Message::text(text)).await.is_err() { break },
                None => {
                    tracing::info!(%peer, "bridge: a newer connection from the extension replaced this one");
                    let frame = CloseFrame {
                        code: CloseCode::from(close::REPLACED),
                        reason: "a newer connection from the extension replaced this one".into(),
                    };
                    let _ = tx.send(Message::Close(Some(frame))).await;
                    return;
                }
            },
            incoming = tokio::time::timeout(silence, next_json(&mut rx)) => {
                let message = match incoming {
                    Err(_) => {
                        let reason = format!("no message for {} s (heartbeat lost)", silence.as_secs());
                        refuse(&mut tx, peer, &shared, origin, Refusal::new(close::SILENT, "silent", reason)).await;
                        break;
                    }
                    Ok(None) => break,
                    Ok(Some(message)) => message,
                };
                if expiry.passed() {
                    let refusal = Refusal::new(close::BAD_TOKEN, "token_expired", "access token expired; refresh it");
                    refuse(&mut tx, peer, &shared, origin, refusal).await;
                    break;
                }
                match message["type"].as_str() {
                    Some("cdp") => route(&shared, &message),
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
                        Err(refusal) => {
                            refuse(&mut tx, peer, &shared, origin, refusal).await;
                            break;
                        }
                    },
                    other => tracing::warn!(%peer, kind = ?other, "bridge: ignored a message of unknown type"),
                }
            }
        }
    }
    if shared.relay.detach(number) {
        shared.clients.broadcast(hub::AWAY);
    }
    shared.options.providers.detach(number);
    tracing::info!(%peer, "bridge: extension disconnected");
}

/// A CDP message from the extension: an answer goes to the lumo whose lane
/// its id carries, an event to every lumo (each keeps those of its sessions).
fn route(shared: &Shared, message: &Value) {
    let msg = &message["msg"];
    match msg.get("id").and_then(Value::as_u64).map(relay::lane_of) {
        Some(lane) if lane != shared.relay.lane() => shared.clients.send(lane, message.to_string()),
        Some(_) => shared.relay.extension_sent(msg),
        None => {
            shared.relay.extension_sent(msg);
            shared.clients.broadcast(&message.to_string());
        }
    }
}

/// Another lumo process that relays through this one (see [`super::role`]).
async fn serve_lumo(mut tx: Tx, mut rx: Rx, peer: SocketAddr, shared: Arc<Shared>) {
    let hello = tokio::time::timeout(AUTH_WITHIN, next_json(&mut rx)).await.ok().flatten().unwrap_or_default();
    let nonce = hello["nonce"].as_str().unwrap_or_default();
    let proven = hello["type"] == "client"
        && !nonce.is_empty()
        && shared.store.check_proof("client", nonce, hello["proof"].as_str().unwrap_or_default());
    if !proven {
        let reason =
            "a connection without an Origin must be a lumo proving it holds this bridge's secret (same --bridge-dir)";
        return refuse(&mut tx, peer, &shared, None, Refusal::new(close::BAD_CLIENT, "bad_client", reason)).await;
    }
    let Ok(proof) = shared.store.proof("owner", nonce) else { return };
    if tx.send(Message::text(json!({"type": "welcome", "proof": proof}).to_string())).await.is_err() {
        return;
    }
    let lane = hello["lane"].as_u64().unwrap_or_default();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let joined = if lane == shared.relay.lane() {
        None
    } else {
        shared.clients.join(lane, out_tx, || shared.relay.is_connected())
    };
    let Some(number) = joined else {
        // One in a million: the lumo starts again with another lane.
        let refusal = Refusal::new(close::BAD_CLIENT, "lane_taken", format!("lane {lane} is taken; start again"));
        return refuse(&mut tx, peer, &shared, None, refusal).await;
    };
    tracing::info!(%peer, lane, "bridge: another lumo attached");
    loop {
        tokio::select! {
            Some(text) = out_rx.recv() => if tx.send(Message::text(text)).await.is_err() { break },
            incoming = next_json(&mut rx) => match incoming {
                None => break,
                // Its commands carry its lane; it keeps them until answered and sends them again after `ready`.
                Some(message) if message["type"] == "cdp" => shared.relay.forward(message.to_string()),
                Some(message) if message["type"] == "ping" => {
                    if tx.send(Message::text(r#"{"type":"pong"}"#)).await.is_err() { break }
                }
                Some(message) => tracing::warn!(%peer, kind = ?message["type"], "bridge: ignored a message from an attached lumo"),
            }
        }
    }
    shared.clients.leave(lane, number);
    tracing::info!(%peer, lane, "bridge: an attached lumo left");
}

/// The next text message as JSON; `None` when the socket closed or failed.
async fn next_json(rx: &mut Rx) -> Option<Value> {
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

//! One CDP WebSocket: request ids, the pending map, the reader task, events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::CdpError;

/// How long [`Connection::call`] waits for an answer.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A full accessibility tree or a big screenshot can be hundreds of MB; the
/// tungstenite defaults (64 MiB message, 16 MiB frame) are too small.
const MAX_MESSAGE: usize = 1 << 30;

/// A CDP event, with the flattened session it came from.
#[derive(Debug, Clone)]
pub struct Event {
    /// e.g. `Page.loadEventFired`.
    pub method: String,
    /// The event's parameters.
    pub params: Value,
    /// The session the event belongs to; `None` for the browser session.
    pub session_id: Option<String>,
}

type Reply = oneshot::Sender<Result<Value, CdpError>>;

struct Shared {
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, (String, Reply)>>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<Arc<Event>>>>,
    closed: watch::Sender<bool>,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, HashMap<u64, (String, Reply)>> {
        // A poisoned lock only means another thread panicked mid-insert; the map is still usable.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn subscribers(&self) -> MutexGuard<'_, Vec<mpsc::UnboundedSender<Arc<Event>>>> {
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A cloneable handle to one CDP WebSocket.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<String>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("closed", &self.is_closed()).finish()
    }
}

impl Connection {
    /// Opens a WebSocket to `ws_url` (a `ws://…/devtools/browser/…` address).
    pub async fn connect(ws_url: &str) -> Result<Self, CdpError> {
        let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
        let (socket, _) = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true)
            .await
            .map_err(|e| CdpError::Connect { endpoint: ws_url.to_string(), reason: e.to_string() })?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut outgoing_rx) = mpsc::unbounded_channel::<String>();
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
            closed: watch::channel(false).0,
        });

        let writer_shared = shared.clone();
        tokio::spawn(async move {
            while let Some(text) = outgoing_rx.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
            fail_all(&writer_shared);
        });

        let reader_shared = shared.clone();
        tokio::spawn(async move {
            while let Some(message) = stream.next().await {
                match message {
                    Ok(Message::Text(text)) => dispatch(&reader_shared, text.as_str()),
                    Ok(Message::Binary(bytes)) => {
                        if let Ok(text) = std::str::from_utf8(&bytes) {
                            dispatch(&reader_shared, text);
                        }
                    }
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            fail_all(&reader_shared);
        });

        Ok(Self { shared, outgoing })
    }

    /// Sends `method` with `params`, to `session` when given, and waits up
    /// to [`DEFAULT_CALL_TIMEOUT`] for the result.
    pub async fn call(&self, method: &str, params: Value, session: Option<&str>) -> Result<Value, CdpError> {
        self.call_with_timeout(method, params, session, DEFAULT_CALL_TIMEOUT).await
    }

    /// Like [`Connection::call`] with an explicit timeout.
    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        if self.is_closed() {
            return Err(CdpError::ConnectionLost);
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.to_string());
        }
        let (tx, rx) = oneshot::channel();
        self.shared.pending().insert(id, (method.to_string(), tx));
        // The socket may have closed between the check above and the insert.
        if self.is_closed() || self.outgoing.send(message.to_string()).is_err() {
            self.shared.pending().remove(&id);
            return Err(CdpError::ConnectionLost);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(CdpError::ConnectionLost),
            Err(_) => {
                self.shared.pending().remove(&id);
                Err(CdpError::Timeout { method: method.to_string(), after: timeout })
            }
        }
    }

    /// Every event from now on, from every session. Drop the receiver to stop.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Arc<Event>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.shared.subscribers().push(tx);
        rx
    }

    /// True once the socket is gone; every later call fails at once.
    pub fn is_closed(&self) -> bool {
        *self.shared.closed.borrow()
    }

    /// Resolves when the socket closes.
    pub async fn closed(&self) {
        let mut rx = self.shared.closed.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }
}

fn dispatch(shared: &Shared, text: &str) {
    let Ok(mut message) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(len = text.len(), "ignoring a non-JSON CDP message");
        return;
    };
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        let Some((method, reply)) = shared.pending().remove(&id) else {
            return; // the caller timed out and went away
        };
        let result = match message.get_mut("error") {
            Some(error) => Err(CdpError::Protocol {
                method,
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string(),
            }),
            None => Ok(message.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
        };
        let _ = reply.send(result);
        return;
    }
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return;
    };
    let event = Arc::new(Event {
        method: method.to_string(),
        session_id: message.get("sessionId").and_then(Value::as_str).map(str::to_string),
        params: message.get_mut("params").map(Value::take).unwrap_or(Value::Null),
    });
    shared.subscribers().retain(|tx| tx.send(event.clone()).is_ok());
}

fn fail_all(shared: &Shared) {
    shared.closed.send_replace(true);
    for (_, (_, reply)) in shared.pending().drain() {
        let _ = reply.send(Err(CdpError::ConnectionLost));
    }
    // Dropping the senders ends every subscriber's stream.
    shared.subscribers().clear();
}

//! One CDP connection: request ids, the pending map, the reader task, events.
//!
//! The connection does not know how its messages travel: it runs over any
//! stream of incoming text messages and sink of outgoing ones (see
//! [`Connection::over`]). `websocket` carries it over a WebSocket
//! (attach mode), `pipe` over the launched browser's
//! `--remote-debugging-pipe` file descriptors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::CdpError;

/// How long [`Connection::call`] waits for an answer.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest message a carrier accepts. A full accessibility tree or a big
/// screenshot can be hundreds of MB; the tungstenite defaults (64 MiB message,
/// 16 MiB frame) are too small.
pub(crate) const MAX_MESSAGE: usize = 1 << 30;

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

/// A cloneable handle to one CDP connection.
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
    /// Runs CDP over any carrier: `incoming` yields each message the browser
    /// sends (an `Err` or the end of the stream means the carrier is gone);
    /// `outgoing` takes each message to send. One task reads, one writes;
    /// when either side ends, every pending call fails with
    /// [`CdpError::ConnectionLost`].
    pub fn over<I, T, O>(incoming: I, outgoing: O) -> Self
    where
        I: Stream<Item = Result<T, CdpError>> + Send + 'static,
        T: AsRef<str>,
        O: Sink<String, Error = CdpError> + Send + 'static,
    {
        let (outgoing_tx, mut outgoing_rx) = mpsc::unbounded_channel::<String>();
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
            closed: watch::channel(false).0,
        });

        let writer_shared = shared.clone();
        tokio::spawn(async move {
            let mut sink = Box::pin(outgoing);
            while let Some(text) = outgoing_rx.recv().await {
                if sink.send(text).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
            fail_all(&writer_shared);
        });

        let reader_shared = shared.clone();
        tokio::spawn(async move {
            let mut stream = Box::pin(incoming);
            while let Some(message) = stream.next().await {
                match message {
                    Ok(text) => dispatch(&reader_shared, text.as_ref()),
                    Err(e) => {
                        tracing::debug!(error = %e, "the CDP carrier failed");
                        break;
                    }
                }
            }
            fail_all(&reader_shared);
        });

        Self { shared, outgoing: outgoing_tx }
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
        // The carrier may have closed between the check above and the insert.
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

    /// True once the carrier is gone; every later call fails at once.
    pub fn is_closed(&self) -> bool {
        *self.shared.closed.borrow()
    }

    /// Resolves when the carrier closes.
    pub async fn closed(&self) {
        let mut rx = self.shared.closed.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }
}

fn dispatch(shared: &Shared, text: &str) {
    let parsed = serde_json::from_str::<Value>(text).or_else(|e| {
        // Pages can hold strings with lone UTF-16 surrogates, which Chromium
        // sends as `\udXXX` escapes that serde_json rejects: replace and retry.
        let repaired = replace_lone_surrogates(text);
        if repaired == text { Err(e) } else { serde_json::from_str::<Value>(&repaired) }
    });
    let mut message = match parsed {
        Ok(message) => message,
        Err(e) => {
            // Fail the waiting call at once rather than letting it time out.
            if let Some((method, reply)) = leading_id(text).and_then(|id| shared.pending().remove(&id)) {
                let _ = reply.send(Err(CdpError::Malformed(format!("answer to {method}: {e}"))));
            }
            tracing::warn!(len = text.len(), error = %e, "ignoring a non-JSON CDP message");
            return;
        }
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

/// The id of a message that starts `{"id":N`, as CDP answers do.
fn leading_id(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("{\"id\":")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Replaces `\uD800`–`\uDFFF` escapes that do not form a surrogate pair with `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> String {
    let bytes = text.as_bytes();
    let surrogate_at = |i: usize| -> Option<u16> {
        let hex = text.get(i + 2..i + 6)?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'u') && (0xD800..=0xDFFF).contains(&unit))
            .then_some(unit)
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut backslashes = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        // Only an escape when preceded by an even number of backslashes.
        if b == b'\\'
            && backslashes.is_multiple_of(2)
            && let Some(unit) = surrogate_at(i)
        {
            let paired = (0xD800..=0xDBFF).contains(&unit)
                && surrogate_at(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
            if paired {
                out.push_str(&text[i..i + 12]);
                i += 12;
            } else {
                out.push_str("\\ufffd");
                i += 6;
            }
            backslashes = 0;
            continue;
        }
        backslashes = if b == b'\\' { backslashes + 1 } else { 0 };
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        let text = r#"{"id":3,"result":{"v":"a\ud800b \ud83d\ude00 \\ud800 \udc00"}}"#;
        let repaired = replace_lone_surrogates(text);
        let value: Value = serde_json::from_str(&repaired).expect("parses after repair");
        assert_eq!(value["result"]["v"], "a\u{fffd}b \u{1f600} \\ud800 \u{fffd}");
        assert_eq!(leading_id(text), Some(3));
    }
}

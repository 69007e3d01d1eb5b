//! The relay carrier: one CDP [`Connection`] that lives as long as lumo and
//! travels over whichever extension WebSocket is current.
//!
//! Every command lumo sends is kept until its answer arrives. When the
//! extension connects again (its service worker restarted, or the socket
//! dropped) the unanswered commands are sent again, in order; the extension
//! answers a command it already ran from its record, so nothing runs twice,
//! and an answer for a command already answered is dropped here, so nothing
//! is delivered twice. While no extension is connected, calls wait (up to
//! the connection's call timeout).
//!
//! Several lumo processes share one extension (see [`super::role`]), so the
//! ids the extension sees are this process's *lane* (random, fixed for its
//! life) in the high bits and lumo_cdp's own id in the low 32 bits: ids never
//! collide between processes, whichever of them owns the extension socket.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lumo_cdp::{CdpError, Connection};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Messages to the current extension socket (already serialized envelopes).
pub(crate) type ToExtension = mpsc::UnboundedSender<String>;

struct Inner {
    /// This process's lane: the high bits of every id the extension sees.
    lane: u64,
    /// Commands sent by lumo and not yet answered: local id → CDP message text (with its wire id).
    unanswered: Mutex<BTreeMap<u64, String>>,
    /// The socket commands go to, when an extension is connected.
    current: Mutex<Option<(u64, ToExtension)>>,
    /// Messages for the CDP connection's reader.
    to_lumo: mpsc::UnboundedSender<Result<String, CdpError>>,
    /// Answers dropped because their command was answered already.
    duplicates: AtomicU64,
    next_socket: AtomicU64,
    /// When the last extension socket went away (or the relay started).
    away_since: Mutex<Option<Instant>>,
    /// Set once the first socket attached: every later attach follows a gap in which events may
    /// have been lost, so lumo is told to re-read its tabs (`lumo_cdp::CARRIER_RESUMED`).
    resumed: std::sync::atomic::AtomicBool,
}

/// Bits of a wire id that are lumo_cdp's own id.
const LOCAL_BITS: u32 = 32;

/// A random lane in `1..2^20` (ids stay below 2^52, exact in JavaScript numbers).
fn random_lane() -> u64 {
    let mut bytes = [0u8; 4];
    // Without randomness the process id still tells processes apart.
    if getrandom::fill(&mut bytes).is_err() {
        return u64::from(std::process::id() % 0xf_ffff) + 1;
    }
    u64::from(u32::from_le_bytes(bytes) % 0xf_ffff) + 1
}

/// The lane of a wire id.
pub(crate) fn lane_of(wire_id: u64) -> u64 {
    wire_id >> LOCAL_BITS
}

/// The relay; cheap to clone.
#[derive(Clone)]
pub struct Relay {
    inner: Arc<Inner>,
    connection: Connection,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").field("connected", &self.is_connected()).finish()
    }
}

fn envelope(msg: &str) -> String {
    // `msg` is JSON lumo_cdp produced: embed it without parsing twice.
    format!("{{\"type\":\"cdp\",\"msg\":{msg}}}")
}

impl Relay {
    /// A relay with no extension connected yet, whose calls wait for one up to `wait`.
    pub fn new(wait: Duration) -> Self {
        let (to_lumo, from_relay) = mpsc::unbounded_channel();
        let incoming =
            futures_util::stream::unfold(from_relay, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
        let inner = Arc::new(Inner {
            lane: random_lane(),
            unanswered: Mutex::default(),
            current: Mutex::default(),
            to_lumo,
            duplicates: AtomicU64::new(0),
            next_socket: AtomicU64::new(1),
            away_since: Mutex::new(Some(Instant::now())),
            resumed: std::sync::atomic::AtomicBool::new(false),
        });
        tokio::spawn(watchdog(Arc::downgrade(&inner), wait));
        let outgoing = futures_util::sink::unfold(inner.clone(), |inner: Arc<Inner>, text: String| async move {
            Relay::from_lumo(&inner, text);
            Ok::<_, CdpError>(inner)
        });
        let connection = Connection::over(incoming, outgoing);
        Self { inner, connection }
    }

    /// The CDP connection that runs over the relay.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// True while an extension socket is attached.
    pub fn is_connected(&self) -> bool {
        self.current().is_some()
    }

    /// Answers dropped as duplicates so far.
    pub fn duplicates(&self) -> u64 {
        self.inner.duplicates.load(Ordering::Relaxed)
    }

    /// This process's lane (the high bits of the ids the extension sees).
    pub(crate) fn lane(&self) -> u64 {
        self.inner.lane
    }

    fn current(&self) -> MutexGuard<'_, Option<(u64, ToExtension)>> {
        lock(&self.inner.current)
    }

    fn from_lumo(inner: &Inner, text: String) {
        let mut parsed = serde_json::from_str::<Value>(&text).ok();
        let id = parsed.as_ref().and_then(|v| v["id"].as_u64());
        let text = match (id, parsed.as_mut()) {
            (Some(id), Some(v)) => {
                v["id"] = ((inner.lane << LOCAL_BITS) | id).into();
                v.to_string()
            }
            _ => text,
        };
        // Under the socket lock, so `attach` sends each command exactly once to a new socket.
        let current = lock(&inner.current);
        if let Some(id) = id {
            lock(&inner.unanswered).insert(id, text.clone());
        }
        if let Some((_, socket)) = current.as_ref() {
            // A send to a socket that just closed is fine: the command stays unanswered and goes again.
            let _ = socket.send(envelope(&text));
        }
    }

    /// Makes `socket` the current extension socket (replacing any older one)
    /// and sends it every unanswered command. Returns its number for [`Relay::detach`].
    pub(crate) fn attach(&self, socket: ToExtension) -> u64 {
        let number = self.inner.next_socket.fetch_add(1, Ordering::Relaxed);
        let mut current = self.current();
        for text in lock(&self.inner.unanswered).values() {
            let _ = socket.send(envelope(text));
        }
        *current = Some((number, socket));
        *lock(&self.inner.away_since) = None;
        drop(current);
        // Events sent while no socket was current are lost; lumo re-reads what they would have told it.
        // Not on the very first connection: lumo has read nothing yet that could be stale.
        if self.inner.resumed.swap(true, Ordering::Relaxed) {
            let resumed = json!({"method": lumo_cdp::CARRIER_RESUMED, "params": {}});
            let _ = self.inner.to_lumo.send(Ok(resumed.to_string()));
        }
        number
    }

    /// Forgets socket `number` if it is still the current one; true when it was.
    pub(crate) fn detach(&self, number: u64) -> bool {
        let mut current = self.current();
        let was_current = current.as_ref().is_some_and(|(n, _)| *n == number);
        if was_current {
            *current = None;
            *lock(&self.inner.away_since) = Some(Instant::now());
        }
        was_current
    }

    /// Sends an envelope another lumo process made to the current extension socket, if any
    /// (that process keeps it until answered and sends it again when told the extension is back).
    pub(crate) fn forward(&self, envelope: String) {
        if let Some((_, socket)) = self.current().as_ref() {
            let _ = socket.send(envelope);
        }
    }

    /// A CDP message from the extension for this process: an answer (once) or an event.
    pub(crate) fn extension_sent(&self, msg: &Value) {
        let mut msg = msg.clone();
        if let Some(wire) = msg.get("id").and_then(Value::as_u64) {
            let id = wire & ((1 << LOCAL_BITS) - 1);
            if lane_of(wire) != self.inner.lane || lock(&self.inner.unanswered).remove(&id).is_none() {
                self.inner.duplicates.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(wire, "dropped a second answer to a bridge command");
                return;
            }
            msg["id"] = id.into();
        }
        let _ = self.inner.to_lumo.send(Ok(msg.to_string()));
    }

    /// The `ready` message for a newly attached socket.
    pub(crate) fn ready(epoch: &str) -> String {
        json!({"type": "ready", "epoch": epoch}).to_string()
    }
}

/// Fails the commands that waited longer than `wait` for an absent extension, saying why.
async fn watchdog(inner: std::sync::Weak<Inner>, wait: Duration) {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        let away = *lock(&inner.away_since);
        let Some(since) = away.filter(|since| since.elapsed() >= wait) else { continue };
        let expired: Vec<u64> = std::mem::take(&mut *lock(&inner.unanswered)).into_keys().collect();
        for id in expired {
            let message = format!(
                "unavailable: the lumo bridge extension has not been connected for {} s (is it installed, paired, pointed at this lumo? see its popup)",
                since.elapsed().as_secs()
            );
            let _ =
                inner
                    .to_lumo
                    .send(Ok(json!({"id": id, "error": {"code": lumo_cdp::CARRIER_UNAVAILABLE, "message": message}})
                        .to_string()));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked while holding it; the data is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

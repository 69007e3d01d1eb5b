//! The other lumo processes attached to the one that owns the extension
//! socket (see [`super::role`]): each by its lane, with the channel its
//! loopback socket writes from. The owner tells them when the extension
//! comes and goes, sends them the answers of their lane and every event.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::relay::ToExtension;

/// Tells an attached lumo the extension is connected: it sends its unanswered commands (again).
pub(crate) const READY: &str = r#"{"type":"ready"}"#;
/// Tells an attached lumo the extension went away: its calls wait, as the owner's do.
pub(crate) const AWAY: &str = r#"{"type":"away"}"#;

/// The attached lumo processes, by lane.
#[derive(Default)]
pub(crate) struct Clients {
    by_lane: Mutex<HashMap<u64, (u64, ToExtension)>>,
    next: AtomicU64,
}

impl Clients {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (u64, ToExtension)>> {
        self.by_lane.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a client; `None` when its lane is taken. It is told `ready` at once
    /// if `connected()`, under the same lock as [`Clients::broadcast`], so it
    /// never misses the extension coming or going.
    pub(crate) fn join(&self, lane: u64, tx: ToExtension, connected: impl Fn() -> bool) -> Option<u64> {
        let mut clients = self.lock();
        if clients.contains_key(&lane) {
            return None;
        }
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        if connected() {
            let _ = tx.send(READY.to_string());
        }
        clients.insert(lane, (number, tx));
        Some(number)
    }

    /// Removes client `number` of `lane` (not a newer one on the same lane).
    pub(crate) fn leave(&self, lane: u64, number: u64) {
        let mut clients = self.lock();
        if clients.get(&lane).is_some_and(|(n, _)| *n == number) {
            clients.remove(&lane);
        }
    }

    /// Sends `text` to the client of `lane`; dropped when it is gone (it sends its commands again elsewhere).
    pub(crate) fn send(&self, lane: u64, text: String) {
        if let Some((_, tx)) = self.lock().get(&lane) {
            let _ = tx.send(text);
        }
    }

    /// Sends `text` to every client.
    pub(crate) fn broadcast(&self, text: &str) {
        for (_, tx) in self.lock().values() {
            let _ = tx.send(text.to_string());
        }
    }
}

//! The audit log: one hash-chained record per tool call, in SQLite.
//!
//! [`Audit`] is the writing side the gate holds: [`Audit::record`] hands an
//! [`Entry`] to a dedicated thread over a channel and returns at once, so no
//! call ever waits on the disk; [`Audit::flush`] waits until everything sent
//! is written (lumo calls it on shutdown). [`AuditLog`] is the reading side
//! for `lumo audit`: list, show, export and verify.
//!
//! A record holds who (client, session), what (source, tool, target origin),
//! a SHA-256 of the arguments, the outcome and the duration — never the
//! arguments themselves, typed text or script source.

mod chain;
mod query;
mod store;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

pub use chain::{Break, BreakKind, Record};
pub use query::{Filter, format_time, parse_time};
pub use store::{AuditStoreError, Entry, Retention, default_path};

/// How many records the writer puts in one transaction at most.
const BATCH: usize = 512;
/// Retention is applied at start and after this many records.
const PRUNE_EVERY: usize = 1000;

enum Msg {
    Record(Entry),
    Flush(mpsc::SyncSender<()>),
    /// New retention settings (policy re-read): applied at once and from then on.
    Retention(Retention),
}

/// The writing side of the audit log (cheap to clone).
#[derive(Clone, Debug)]
pub struct Audit {
    tx: mpsc::Sender<Msg>,
    path: PathBuf,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Msg::Record(_) => "Record",
            Msg::Flush(_) => "Flush",
            Msg::Retention(_) => "Retention",
        })
    }
}

impl Audit {
    /// Opens (creating) the log at `path` and starts its writer thread.
    pub fn open(path: &Path, retention: Retention) -> Result<Self, AuditStoreError> {
        let mut conn = store::open(path, true)?;
        if let Err(e) = store::prune(&mut conn, retention, now_ms()) {
            tracing::warn!(error = %e, "audit retention failed");
        }
        let (tx, rx) = mpsc::channel();
        let writer_path = path.to_path_buf();
        std::thread::Builder::new()
            .name("lumo-audit".into())
            .spawn(move || write_loop(conn, rx, retention, &writer_path))
            .map_err(|source| AuditStoreError::Folder { path: path.to_path_buf(), source })?;
        Ok(Self { tx, path: path.to_path_buf() })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one record; never blocks.
    pub fn record(&self, entry: Entry) {
        if self.tx.send(Msg::Record(entry)).is_err() {
            tracing::error!("the audit writer has stopped; a record was lost");
        }
    }

    /// Keeps what `retention` says from now on, dropping what it no longer keeps at once.
    pub fn set_retention(&self, retention: Retention) {
        if self.tx.send(Msg::Retention(retention)).is_err() {
            tracing::error!("the audit writer has stopped; the retention change is lost");
        }
    }

    /// Waits (up to `timeout`) until every record queued before is on disk.
    /// Returns whether it got there in time.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = mpsc::sync_channel(1);
        self.tx.send(Msg::Flush(done)).is_ok() && wait.recv_timeout(timeout).is_ok()
    }
}

fn write_loop(mut conn: Connection, rx: mpsc::Receiver<Msg>, mut retention: Retention, path: &Path) {
    let mut since_prune = 0usize;
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::new();
        let mut acks = Vec::new();
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Record(entry) => batch.push(entry),
                Msg::Flush(ack) => acks.push(ack),
                Msg::Retention(new) => {
                    // Records before the change are written first, then pruned under the new rule.
                    retention = new;
                    since_prune = PRUNE_EVERY;
                }
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            match store::append(&mut conn, &batch) {
                Ok(()) => since_prune += batch.len(),
                Err(e) => {
                    tracing::error!(path = %path.display(), error = %e, lost = batch.len(), "could not write audit records")
                }
            }
        }
        if since_prune >= PRUNE_EVERY {
            since_prune = 0;
            if let Err(e) = store::prune(&mut conn, retention, now_ms()) {
                tracing::warn!(error = %e, "audit retention failed");
            }
        }
        for ack in acks {
            let _ = ack.send(());
        }
    }
}

/// Now, Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The reading side of the audit log, for `lumo audit`.
#[derive(Debug)]
pub struct AuditLog {
    conn: Connection,
    path: PathBuf,
}

/// The result of [`AuditLog::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Records checked.
    pub records: u64,
    /// The id the kept chain starts after (0 when nothing was dropped by retention).
    pub anchor: i64,
}

impl AuditLog {
    /// Opens an existing log.
    pub fn open(path: &Path) -> Result<Self, AuditStoreError> {
        Ok(Self { conn: store::open(path, false)?, path: path.to_path_buf() })
    }

    fn sqlite(&self, source: rusqlite::Error) -> AuditStoreError {
        AuditStoreError::Sqlite { path: self.path.clone(), source }
    }

    /// The newest `n` records matching `filter`, oldest first.
    pub fn tail(&self, filter: &Filter, n: usize) -> Result<Vec<Record>, AuditStoreError> {
        let mut records = Vec::new();
        query::select(&self.conn, filter, Some(n), |r| {
            records.push(r);
            true
        })
        .map_err(|e| self.sqlite(e))?;
        records.reverse();
        Ok(records)
    }

    /// One record by id.
    pub fn get(&self, id: i64) -> Result<Option<Record>, AuditStoreError> {
        query::by_id(&self.conn, id).map_err(|e| self.sqlite(e))
    }

    /// Every record matching `filter`, oldest first, to `each` (which returns false to stop).
    pub fn each(&self, filter: &Filter, each: impl FnMut(Record) -> bool) -> Result<(), AuditStoreError> {
        query::select(&self.conn, filter, None, each).map_err(|e| self.sqlite(e))
    }

    /// Checks the whole chain: `Ok(Err(break))` names the first record that does not hold.
    pub fn verify(&self) -> Result<Result<Verified, Break>, AuditStoreError> {
        let anchor = store::anchor(&self.conn).map_err(|e| self.sqlite(e))?;
        let head = store::head(&self.conn).map_err(|e| self.sqlite(e))?;
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {} FROM records ORDER BY id", store::COLUMNS))
            .map_err(|e| self.sqlite(e))?;
        let mut failed = None;
        let rows = stmt.query_map([], store::row_to_record).map_err(|e| self.sqlite(e))?;
        let records = rows.map_while(|row| row.map_err(|e| failed = Some(e)).ok());
        let checked = chain::verify(&anchor, records, head.as_ref());
        if let Some(e) = failed {
            return Err(self.sqlite(e));
        }
        Ok(checked.map(|records| Verified { records, anchor: anchor.id }))
    }
}

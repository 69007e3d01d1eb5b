//! The SQLite file the audit chain lives in: schema, appending a batch under
//! one write lock (so two lumo processes sharing a file keep one chain),
//! retention, and reading records back.
//!
//! Tables: `records` (one row per call, see [`Record`]) and `meta` (the
//! chain's `anchor_*` — where the kept records start — and `head_*` — the
//! newest record, written in the same transaction as the records).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::chain::{Anchor, Record};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    client TEXT NOT NULL,
    session TEXT NOT NULL,
    source TEXT NOT NULL,
    tool TEXT NOT NULL,
    target TEXT NOT NULL,
    params_hash TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    prev TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_at ON records (at_ms);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// The columns of `records`, in [`Record`] order.
pub(crate) const COLUMNS: &str =
    "id, at_ms, client, session, source, tool, target, params_hash, outcome, duration_ms, prev, hash";

/// Why the audit log could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditStoreError {
    /// The folder for the file could not be made.
    #[error("cannot create the audit folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// There is no log at that path (reading commands do not create one).
    #[error(
        "there is no audit log at {0} (lumo writes it on the first tool call; pass --audit-db or set LUMO_DATA_DIR to read another)"
    )]
    NotFound(PathBuf),
    /// SQLite refused.
    #[error("audit log {path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

/// How much of the log to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Keep at most this many records (the newest); 0 keeps all.
    pub max_records: u64,
    /// Drop records older than this; `None` keeps them.
    pub max_age: Option<Duration>,
}

impl Default for Retention {
    /// The newest million records, at most 180 days old.
    fn default() -> Self {
        Self { max_records: 1_000_000, max_age: Some(Duration::from_secs(180 * 24 * 3600)) }
    }
}

/// The default file: `$LUMO_DATA_DIR/audit.db`, else `$XDG_DATA_HOME/lumo/audit.db`,
/// else `~/.local/share/lumo/audit.db`.
pub fn default_path() -> Option<PathBuf> {
    Some(lumo_browser::data_dir()?.join("audit.db"))
}

/// Opens (creating if `create`) the file and its schema, in WAL mode.
pub(crate) fn open(path: &Path, create: bool) -> Result<Connection, AuditStoreError> {
    if !create && !path.is_file() {
        return Err(AuditStoreError::NotFound(path.to_path_buf()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| AuditStoreError::Folder { path: dir.to_path_buf(), source })?;
    }
    let sqlite = |source| AuditStoreError::Sqlite { path: path.to_path_buf(), source };
    let conn = Connection::open(path).map_err(sqlite)?;
    // Two lumo processes may share the file: wait for the other's write instead of failing.
    conn.busy_timeout(Duration::from_secs(10)).map_err(sqlite)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sqlite)?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(sqlite)?;
    conn.execute_batch(SCHEMA).map_err(sqlite)?;
    Ok(conn)
}

/// What the gate hands over for one call; the chain fields are added when it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When the call started, Unix milliseconds.
    pub at_ms: i64,
    /// The MCP client.
    pub client: String,
    /// The session.
    pub session: String,
    /// `builtin`, `page` or `provider`.
    pub source: String,
    /// The tool.
    pub tool: String,
    /// The origin acted on, or empty.
    pub target: String,
    /// The arguments' hash.
    pub params_hash: String,
    /// `ok` or the error code.
    pub outcome: String,
    /// Milliseconds.
    pub duration_ms: i64,
}

fn meta_anchor(conn: &Connection, prefix: &str) -> rusqlite::Result<Option<Anchor>> {
    let get = |key: String| {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get::<_, String>(0)).optional()
    };
    let (Some(id), Some(hash)) = (get(format!("{prefix}_id"))?, get(format!("{prefix}_hash"))?) else {
        return Ok(None);
    };
    Ok(id.parse::<i64>().ok().map(|id| Anchor { id, hash }))
}

fn set_meta_anchor(conn: &Connection, prefix: &str, anchor: &Anchor) -> rusqlite::Result<()> {
    let mut put = conn.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    put.execute(params![format!("{prefix}_id"), anchor.id.to_string()])?;
    put.execute(params![format!("{prefix}_hash"), anchor.hash])?;
    Ok(())
}

/// Where the kept chain starts.
pub(crate) fn anchor(conn: &Connection) -> rusqlite::Result<Anchor> {
    Ok(meta_anchor(conn, "anchor")?.unwrap_or_else(Anchor::genesis))
}

/// The newest record as the log last wrote it.
pub(crate) fn head(conn: &Connection) -> rusqlite::Result<Option<Anchor>> {
    meta_anchor(conn, "head")
}

/// Appends `entries` to the chain in one transaction, continuing from the stored head.
pub(crate) fn append(conn: &mut Connection, entries: &[Entry]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut last = match head(&tx)? {
        Some(head) => head,
        None => anchor(&tx)?,
    };
    {
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO records ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ))?;
        for e in entries {
            let mut record = Record {
                id: last.id + 1,
                at_ms: e.at_ms,
                client: e.client.clone(),
                session: e.session.clone(),
                source: e.source.clone(),
                tool: e.tool.clone(),
                target: e.target.clone(),
                params_hash: e.params_hash.clone(),
                outcome: e.outcome.clone(),
                duration_ms: e.duration_ms,
                prev: last.hash.clone(),
                hash: String::new(),
            };
            record.hash = record.compute_hash();
            insert.execute(params![
                record.id,
                record.at_ms,
                record.client,
                record.session,
                record.source,
                record.tool,
                record.target,
                record.params_hash,
                record.outcome,
                record.duration_ms,
                record.prev,
                record.hash,
            ])?;
            last = Anchor { id: record.id, hash: record.hash };
        }
    }
    set_meta_anchor(&tx, "head", &last)?;
    tx.commit()
}

/// Drops what `retention` no longer keeps, moving the anchor to the last record dropped.
/// Returns how many records went.
/// The newest record older than a time. SQLite would answer `MAX(id)` by
/// walking the whole table backwards (every start-up paid for it, growing with
/// the log); through the time index it reads only the records that are old.
const NEWEST_OLDER_THAN: &str = "SELECT MAX(id) FROM records INDEXED BY records_at WHERE at_ms < ?1";

pub(crate) fn prune(conn: &mut Connection, retention: Retention, now_ms: i64) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some(newest) = tx.query_row("SELECT MAX(id) FROM records", [], |row| row.get::<_, Option<i64>>(0))? else {
        return Ok(0);
    };
    let mut cutoff = 0i64;
    if retention.max_records > 0 {
        cutoff = cutoff.max(newest - i64::try_from(retention.max_records).unwrap_or(i64::MAX));
    }
    if let Some(age) = retention.max_age {
        let oldest_kept_ms = now_ms.saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        let old: Option<i64> = tx.query_row(NEWEST_OLDER_THAN, [oldest_kept_ms], |row| row.get(0))?;
        cutoff = cutoff.max(old.unwrap_or(0));
    }
    let Some(hash) =
        tx.query_row("SELECT hash FROM records WHERE id = ?1", [cutoff], |row| row.get::<_, String>(0)).optional()?
    else {
        return Ok(0);
    };
    let dropped = tx.execute("DELETE FROM records WHERE id <= ?1", [cutoff])?;
    set_meta_anchor(&tx, "anchor", &Anchor { id: cutoff, hash })?;
    tx.commit()?;
    Ok(dropped)
}

/// Reads one row of `SELECT {COLUMNS}`.
pub(crate) fn row_to_record(row: &rusqlite::Row<'_>) -> rusqlite::Result<Record> {
    Ok(Record {
        id: row.get(0)?,
        at_ms: row.get(1)?,
        client: row.get(2)?,
        session: row.get(3)?,
        source: row.get(4)?,
        tool: row.get(5)?,
        target: row.get(6)?,
        params_hash: row.get(7)?,
        outcome: row.get(8)?,
        duration_ms: row.get(9)?,
        prev: row.get(10)?,
        hash: row.get(11)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::chain::verify;

    fn entry(i: i64) -> Entry {
        Entry {
            at_ms: 1_000 + i,
            client: "t/1".into(),
            session: "stdio".into(),
            source: "builtin".into(),
            tool: "page_find".into(),
            target: String::new(),
            params_hash: "00".repeat(32),
            outcome: "ok".into(),
            duration_ms: 1,
        }
    }

    fn all(conn: &Connection) -> Vec<Record> {
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM records ORDER BY id")).expect("prepare");
        stmt.query_map([], row_to_record).expect("query").collect::<Result<_, _>>().expect("rows")
    }

    #[test]
    fn the_age_cut_reads_the_time_index_not_the_table() {
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = open(&dir.path().join("audit.db"), true).expect("open");
        let plan: String =
            conn.query_row(&format!("EXPLAIN QUERY PLAN {NEWEST_OLDER_THAN}"), [0], |row| row.get(3)).expect("plan");
        assert!(plan.contains("INDEX records_at"), "{plan}");
        let mut conn = conn;
        append(&mut conn, &(0..5).map(entry).collect::<Vec<_>>()).expect("append");
        let newest: Option<i64> = conn.query_row(NEWEST_OLDER_THAN, [1_003], |row| row.get(0)).expect("query");
        assert_eq!(newest, Some(3));
    }

    #[test]
    fn appended_batches_chain_and_retention_keeps_it_verifiable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut conn = open(&dir.path().join("a/audit.db"), true).expect("open");
        append(&mut conn, &(0..5).map(entry).collect::<Vec<_>>()).expect("append");
        append(&mut conn, &(5..10).map(entry).collect::<Vec<_>>()).expect("append");
        let check =
            |conn: &Connection| verify(&anchor(conn).expect("anchor"), all(conn), head(conn).expect("head").as_ref());
        assert_eq!(check(&conn), Ok(10));
        let keep_four = Retention { max_records: 4, max_age: None };
        assert_eq!(prune(&mut conn, keep_four, 0).expect("prune"), 6);
        assert_eq!(check(&conn), Ok(4));
        assert_eq!(all(&conn).first().map(|r| r.id), Some(7));
        // Age: records at 1_000+i ms; keep those at or after 1_008.
        let young = Retention { max_records: 0, max_age: Some(Duration::from_millis(2)) };
        assert_eq!(prune(&mut conn, young, 1_010).expect("prune"), 2);
        assert_eq!(check(&conn), Ok(2));
        append(&mut conn, &[entry(10)]).expect("append after pruning");
        assert_eq!(check(&conn), Ok(3));
        assert_eq!(prune(&mut conn, Retention { max_records: 0, max_age: None }, 0).expect("prune"), 0);
    }

    #[test]
    fn reading_a_missing_log_says_where_it_looked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = open(&dir.path().join("none.db"), false).expect_err("missing");
        assert!(err.to_string().contains("none.db"), "{err}");
    }
}

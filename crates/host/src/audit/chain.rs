//! The hash chain: what a record is, how its hash is computed, and how a
//! sequence of records is checked.
//!
//! Each record stores the hash of the record before it (`prev`) and its own
//! hash over every field plus `prev` (SHA-256 of the RFC 8785 canonical JSON,
//! the same rule as [`lumo_protocol::params_hash`]). Ids are consecutive, so
//! an edited record fails its own hash, a deleted one leaves a gap and breaks
//! the next `prev`, and swapped records fail both. The chain starts from an
//! [`Anchor`]: the genesis (id 0, 64 zeros) or, once retention dropped the
//! oldest records, the id and hash of the last record dropped. The newest
//! record must match the stored head, so cutting off the tail shows too.

use std::fmt;

use serde::Serialize;
use serde_json::json;

/// The `prev` of the very first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One audit record as stored: who called which tool, on what, how it
/// ended — never what they sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Position in the chain (1, 2, …; consecutive).
    pub id: i64,
    /// When the call started, Unix milliseconds.
    pub at_ms: i64,
    /// The MCP client (`name/version` from its initialize info, or `unknown`).
    pub client: String,
    /// The session (`stdio`, `cli`, or `http:` + a hash of the HTTP session id).
    pub session: String,
    /// `builtin`, `page` or `provider`.
    pub source: String,
    /// The tool as exposed (`page_click`, `webmcp_add_to_cart`, …).
    pub tool: String,
    /// What it acted on: the origin of the tab or frame (empty when none).
    pub target: String,
    /// SHA-256 of the arguments in RFC 8785 canonical form.
    pub params_hash: String,
    /// `ok` or the error code.
    pub outcome: String,
    /// How long the call took, in milliseconds.
    pub duration_ms: i64,
    /// The previous record's hash (or the anchor's).
    pub prev: String,
    /// This record's hash.
    pub hash: String,
}

impl Record {
    /// The hash this record should carry: every field but `hash`, canonical JSON, SHA-256.
    pub(crate) fn compute_hash(&self) -> String {
        let fields = json!({
            "id": self.id,
            "atMs": self.at_ms,
            "client": self.client,
            "session": self.session,
            "source": self.source,
            "tool": self.tool,
            "target": self.target,
            "paramsHash": self.params_hash,
            "outcome": self.outcome,
            "durationMs": self.duration_ms,
            "prev": self.prev,
        });
        // Canonicalizing plain strings and integers cannot fail; an empty hash would never verify.
        lumo_protocol::params_hash(&fields).map(|h| h.to_string()).unwrap_or_default()
    }
}

/// Where the kept chain starts: the record before the oldest kept one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub(crate) id: i64,
    pub(crate) hash: String,
}

impl Anchor {
    pub(crate) fn genesis() -> Self {
        Self { id: 0, hash: GENESIS.to_string() }
    }
}

/// Why the chain does not hold, at which record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    /// The first record that does not check out (for a cut tail: the stored head's id).
    pub id: i64,
    /// What is wrong there.
    pub kind: BreakKind,
}

/// The kinds of break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BreakKind {
    /// The record's fields do not match its hash: it was edited.
    Edited,
    /// The record does not chain from the one before: a record before it was edited, deleted or moved.
    Unchained,
    /// Ids jump: the records in between were deleted.
    Missing {
        /// The id that should have come next.
        expected: i64,
    },
    /// The newest records are gone (the stored head is not the last record).
    TailCut,
    /// The last record is not the stored head: records were added or the head was changed outside lumo.
    HeadMismatch,
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            BreakKind::Edited => write!(f, "record {} was altered: its fields do not match its hash", self.id),
            BreakKind::Unchained => write!(
                f,
                "record {} does not chain from the record before it: a record was edited, deleted or reordered",
                self.id
            ),
            BreakKind::Missing { expected } => {
                write!(f, "record {expected} is missing (the next record is {}): records were deleted", self.id)
            }
            BreakKind::HeadMismatch => write!(
                f,
                "record {} is the last one but the log's stored head does not match it: the log was changed outside lumo",
                self.id
            ),
            BreakKind::TailCut => {
                write!(
                    f,
                    "the log should end at record {} but it is not there: the newest records were deleted",
                    self.id
                )
            }
        }
    }
}

/// Checks `records` (in id order) against the `anchor` they start from and the
/// `head` (id, hash) the log says it ends at. Returns how many records held.
pub(crate) fn verify(
    anchor: &Anchor,
    records: impl IntoIterator<Item = Record>,
    head: Option<&Anchor>,
) -> Result<u64, Break> {
    let mut last = anchor.clone();
    let mut count = 0u64;
    for record in records {
        if record.id != last.id + 1 {
            return Err(Break { id: record.id, kind: BreakKind::Missing { expected: last.id + 1 } });
        }
        if record.compute_hash() != record.hash {
            return Err(Break { id: record.id, kind: BreakKind::Edited });
        }
        if record.prev != last.hash {
            return Err(Break { id: record.id, kind: BreakKind::Unchained });
        }
        last = Anchor { id: record.id, hash: record.hash };
        count += 1;
    }
    match head {
        // No head yet: nothing was ever written (or the head itself was removed with every record).
        None if count == 0 => Ok(0),
        Some(head) if *head == last => Ok(count),
        Some(head) if head.id > last.id => Err(Break { id: head.id, kind: BreakKind::TailCut }),
        _ => Err(Break { id: last.id, kind: BreakKind::HeadMismatch }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<Record> {
        let mut prev = GENESIS.to_string();
        (1..=n)
            .map(|id| {
                let mut r = Record {
                    id,
                    at_ms: 1_700_000_000_000 + id,
                    client: "test/1".into(),
                    session: "stdio".into(),
                    source: "builtin".into(),
                    tool: "page_click".into(),
                    target: "http://127.0.0.1:8080".into(),
                    params_hash: "ab".repeat(32),
                    outcome: "ok".into(),
                    duration_ms: 3,
                    prev: prev.clone(),
                    hash: String::new(),
                };
                r.hash = r.compute_hash();
                prev = r.hash.clone();
                r
            })
            .collect()
    }

    fn head(records: &[Record]) -> Anchor {
        let last = records.last().expect("records");
        Anchor { id: last.id, hash: last.hash.clone() }
    }

    #[test]
    fn an_intact_chain_verifies() {
        let records = chain(5);
        let h = head(&records);
        assert_eq!(verify(&Anchor::genesis(), records, Some(&h)), Ok(5));
        assert_eq!(verify(&Anchor::genesis(), Vec::new(), None), Ok(0));
    }

    #[test]
    fn each_field_is_covered_by_the_hash() {
        let edits: [fn(&mut Record); 10] = [
            |r| r.at_ms += 1,
            |r| r.client.push('x'),
            |r| r.session.push('x'),
            |r| r.source = "page".into(),
            |r| r.tool = "page_type".into(),
            |r| r.target.push('x'),
            |r| r.params_hash = "cd".repeat(32),
            |r| r.outcome = "forbidden".into(),
            |r| r.duration_ms += 1,
            |r| r.prev = GENESIS.into(),
        ];
        for edit in edits {
            let mut records = chain(4);
            let h = head(&records);
            edit(&mut records[2]);
            let broken = verify(&Anchor::genesis(), records, Some(&h)).expect_err("edited");
            assert_eq!(broken.id, 3);
        }
    }

    #[test]
    fn an_edited_record_is_named() {
        let mut records = chain(4);
        let h = head(&records);
        records[1].outcome = "ok_really".into();
        assert_eq!(verify(&Anchor::genesis(), records, Some(&h)), Err(Break { id: 2, kind: BreakKind::Edited }));
    }

    #[test]
    fn an_edited_record_with_a_recomputed_hash_breaks_the_next_link() {
        let mut records = chain(4);
        let h = head(&records);
        records[1].outcome = "forbidden".into();
        records[1].hash = records[1].compute_hash();
        assert_eq!(verify(&Anchor::genesis(), records, Some(&h)), Err(Break { id: 3, kind: BreakKind::Unchained }));
    }

    #[test]
    fn a_deleted_record_is_named() {
        let mut records = chain(5);
        let h = head(&records);
        records.remove(2);
        assert_eq!(
            verify(&Anchor::genesis(), records, Some(&h)),
            Err(Break { id: 4, kind: BreakKind::Missing { expected: 3 } })
        );
    }

    #[test]
    fn swapped_records_are_found() {
        let mut records = chain(5);
        let h = head(&records);
        // Swap the contents of 2 and 3 but keep the ids in order, as an edit of the file would.
        let (a, b) = (records[1].clone(), records[2].clone());
        records[1] = Record { id: 2, ..b };
        records[2] = Record { id: 3, ..a };
        assert_eq!(verify(&Anchor::genesis(), records, Some(&h)).map_err(|b| b.id), Err(2));
    }

    #[test]
    fn a_cut_tail_is_found() {
        let mut records = chain(5);
        let h = head(&records);
        records.truncate(3);
        assert_eq!(verify(&Anchor::genesis(), records, Some(&h)), Err(Break { id: 5, kind: BreakKind::TailCut }));
    }

    #[test]
    fn a_chain_kept_from_an_anchor_verifies_and_needs_it() {
        let records = chain(6);
        let h = head(&records);
        let anchor = Anchor { id: 2, hash: records[1].hash.clone() };
        let kept: Vec<Record> = records[2..].to_vec();
        assert_eq!(verify(&anchor, kept.clone(), Some(&h)), Ok(4));
        assert_eq!(verify(&Anchor::genesis(), kept, Some(&h)).map_err(|b| b.id), Err(3));
    }

    #[test]
    fn breaks_read_well() {
        let text = Break { id: 7, kind: BreakKind::Missing { expected: 6 } }.to_string();
        assert!(text.contains("record 6 is missing"), "{text}");
    }
}

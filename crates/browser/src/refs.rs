//! Element refs (`e12`, `f2e7`): their form, and the book of which tab and
//! frame each was given out in.
//!
//! One counter numbers the refs of every tab and frame of a session, so a
//! number names one element in one tab, ever. Before a ref is looked up, the
//! book says whether it belongs to the tab the call acts on: a ref of another
//! tab is refused (it once clicked the selected tab's element that happened to
//! share its number, issue 8 item 6), a ref never given out is told apart from
//! one whose element is gone. The book owns the counter: every helper call
//! (`helper/world.rs`) hands the page the next number under
//! [`RefBook::issuing`], and the page (`js/refs.js`) answers with the run of
//! numbers it used, which is booked here.

use std::sync::{Mutex, MutexGuard};

use lumo_protocol::{ErrorCode, ToolFailure};

use crate::tool::fail;

/// How many runs of numbers the book remembers; older refs are judged by the page alone.
const MAX_RUNS: usize = 100_000;

/// A ref taken apart: the cross-origin frame it lives in (`None`: the main
/// frame and the same-origin frames it reaches) and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ref {
    pub(crate) child: Option<u32>,
    pub(crate) number: u64,
}

/// Reads `e12` or `f2e7`; `None` when `r` is not a ref.
pub(crate) fn parse(r: &str) -> Option<Ref> {
    let number = |t: &str| -> Option<u64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok()).flatten()
    };
    if let Some(rest) = r.strip_prefix('e') {
        return Some(Ref { child: None, number: number(rest)? });
    }
    let (frame, element) = r.strip_prefix('f')?.split_once('e')?;
    let child = u32::try_from(number(frame)?).ok()?;
    Some(Ref { child: Some(child), number: number(element)? })
}

/// Checks a ref's form before asking the page.
pub(crate) fn check(r: &str) -> Result<Ref, ToolFailure> {
    parse(r).ok_or_else(|| {
        fail(
            ErrorCode::InvalidArguments,
            format!(
                "ref: {r:?} is not a ref; refs look like \"e12\" (or \"f1e3\" inside a cross-origin frame) and come from page_snapshot or page_find"
            ),
        )
    })
}

/// A run of consecutive numbers given out in one frame of one tab.
#[derive(Debug, Clone)]
struct Run {
    start: u64,
    end: u64,
    target: String,
    child: Option<u32>,
}

#[derive(Debug)]
struct Book {
    /// The next number to give out.
    next: u64,
    /// Sorted by `start`, not overlapping.
    runs: Vec<Run>,
    /// Numbers below this were forgotten (the book keeps [`MAX_RUNS`]).
    forgotten_below: u64,
}

/// Who a ref was given to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner<'a> {
    /// Never given out (or not in the frame its form names).
    Never,
    /// Given out so long ago that the book forgot where: the page decides.
    Forgotten,
    /// Given out in this tab (target id) and frame.
    Tab { target: &'a str },
}

/// The session's ref counter and the record of where each number went.
#[derive(Debug)]
pub(crate) struct RefBook {
    book: Mutex<Book>,
    /// Held while the page helper may make refs, so two tabs never number from the same start.
    pub(crate) issuing: tokio::sync::Mutex<()>,
}

impl Default for RefBook {
    fn default() -> Self {
        Self {
            book: Mutex::new(Book { next: 1, runs: Vec::new(), forgotten_below: 0 }),
            issuing: tokio::sync::Mutex::new(()),
        }
    }
}

impl RefBook {
    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number the next ref gets.
    pub(crate) fn next(&self) -> u64 {
        self.book().next
    }

    /// Records that the frame `child` of tab `target` gave out `start..end`.
    pub(crate) fn record(&self, target: &str, child: Option<u32>, start: u64, end: u64) {
        let mut book = self.book();
        book.next = book.next.max(end);
        if end <= start {
            return;
        }
        // A run starts below the last one's end when its page numbered on in calls lumo
        // lost (a timeout) while another tab or frame was given those numbers since:
        // they stay with the one they were booked to.
        let start = book.runs.last().map_or(start, |last| start.max(last.end));
        if end <= start {
            return;
        }
        if let Some(last) = book.runs.last_mut()
            && last.end == start
            && last.target == target
            && last.child == child
        {
            last.end = end;
            return;
        }
        book.runs.push(Run { start, end, target: target.to_string(), child });
        if book.runs.len() > MAX_RUNS {
            let drop = MAX_RUNS / 2;
            book.forgotten_below = book.runs[drop].start;
            book.runs.drain(..drop);
        }
    }

    /// Who `r` was given to, with `f` applied to the answer while the book is held.
    pub(crate) fn owner<T>(&self, r: Ref, f: impl FnOnce(Owner<'_>) -> T) -> T {
        let book = self.book();
        if r.number < book.forgotten_below {
            return f(Owner::Forgotten);
        }
        let at = book.runs.partition_point(|run| run.end <= r.number);
        match book.runs.get(at) {
            Some(run) if run.start <= r.number && run.child == r.child => f(Owner::Tab { target: &run.target }),
            // Not given out, or given out in another frame under another form (`e7` made as `f1e7`).
            _ => f(Owner::Never),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Owner, Ref, RefBook, parse};

    #[test]
    fn refs_parse_and_malformed_ones_do_not() {
        assert_eq!(parse("e12"), Some(Ref { child: None, number: 12 }));
        assert_eq!(parse("f2e7"), Some(Ref { child: Some(2), number: 7 }));
        for bad in ["", "e", "abc", "e1x", "f1", "fe1", "f1e", "E1", "e-1", "e99999999999999999999999"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_book_knows_each_number_s_tab() {
        let book = RefBook::default();
        book.record("A", None, 1, 5);
        book.record("A", None, 5, 8);
        book.record("B", None, 8, 9);
        book.record("B", Some(1), 9, 12);
        let who = |r: &str| book.owner(parse(r).expect("a ref"), |o| format!("{o:?}"));
        assert_eq!(who("e1"), format!("{:?}", Owner::Tab { target: "A" }));
        assert_eq!(who("e7"), format!("{:?}", Owner::Tab { target: "A" }));
        assert_eq!(who("e8"), format!("{:?}", Owner::Tab { target: "B" }));
        assert_eq!(who("f1e10"), format!("{:?}", Owner::Tab { target: "B" }));
        // A frame number in the wrong form was never given out as such.
        assert_eq!(who("e10"), format!("{:?}", Owner::Never));
        assert_eq!(who("f2e10"), format!("{:?}", Owner::Never));
        assert_eq!(who("e12"), format!("{:?}", Owner::Never));
        assert_eq!(who("e0"), format!("{:?}", Owner::Never));
        assert_eq!(book.next(), 12);
        // A late claim on numbers already given to another tab is cut to what is new.
        book.record("A", None, 10, 14);
        assert_eq!(who("f1e11"), format!("{:?}", Owner::Tab { target: "B" }));
        assert_eq!(who("e13"), format!("{:?}", Owner::Tab { target: "A" }));
    }
}

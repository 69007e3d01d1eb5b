//! The per-caller sliding rate window for writes (seed: 30 per 60 s).
//!
//! Exact sliding-window semantics: a call at time `t` is admitted iff fewer
//! than `limit` calls of the same caller were admitted in `(t - window, t]`;
//! refused calls are not counted. The limiter is pure — the caller passes
//! the time, as a [`Duration`] since any fixed origin (e.g.
//! `start.elapsed()` of a monotonic `Instant`) — so tests need no clock.
//!
//! Memory stays bounded: each caller keeps at most `limit` timestamps;
//! callers whose window emptied are forgotten on a sweep at most once per
//! window; and at most `max_callers` are tracked — past that, the one idle
//! the longest is evicted (which forgets its history: the cap trades
//! exactness for a bound on memory, so set it well above the number of
//! live callers).

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::Duration;

use crate::result::{ErrorCode, ToolFailure};

/// Default writes per window per caller.
pub const DEFAULT_WRITE_LIMIT: usize = 30;
/// Default window length.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(60);
/// Default cap on tracked callers.
pub const DEFAULT_MAX_CALLERS: usize = 4096;

/// A refused call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("rate limit of {limit} calls per {window:?} reached; retry in {retry_after:?}")]
pub struct RateLimited {
    /// When the oldest admitted call leaves the window, from now.
    pub retry_after: Duration,
    /// The limit that was hit.
    pub limit: usize,
    /// The window it applies to.
    pub window: Duration,
}

impl From<RateLimited> for ToolFailure {
    fn from(e: RateLimited) -> Self {
        ErrorCode::RateLimited.failure(e.to_string())
    }
}

/// Sliding-window limiter keyed by caller.
#[derive(Debug, Clone)]
pub struct RateLimiter<K = String> {
    limit: usize,
    window: Duration,
    max_callers: usize,
    /// Admission times per caller, oldest first, at most `limit` each.
    callers: HashMap<K, VecDeque<Duration>>,
    /// Latest time seen; earlier times are read as this one, so each
    /// caller's timestamps stay sorted even if the clock steps back.
    latest: Duration,
    next_sweep: Duration,
}

impl<K> Default for RateLimiter<K> {
    /// [`DEFAULT_WRITE_LIMIT`] per [`DEFAULT_WINDOW`].
    fn default() -> Self {
        Self::new(DEFAULT_WRITE_LIMIT, DEFAULT_WINDOW)
    }
}

impl<K> RateLimiter<K> {
    /// `limit` calls per `window` for each caller (a limit of 0 refuses all).
    #[must_use]
    pub fn new(limit: usize, window: Duration) -> Self {
        Self {
            limit,
            window,
            max_callers: DEFAULT_MAX_CALLERS,
            callers: HashMap::new(),
            latest: Duration::ZERO,
            next_sweep: Duration::ZERO,
        }
    }

    /// Caps how many callers are tracked (at least 1).
    #[must_use]
    pub fn with_max_callers(mut self, max_callers: usize) -> Self {
        self.max_callers = max_callers.max(1);
        self
    }

    /// How many callers are tracked now.
    #[must_use]
    pub fn tracked_callers(&self) -> usize {
        self.callers.len()
    }

    /// Forgets every caller whose window is empty at `now`.
    pub fn prune(&mut self, now: Duration) {
        let now = self.advance(now);
        let window = self.window;
        self.callers.retain(|_, calls| {
            expire(calls, now, window);
            !calls.is_empty()
        });
        self.next_sweep = now.saturating_add(window);
    }

    fn advance(&mut self, now: Duration) -> Duration {
        self.latest = self.latest.max(now);
        self.latest
    }

    fn refusal(&self, oldest: Option<Duration>, now: Duration) -> RateLimited {
        let retry_after = oldest.map_or(self.window, |t| t.saturating_add(self.window).saturating_sub(now));
        RateLimited { retry_after, limit: self.limit, window: self.window }
    }
}

/// Drops the calls that left the window `(now - window, now]`.
fn expire(calls: &mut VecDeque<Duration>, now: Duration, window: Duration) {
    while calls.front().is_some_and(|&t| t.saturating_add(window) <= now) {
        calls.pop_front();
    }
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// Admits (and counts) a call by `caller` at `now`, or refuses it.
    pub fn check<Q>(&mut self, caller: &Q, now: Duration) -> Result<(), RateLimited>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let now = self.advance(now);
        if now >= self.next_sweep {
            self.prune(now);
        }
        let (limit, window) = (self.limit, self.window);
        if let Some(calls) = self.callers.get_mut(caller) {
            expire(calls, now, window);
            if calls.len() < limit {
                calls.push_back(now);
                return Ok(());
            }
            let oldest = calls.front().copied();
            return Err(self.refusal(oldest, now));
        }
        if limit == 0 {
            return Err(self.refusal(None, now));
        }
        if self.callers.len() >= self.max_callers {
            self.prune(now);
            self.evict_idlest();
        }
        self.callers.insert(caller.to_owned(), VecDeque::from([now]));
        Ok(())
    }

    /// If still at the cap, forgets the caller whose last call is oldest.
    fn evict_idlest(&mut self) {
        if self.callers.len() < self.max_callers {
            return;
        }
        let idlest = self.callers.iter().min_by_key(|(_, calls)| calls.back().copied()).map(|(key, _)| key.clone());
        if let Some(key) = idlest {
            self.callers.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn thirtieth_allowed_thirty_first_refused_until_first_slides_out() {
        let mut limiter = RateLimiter::<String>::default();
        for i in 0..30 {
            assert_eq!(limiter.check("agent", ms(1000 + i * 10)), Ok(()), "call {}", i + 1);
        }
        let refused = limiter.check("agent", ms(1500)).expect_err("31st refused");
        assert_eq!(refused, RateLimited { retry_after: ms(1000 + 60_000 - 1500), limit: 30, window: DEFAULT_WINDOW });
        // One millisecond before the boundary the first call still counts…
        assert!(limiter.check("agent", ms(60_999)).is_err());
        // …and exactly at first + window it has left (t - window, t].
        assert_eq!(limiter.check("agent", ms(61_000)), Ok(()));
        assert!(limiter.check("agent", ms(61_000)).is_err());
        assert_eq!(limiter.check("agent", ms(61_010)), Ok(()));
    }

    #[test]
    fn refused_calls_do_not_count() {
        let mut limiter = RateLimiter::<String>::new(1, ms(100));
        assert_eq!(limiter.check("a", ms(0)), Ok(()));
        for t in [10, 50, 99] {
            assert!(limiter.check("a", ms(t)).is_err());
        }
        assert_eq!(limiter.check("a", ms(100)), Ok(()));
    }

    #[test]
    fn callers_are_isolated() {
        let mut limiter = RateLimiter::<String>::new(2, ms(100));
        assert!(limiter.check("a", ms(0)).is_ok());
        assert!(limiter.check("a", ms(1)).is_ok());
        assert!(limiter.check("a", ms(2)).is_err());
        assert!(limiter.check("b", ms(2)).is_ok());
        assert!(limiter.check("b", ms(3)).is_ok());
        assert!(limiter.check("b", ms(4)).is_err());
    }

    #[test]
    fn idle_callers_are_forgotten() {
        let mut limiter = RateLimiter::<String>::new(5, ms(100));
        for i in 0..50 {
            limiter.check(&format!("caller{i}"), ms(i)).expect("first call");
        }
        assert_eq!(limiter.tracked_callers(), 50);
        // The next call after a full window sweeps the idle ones.
        limiter.check("late", ms(250)).expect("admitted");
        assert_eq!(limiter.tracked_callers(), 1);
        limiter.prune(ms(350));
        assert_eq!(limiter.tracked_callers(), 0);
    }

    #[test]
    fn caller_cap_evicts_the_idlest() {
        let mut limiter = RateLimiter::<String>::new(5, ms(1000)).with_max_callers(3);
        for (name, t) in [("a", 0), ("b", 10), ("c", 20), ("a", 30)] {
            limiter.check(name, ms(t)).expect("admitted");
        }
        limiter.check("d", ms(40)).expect("admitted");
        assert_eq!(limiter.tracked_callers(), 3);
        // "b" was idle longest and is gone; "a" kept its two calls.
        let a = limiter.callers.get("a").map(VecDeque::len);
        assert_eq!((a, limiter.callers.contains_key("b")), (Some(2), false));
    }

    #[test]
    fn clock_stepping_back_is_read_as_the_latest_time() {
        let mut limiter = RateLimiter::<String>::new(1, ms(100));
        assert!(limiter.check("a", ms(500)).is_ok());
        assert!(limiter.check("a", ms(0)).is_err());
        assert!(limiter.check("a", ms(600)).is_ok());
    }

    #[test]
    fn degenerate_limits() {
        let mut none = RateLimiter::<String>::new(0, ms(100));
        assert_eq!(none.check("a", ms(5)).map_err(|e| e.retry_after), Err(ms(100)));
        assert_eq!(none.tracked_callers(), 0);
        let mut zero_window = RateLimiter::<String>::new(1, Duration::ZERO);
        assert!(zero_window.check("a", ms(5)).is_ok());
        assert!(zero_window.check("a", ms(5)).is_ok());
        let failure: ToolFailure = none.check("a", ms(6)).expect_err("refused").into();
        assert_eq!(failure.code, ErrorCode::RateLimited);
    }
}

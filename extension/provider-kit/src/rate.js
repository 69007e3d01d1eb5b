// The per-caller sliding window for writes (lumo-protocol rate.rs): a write
// at time t is admitted iff fewer than WRITE_LIMIT writes of the same caller
// were admitted in (t - WRITE_WINDOW_MS, t]; refused writes do not count.
// Admission times live in chrome.storage.session, so a recycled service
// worker does not hand a caller a fresh window.

import { WRITE_LIMIT, WRITE_WINDOW_MS } from './contract.js';

const RATE_KEY = 'lumo.rate';
let queue = Promise.resolve();

/** `{ok: true}` (and the write is counted) or `{ok: false, retryAfterMs}`. */
export function admit(caller, now = Date.now(), limit = WRITE_LIMIT, windowMs = WRITE_WINDOW_MS) {
  const step = queue.then(async () => {
    const all = (await chrome.storage.session.get(RATE_KEY))[RATE_KEY] ?? {};
    for (const [key, times] of Object.entries(all)) {
      const live = times.filter((t) => t > now - windowMs);
      if (live.length) all[key] = live;
      else delete all[key];
    }
    const times = all[caller] ?? [];
    if (times.length >= limit) {
      return { ok: false, retryAfterMs: Math.max(0, times[0] + windowMs - now), limit, windowMs };
    }
    all[caller] = [...times, now];
    await chrome.storage.session.set({ [RATE_KEY]: all });
    return { ok: true };
  });
  queue = step.catch(() => {});
  return step;
}

/** Forgets every window (tests). */
export async function reset() {
  await chrome.storage.session.remove(RATE_KEY);
}

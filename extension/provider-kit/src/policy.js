// The provider's policy, persisted in chrome.storage.local under one key and
// read afresh for every probe, port and tool call, so a switch flipped in the
// options page (or by a test) takes effect on the very next call.
//
// Authorization is by extension ID only (`sender.id`); names are kept for
// display. A caller that probes while the endpoint is on and is neither
// allowed nor denied becomes a pending approval.

import { isExtensionId } from './contract.js';

export const POLICY_KEY = 'lumo.policy';
/**
 * A file in the extension's own package that, when present, seeds the policy
 * before anything is stored: tests copy a provider and add one (e.g.
 * `{"allowlist": ["<bridge id>"]}`) instead of clicking. Never ship one.
 */
export const PRESET_FILE = 'lumo-policy.preset.json';

/** Defaults: endpoint on, nobody allowed, writes allowed, no review. */
export const DEFAULT_POLICY = Object.freeze({
  enabled: true,
  writes: true,
  review: false,
  allowlist: [],
  pending: [],
  denied: [],
});

let initial = DEFAULT_POLICY;

/** Sets the policy used before anything was stored (a provider's own defaults). */
export function setInitialPolicy(overrides = {}) {
  initial = normalize({ ...DEFAULT_POLICY, ...overrides });
}

function callers(list) {
  if (!Array.isArray(list)) return [];
  const out = [];
  for (const entry of list) {
    const id = typeof entry === 'string' ? entry : entry?.id;
    if (!isExtensionId(id) || out.some((e) => e.id === id)) continue;
    const name = typeof entry?.name === 'string' ? entry.name.slice(0, 64) : '';
    const at = Number.isFinite(entry?.at) ? entry.at : 0;
    out.push({ id, name, at });
  }
  return out;
}

function normalize(p) {
  const src = p && typeof p === 'object' ? p : {};
  const bool = (v, d) => (typeof v === 'boolean' ? v : d);
  return {
    enabled: bool(src.enabled, initial.enabled),
    writes: bool(src.writes, initial.writes),
    review: bool(src.review, initial.review),
    allowlist: callers(src.allowlist ?? initial.allowlist),
    pending: callers(src.pending ?? initial.pending),
    denied: callers(src.denied ?? initial.denied),
  };
}

// Read-modify-write steps run one after another: two probes arriving
// together must not lose each other's pending entry.
let queue = Promise.resolve();
function serially(step) {
  const run = queue.then(step);
  queue = run.catch(() => {});
  return run;
}

let preset;
/** The package's preset, or null; read once per worker, and only while nothing is stored. */
function readPreset() {
  preset ??= fetch(chrome.runtime.getURL(PRESET_FILE))
    .then((r) => (r.ok ? r.json() : null))
    .then((p) => (p && typeof p === 'object' && !Array.isArray(p) ? p : null))
    .catch(() => null);
  return preset;
}

/** The whole policy, as stored (or the preset, or the initial one). */
export async function get() {
  const stored = (await chrome.storage.local.get(POLICY_KEY))[POLICY_KEY];
  if (stored) return normalize(stored);
  const seeded = await readPreset();
  return normalize(seeded ? { ...initial, ...seeded } : initial);
}

/** Applies `change(policy)` (which edits it in place or returns a new one) and stores it. */
export function update(change) {
  return serially(async () => {
    const current = await get();
    const next = normalize((await change(current)) ?? current);
    await chrome.storage.local.set({ [POLICY_KEY]: next });
    return next;
  });
}

/** Replaces fields of the policy: `set({enabled: false})`. */
export function set(fields) {
  return update((p) => ({ ...p, ...fields }));
}

function requireId(id) {
  if (!isExtensionId(id)) throw new Error(`not an extension ID (32 letters a-p): ${JSON.stringify(id)}`);
}

/** Allows `id` (from pending or not); it leaves pending and denied. */
export function approve(id, name = '') {
  requireId(id);
  return update((p) => {
    const known = [...p.pending, ...p.denied].find((e) => e.id === id);
    p.pending = p.pending.filter((e) => e.id !== id);
    p.denied = p.denied.filter((e) => e.id !== id);
    if (!p.allowlist.some((e) => e.id === id)) p.allowlist.push({ id, name: name || known?.name || '', at: Date.now() });
  });
}

/** Refuses `id`: it leaves the allow list and pending and is not asked about again. */
export function deny(id) {
  requireId(id);
  return update((p) => {
    const known = [...p.pending, ...p.allowlist].find((e) => e.id === id);
    p.pending = p.pending.filter((e) => e.id !== id);
    p.allowlist = p.allowlist.filter((e) => e.id !== id);
    if (!p.denied.some((e) => e.id === id)) p.denied.push({ id, name: known?.name || '', at: Date.now() });
  });
}

/** Forgets `id` everywhere (it will be pending again on its next probe). */
export function forget(id) {
  requireId(id);
  return update((p) => {
    for (const list of ['allowlist', 'pending', 'denied']) p[list] = p[list].filter((e) => e.id !== id);
  });
}

/**
 * What the policy says about one caller now: `{enabled, authorized,
 * pendingApproval, writes, review}`. With `requestApproval`, an unknown caller
 * of an enabled endpoint is added to pending (the probe does this).
 */
export async function resolve(callerId, { requestApproval = false, displayName = '' } = {}) {
  let p = await get();
  const valid = isExtensionId(callerId);
  const listed = (list) => valid && list.some((e) => e.id === callerId);
  if (requestApproval && valid && p.enabled && !listed(p.allowlist) && !listed(p.pending) && !listed(p.denied)) {
    p = await update((q) => {
      if (![...q.allowlist, ...q.pending, ...q.denied].some((e) => e.id === callerId)) {
        q.pending.push({ id: callerId, name: displayName, at: Date.now() });
      }
    });
  }
  const authorized = listed(p.allowlist);
  return {
    enabled: p.enabled,
    authorized,
    pendingApproval: !authorized && listed(p.pending),
    writes: p.writes,
    review: p.review,
  };
}

// The write audit: tool, sender ID, outcome, target UUID and a hash of the
// parameters, the same record as lumo-protocol's audit.rs. The parameters
// only ever enter as SHA-256 of their RFC 8785 canonical JSON, so a script's
// source never reaches the log; the record has no free-text field at all.

import { isExtensionId, isUuid } from './contract.js';

export const AUDIT_KEY = 'lumo.audit';
/** Newest records kept (older ones are dropped first). */
export const AUDIT_KEEP = 1000;

/**
 * RFC 8785 (JCS) canonical JSON: object keys sorted by UTF-16 code units,
 * no whitespace, numbers and strings as ECMAScript serializes them.
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('parameters cannot be canonicalized: a number is not finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  throw new Error(`parameters cannot be canonicalized: a ${typeof value} is not JSON`);
}

/** Hex SHA-256 of `params` in canonical JSON (equal to lumo-protocol's `params_hash`). */
export async function paramsHash(params) {
  const bytes = new TextEncoder().encode(canonicalJson(params ?? {}));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const OUTCOME = /^[a-z_]{1,32}$/;
const TOOL = /^[A-Za-z0-9_-]{1,64}$/;

let queue = Promise.resolve();

/**
 * Appends one record. Every field is checked against a narrow alphabet, so
 * no free text can ride in one; a bad target is left out rather than logged.
 */
export function record({ tool, caller, outcome, target, params }) {
  const step = queue.then(async () => {
    if (!TOOL.test(tool)) throw new Error('audit tool name must match ^[A-Za-z0-9_-]{1,64}$');
    if (!isExtensionId(caller)) throw new Error('audit caller must be an extension ID');
    if (!OUTCOME.test(outcome)) throw new Error('audit outcome must be "ok" or an error code');
    const entry = { tool, caller, outcome, paramsHash: await paramsHash(params), atMs: Date.now() };
    if (isUuid(target)) entry.target = target.toLowerCase();
    const log = (await chrome.storage.local.get(AUDIT_KEY))[AUDIT_KEY] ?? [];
    log.push(entry);
    await chrome.storage.local.set({ [AUDIT_KEY]: log.slice(-AUDIT_KEEP) });
    return entry;
  });
  queue = step.catch(() => {});
  return step;
}

/** Every kept record, oldest first. */
export async function list() {
  return (await chrome.storage.local.get(AUDIT_KEY))[AUDIT_KEY] ?? [];
}

/** Empties the log. */
export async function clear() {
  await chrome.storage.local.remove(AUDIT_KEY);
}

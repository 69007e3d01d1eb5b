// What the bridge remembers. A service worker may stop at any moment, so
// nothing lives in module globals that a restart would need: settings and
// credentials in chrome.storage.local, per-browser-session facts (shared
// tabs, commands already run) in chrome.storage.session.

/** Where lumo listens unless the user set another address. */
export const DEFAULT_SERVER = 'ws://127.0.0.1:17345/bridge';

/** Timings from the bridge design: heartbeat, pong timeout, reconnect, refresh. */
export const HEARTBEAT_MS = 15_000;
export const PONG_TIMEOUT_MS = 5_000;
export const RECONNECT_BASE_MS = 3_000;
export const RECONNECT_MAX_MS = 60_000;
export const REFRESH_BEFORE_MS = 5 * 60_000;

/** Reads settings and credentials. */
export async function settings() {
  const s = await chrome.storage.local.get(['server', 'pairCode', 'token', 'tokenExpiresAt', 'refresh']);
  return { server: s.server || DEFAULT_SERVER, ...s };
}

export async function saveCredentials({ token, expires_in, refresh }) {
  await chrome.storage.local.set({
    token,
    tokenExpiresAt: Date.now() + expires_in * 1000,
    ...(refresh ? { refresh } : {}),
  });
  await chrome.storage.local.remove('pairCode');
}

/** Forgets credentials lumo refused, so the popup shows "not paired". */
export async function dropCredentials() {
  await chrome.storage.local.remove(['token', 'tokenExpiresAt', 'refresh']);
}

/** The state the popup shows: connected / reconnecting / not paired / rejected. */
export async function setStatus(status) {
  await chrome.storage.session.set({ status: { ...status, at: Date.now() } });
}

export async function status() {
  return (await chrome.storage.session.get('status')).status || { state: 'starting' };
}

/** Shared tabs: tabId → debugger targetId. */
export async function sharedTabs() {
  return (await chrome.storage.session.get('shared')).shared || {};
}

export async function setShared(shared) {
  await chrome.storage.session.set({ shared });
}

export async function session(key) {
  return (await chrome.storage.session.get(key))[key];
}

export async function setSession(values) {
  await chrome.storage.session.set(values);
}

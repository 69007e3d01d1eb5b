// The bridge's service worker: one WebSocket to lumo (authenticated, kept
// alive by an application heartbeat, reconnected with backoff and jitter,
// its token refreshed before expiry) and the CDP relay for shared tabs.
//
// Every listener is registered synchronously at the top level, so an event
// that wakes a stopped worker reaches it. The socket and timers die with the
// worker; everything else lives in chrome.storage (see state.js).

import * as state from './state.js';
import * as relay from './relay.js';
import * as providers from './providers.js';

let socket = null;
let heartbeat = null;
let pongTimer = null;
let refreshTimer = null;
let reconnectTimer = null;
// Commands start in the order they arrive (see relay.begin).
let order = Promise.resolve();
// Events that came while the socket was down (a restarted worker gets the
// debugger events that woke it before it has reconnected): sent after `ready`.
const held = [];
const HELD_MAX = 2000;

/** Sends a CDP event now, or holds it until lumo is connected again. */
function sendEvent(msg) {
  if (send({ type: 'cdp', msg })) return;
  if (held.length >= HELD_MAX) held.shift();
  held.push(msg);
}

/** Close codes lumo uses when it refuses a connection (see README, "Bridge extension"). */
const REFUSED = { 4001: 'token refused', 4002: 'pairing refused', 4003: 'origin refused', 4000: 'replaced' };

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify(message));
    return true;
  }
  return false;
}

async function connect() {
  if (socket && socket.readyState <= WebSocket.OPEN) return;
  clearTimeout(reconnectTimer);
  const s = await state.settings();
  // Another call may have connected while settings were read.
  if (socket && socket.readyState <= WebSocket.OPEN) return;
  let first;
  if (s.token && s.tokenExpiresAt > Date.now() + 5_000) first = { type: 'auth', token: s.token };
  else if (s.refresh) first = { type: 'refresh', refresh: s.refresh };
  else if (s.pairCode) first = { type: 'pair', code: s.pairCode };
  else {
    await state.setStatus({ state: 'not paired', why: 'Run `lumo pair` and enter its code in this popup.' });
    return;
  }
  first.version = chrome.runtime.getManifest().version;
  const ws = new WebSocket(s.server);
  socket = ws;
  // Not `connected` until lumo says ready (a restarted worker must not show the old socket's state).
  state.setStatus({ state: 'connecting', server: s.server });
  ws.onopen = () => ws.send(JSON.stringify(first));
  ws.onmessage = (e) => onMessage(ws, e.data);
  ws.onclose = (e) => onClose(ws, e);
}

async function onMessage(ws, data) {
  let message;
  try {
    message = JSON.parse(data);
  } catch {
    console.warn('lumo bridge: a message that is not JSON', data);
    return;
  }
  switch (message.type) {
    case 'token':
      await state.saveCredentials(message);
      scheduleRefresh();
      break;
    case 'ready':
      // Before anything awaits: the held events are older than any answer to come.
      for (const msg of held.splice(0)) send({ type: 'cdp', msg });
      await relay.collectOld();
      await state.setSession({ attempts: 0 });
      await state.setStatus({ state: 'connected', server: (await state.settings()).server });
      startHeartbeat(ws);
      scheduleRefresh();
      break;
    case 'pong':
      clearTimeout(pongTimer);
      break;
    case 'ping':
      send({ type: 'pong', n: message.n });
      break;
    case 'cdp': {
      const msg = message.msg;
      const turn = order.then(() => relay.begin(msg));
      order = turn.catch(() => {});
      const { done } = await turn;
      send({ type: 'cdp', msg: await done });
      break;
    }
    default:
      if (typeof message.type === 'string' && message.type.startsWith('provider.')) {
        providers.handle(message, send);
        break;
      }
      console.warn('lumo bridge: ignored a message of unknown type', message.type);
  }
}

async function onClose(ws, e) {
  if (socket !== ws) return;
  socket = null;
  providers.closeAll();
  clearInterval(heartbeat);
  clearTimeout(pongTimer);
  clearTimeout(refreshTimer);
  const refused = REFUSED[e.code];
  if (e.code === 4001) {
    // The access token was refused: the refresh token (if any) gets one try.
    await chrome.storage.local.remove(['token', 'tokenExpiresAt']);
    if ((await state.settings()).refresh) return scheduleReconnect(0);
  }
  if (e.code === 4002) await state.dropCredentials();
  if (refused && e.code !== 4000) {
    await state.setStatus({ state: 'rejected', code: e.code, why: e.reason || refused });
    return;
  }
  if (e.code === 4000) return;
  scheduleReconnect();
}

async function scheduleReconnect(fixed) {
  const attempts = (await state.session('attempts')) || 0;
  const backoff = Math.min(state.RECONNECT_MAX_MS, state.RECONNECT_BASE_MS * 2 ** attempts);
  const delay = fixed ?? Math.round(backoff * (0.8 + 0.4 * Math.random()));
  await state.setSession({ attempts: attempts + 1 });
  await state.setStatus({ state: 'reconnecting', nextTryAt: Date.now() + delay });
  clearTimeout(reconnectTimer);
  reconnectTimer = setTimeout(connect, delay);
}

function startHeartbeat(ws) {
  clearInterval(heartbeat);
  let n = 0;
  heartbeat = setInterval(() => {
    if (socket !== ws) return clearInterval(heartbeat);
    ws.send(JSON.stringify({ type: 'ping', n: ++n }));
    clearTimeout(pongTimer);
    pongTimer = setTimeout(() => ws.close(3001, 'no pong within 5 s'), state.PONG_TIMEOUT_MS);
  }, state.HEARTBEAT_MS);
}

async function scheduleRefresh() {
  clearTimeout(refreshTimer);
  const s = await state.settings();
  if (!s.refresh || !s.tokenExpiresAt) return;
  const left = s.tokenExpiresAt - Date.now();
  // Five minutes before expiry; halfway for tokens shorter than ten minutes.
  const wait = left > 2 * state.REFRESH_BEFORE_MS ? left - state.REFRESH_BEFORE_MS : left / 2;
  refreshTimer = setTimeout(async () => {
    const now = await state.settings();
    send({ type: 'refresh', refresh: now.refresh });
  }, Math.max(0, wait));
}

// Restarts a stopped worker within a second (see wake.js); the alarm is the fallback.
async function ensureWaker() {
  if (!chrome.offscreen || (await chrome.offscreen.hasDocument())) return;
  await chrome.offscreen
    .createDocument({ url: 'wake.html', reasons: ['WORKERS'], justification: 'Restart the bridge worker so lumo calls complete.' })
    .catch((e) => console.warn('lumo bridge: no offscreen waker', e));
}

// Wakes a stopped worker now and then, so it reconnects even with nothing else happening.
chrome.alarms.create('lumo-bridge-wake', { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connect());
chrome.runtime.onStartup.addListener(() => connect());
chrome.runtime.onInstalled.addListener(() => connect());

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !(changes.server || changes.pairCode)) return;
  if (changes.pairCode && !changes.pairCode.newValue) return;
  // A new address or pairing code: start over with it.
  const old = socket;
  socket = null;
  if (old) old.close(1000, 'settings changed');
  state.setSession({ attempts: 0 }).then(connect);
});

chrome.debugger.onEvent.addListener((source, method, params) => {
  sendEvent(relay.event(source, method, params));
});

chrome.debugger.onDetach.addListener(async (source, reason) => {
  // The scripts registered for new documents went with the debugger session.
  await relay.forgetScripts(source.targetId);
  // The user cancelled debugging (the infobar) or the tab went away: lumo loses the tab.
  const shared = await state.sharedTabs();
  const tabId = Object.keys(shared).find((k) => shared[k] === source.targetId);
  if (tabId && reason === 'canceled_by_user') {
    const e = await relay.tabEvent('Target.targetDestroyed', tabId);
    if (e) sendEvent(e);
  }
});

chrome.tabs.onCreated.addListener(async (tab) => {
  // Tabs and popups opened by a shared tab are shared too.
  const shared = await state.sharedTabs();
  if (tab.openerTabId === undefined || !shared[tab.openerTabId]) return;
  await relay.share(tab.id);
  const e = await relay.tabEvent('Target.targetCreated', tab.id, { url: tab.pendingUrl || tab.url || '' });
  if (e) sendEvent(e);
});

chrome.tabs.onRemoved.addListener(async (tabId) => {
  // Its debugger session is gone, and the scripts registered on it (onDetach is not always told).
  const targetId = (await state.sharedTabs())[tabId];
  if (targetId) await relay.forgetScripts(targetId);
  const e = await relay.tabEvent('Target.targetDestroyed', tabId);
  if (e) sendEvent(e);
});

chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  if (!('title' in change || 'url' in change)) return;
  const e = await relay.tabEvent('Target.targetInfoChanged', tabId, { url: tab.url, title: tab.title });
  if (e) sendEvent(e);
});

// From the popup.
chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  const handle = async () => {
    switch (message.type) {
      case 'wake':
        connect();
        return { ok: true };
      case 'status':
        return { status: await state.status(), shared: await state.sharedTabs(), settings: await state.settings() };
      case 'pair':
        await chrome.storage.local.set({ server: message.server || state.DEFAULT_SERVER, pairCode: message.code });
        return { ok: true };
      case 'share':
        return { targetId: await relay.share(message.tabId) };
      case 'unshare': {
        const targetId = await relay.unshare(message.tabId);
        if (targetId) sendEvent({ method: 'Target.targetDestroyed', params: { targetId } });
        return { ok: true };
      }
      default:
        console.warn('lumo bridge: ignored a popup message of unknown type', message.type);
        return { error: `unknown message type ${message.type}` };
    }
  };
  handle().then(reply, (e) => reply({ error: String(e) }));
  return true;
});

connect();
ensureWaker();

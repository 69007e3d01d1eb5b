// CDP through chrome.debugger for the tabs the user shares with lumo.
//
// lumo speaks browser-level CDP with flattened sessions. Here a tab's session
// id is its debugger target id, and a child session (a cross-origin frame)
// is `<targetId>~<child sessionId>`, so routing needs no memory. The few
// browser-level Target commands lumo sends are answered with chrome.tabs.
//
// A command is recorded in chrome.storage.session before it runs and its
// answer after, so when lumo sends it again (after the worker restarted or
// the socket dropped) it is answered from the record, never run twice.

import { sharedTabs, setShared, session, setSession } from './state.js';

/**
 * Commands safe to run again if the worker stopped mid-run: they change
 * nothing, or running them twice ends the same as once (a fresh isolated
 * world, of which lumo uses the newest; a script for new documents, which
 * addScriptOnce registers once). Page.navigate, the command most
 * often in flight, is answered by waiting for its commit (navigationOf).
 */
const REPEATABLE = /^([A-Za-z]+\.(get|describe|query|resolve|enable|disable|capture|setDiscoverTargets|setAutoAttach|setLifecycleEventsEnabled|setInterceptFileChooserDialog)|Page\.createIsolatedWorld$|Page\.addScriptToEvaluateOnNewDocument$)/;

/** The error code of a command the worker stopped under (lumo_cdp::CARRIER_UNSURE): lumo runs it again only if that is safe. */
const UNSURE = -32091;

/** Commands this worker is running now: id → promise of the answer (lives and dies with the worker). */
const running = new Map();

/** How many answers to keep for resends (per lumo process: its lane is in the high bits of the id). */
const KEEP = 500;

/** Records older than this are dropped when lumo connects: no lumo resends a command that old. */
const RECORD_MAX_AGE_MS = 10 * 60_000;

function split(sessionId) {
  const [targetId, child] = sessionId.split('~');
  return child ? { targetId, sessionId: child } : { targetId };
}

function join(source, child) {
  return child ? `${source.targetId}~${child}` : source.targetId;
}

async function targetOfTab(tabId) {
  for (let i = 0; i < 50; i++) {
    const t = (await chrome.debugger.getTargets()).find((t) => t.tabId === tabId);
    if (t) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`tab ${tabId} has no debugger target`);
}

function info(t) {
  return { targetId: t.id, type: 'page', url: t.url, title: t.title, attached: t.attached, canAccessOpener: false };
}

/** Puts a shared tab in the "lumo" tab group, so the user sees what the agent can drive. */
async function markShared(tabId) {
  if (!chrome.tabGroups) return;
  try {
    const known = await session('groupId');
    const group = await chrome.tabs.group(known ? { tabIds: tabId, groupId: known } : { tabIds: tabId }).catch(() =>
      chrome.tabs.group({ tabIds: tabId }),
    );
    if (group !== known) {
      await setSession({ groupId: group });
      await chrome.tabGroups.update(group, { title: 'lumo', color: 'purple' });
    }
  } catch (e) {
    console.warn('lumo bridge: could not mark the shared tab with a tab group', e);
  }
}

/** Shares a tab with lumo (tabs opened by a shared tab are shared too). */
export async function share(tabId) {
  const shared = await sharedTabs();
  if (shared[tabId]) return shared[tabId];
  const target = await targetOfTab(tabId);
  shared[tabId] = target.id;
  await setShared(shared);
  await markShared(tabId);
  return target.id;
}

export async function unshare(tabId) {
  const shared = await sharedTabs();
  const targetId = shared[tabId];
  if (!targetId) return null;
  delete shared[tabId];
  await setShared(shared);
  await chrome.debugger.detach({ targetId }).catch(() => {});
  await forgetScripts(targetId);
  await chrome.tabs.ungroup(Number(tabId)).catch(() => {});
  return targetId;
}

async function browserCommand(method, params) {
  const shared = await sharedTabs();
  const mine = new Set(Object.values(shared));
  switch (method) {
    case 'Target.setDiscoverTargets':
      await setSession({ discover: !!params.discover });
      return {};
    case 'Target.getTargets': {
      const all = await chrome.debugger.getTargets();
      return { targetInfos: all.filter((t) => mine.has(t.id)).map(info) };
    }
    case 'Target.getTargetInfo': {
      const t = (await chrome.debugger.getTargets()).find((t) => t.id === params.targetId && mine.has(t.id));
      if (!t) throw new Error(`No shared tab with target id ${params.targetId}`);
      return { targetInfo: info(t) };
    }
    case 'Target.createTarget': {
      const tab = await chrome.tabs.create({ url: params.url || 'about:blank', active: true });
      return { targetId: await share(tab.id) };
    }
    case 'Target.attachToTarget': {
      if (!mine.has(params.targetId)) throw new Error(`Tab ${params.targetId} is not shared with lumo`);
      await attach(params.targetId);
      return { sessionId: params.targetId };
    }
    case 'Target.activateTarget':
    case 'Target.closeTarget': {
      const tabId = Number(Object.keys(shared).find((k) => shared[k] === params.targetId));
      if (!tabId) throw new Error(`Tab ${params.targetId} is not shared with lumo`);
      if (method === 'Target.closeTarget') await chrome.tabs.remove(tabId);
      else await chrome.tabs.update(tabId, { active: true });
      return method === 'Target.closeTarget' ? { success: true } : {};
    }
    default:
      throw new Error(`${method} is not available over the lumo bridge`);
  }
}

async function attach(targetId) {
  try {
    await chrome.debugger.attach({ targetId }, '1.3');
  } catch (e) {
    // Attached already (this worker before it restarted): that is what we want.
    if (!/already attached/i.test(String(e.message))) throw e;
  }
}

async function run(msg) {
  if (!msg.sessionId) return browserCommand(msg.method, msg.params || {});
  const target = split(msg.sessionId);
  const shared = new Set(Object.values(await sharedTabs()));
  if (!shared.has(target.targetId)) throw new Error(`Tab ${target.targetId} is no longer shared with lumo`);
  const command = msg.method === 'Page.addScriptToEvaluateOnNewDocument' ? addScriptOnce : send;
  try {
    return await command(target, msg.method, msg.params || {});
  } catch (e) {
    if (!/not attached/i.test(String(e.message)) || target.sessionId) throw e;
    await attach(target.targetId);
    // A new debugger session: the scripts registered on the old one went with it.
    await forgetScripts(target.targetId);
    return command(target, msg.method, msg.params || {});
  }
}

function send(target, method, params) {
  return chrome.debugger.sendCommand(target, method, params);
}

/**
 * A script for every new document of a tab, one per world. Every lumo that
 * attaches a shared tab registers its page helper, and the debugger session
 * outlives lumos (it stays while the tab is shared): without this, each lumo
 * that ever attached would leave a copy that runs in every later document.
 * The same for a frame's session (an out-of-process frame's documents).
 * The same source again gets the first registration's identifier; another
 * source for the same world (a newer lumo) replaces it.
 */
async function addScriptOnce(target, method, params) {
  const key = `p:${join(target, target.sessionId)}:${params.worldName || ''}`;
  const digest = await sha256(params.source || '');
  const known = await session(key);
  if (known?.digest === digest) return { identifier: known.identifier };
  if (known) {
    await send(target, 'Page.removeScriptToEvaluateOnNewDocument', { identifier: known.identifier }).catch(() => {});
  }
  const added = await send(target, method, params);
  await setSession({ [key]: { digest, identifier: added.identifier } });
  return added;
}

/** Forgets the scripts registered on a tab's debugger session and its frames' (it detached). */
export async function forgetScripts(targetId) {
  // Keys only: the records of answers beside them may be large (Chrome 130 has getKeys).
  const keys = chrome.storage.session.getKeys
    ? await chrome.storage.session.getKeys()
    : Object.keys(await chrome.storage.session.get(null));
  const mine = (k) => k.startsWith(`p:${targetId}:`) || k.startsWith(`p:${targetId}~`);
  await chrome.storage.session.remove(keys.filter(mine));
}

async function sha256(text) {
  const bytes = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Drops old records. Records are not dropped when another lumo takes over
 * the connection: ids carry each lumo process's lane, so they never collide,
 * and a command an earlier owner passed on may be sent again by the new one.
 */
export async function collectOld() {
  const all = await chrome.storage.session.get(null);
  const old = Date.now() - RECORD_MAX_AGE_MS;
  await chrome.storage.session.remove(Object.keys(all).filter((k) => k.startsWith('r:') && !(all[k]?.at > old)));
}

/** The answer to a Page.navigate that a stopped worker started: its commit, or a new run after 10 s. */
async function navigationOf(msg) {
  const target = split(msg.sessionId);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const tree = await chrome.debugger.sendCommand(target, 'Page.getFrameTree', {}).catch(() => null);
    const frame = tree?.frameTree?.frame;
    if (frame && frame.url === msg.params.url) {
      return { id: msg.id, sessionId: msg.sessionId, result: { frameId: frame.id, loaderId: frame.loaderId } };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    return { id: msg.id, sessionId: msg.sessionId, result: await run(msg) };
  } catch (e) {
    return { id: msg.id, sessionId: msg.sessionId, error: { code: -32000, message: String(e.message || e) } };
  }
}

/**
 * Starts one command from lumo (at most once). Resolves, in arrival order,
 * to `{ done }`: a promise of the answer message. The caller awaits `begin`
 * in order so commands reach the browser in the order lumo sent them.
 */
export async function begin(msg) {
  const key = `r:${msg.id}`;
  // Sent again while still running here (the socket dropped and came back): the same answer.
  if (running.has(msg.id)) return { done: running.get(msg.id) };
  const record = await session(key);
  if (record?.answer) return { done: Promise.resolve(record.answer) };
  if (record?.running && msg.method === 'Page.navigate' && msg.sessionId) {
    // Running it again would abort the navigation the first run started: wait for that one instead.
    return { done: navigationOf(msg) };
  }
  if (record?.running && !REPEATABLE.test(msg.method)) {
    const error = {
      code: UNSURE,
      message: `The bridge's service worker stopped while ${msg.method} ran; it may or may not have taken effect, so it was not run again.`,
    };
    return { done: Promise.resolve({ id: msg.id, error }) };
  }
  await setSession({ [key]: { running: true, at: Date.now() } });
  const started = run(msg);
  const done = (async () => {
    let answer;
    try {
      answer = { id: msg.id, result: (await started) || {} };
    } catch (e) {
      answer = { id: msg.id, error: { code: -32000, message: String(e.message || e) } };
    }
    if (msg.sessionId) answer.sessionId = msg.sessionId;
    await setSession({ [key]: { answer, at: Date.now() } });
    await chrome.storage.session.remove(`r:${msg.id - KEEP}`);
    running.delete(msg.id);
    return answer;
  })();
  running.set(msg.id, done);
  return { done };
}

/** A chrome.debugger event as lumo expects it, or null for tabs not shared. */
export function event(source, method, params) {
  const out = { method, params: params || {}, sessionId: join(source, source.sessionId) };
  if (method === 'Target.attachedToTarget' || method === 'Target.detachedFromTarget') {
    out.params = { ...out.params, sessionId: join(source, out.params.sessionId) };
  }
  return out;
}

/** Browser-level events for a shared tab, when lumo asked to discover targets. */
export async function tabEvent(method, tabId, extra) {
  if (!(await session('discover'))) return null;
  const shared = await sharedTabs();
  const targetId = shared[tabId];
  if (!targetId) return null;
  if (method === 'Target.targetDestroyed') {
    delete shared[tabId];
    await setShared(shared);
    return { method, params: { targetId } };
  }
  return { method, params: { targetInfo: { targetId, type: 'page', attached: false, ...extra } } };
}

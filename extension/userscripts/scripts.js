// The userscripts themselves: stored in chrome.storage.local, one record per
// script keyed by a UUID; enabled and reviewed scripts are registered with
// chrome.userScripts when the browser allows it (the user's "Allow User
// Scripts" toggle), and a script can be run on one tab on demand.

export const SCRIPTS_KEY = 'userscripts.scripts';

let queue = Promise.resolve();
function serially(step) {
  const run = queue.then(step);
  queue = run.catch(() => {});
  return run;
}

export async function all() {
  return (await chrome.storage.local.get(SCRIPTS_KEY))[SCRIPTS_KEY] ?? {};
}

export async function get(id) {
  return (await all())[id];
}

/** Applies `change(scripts)` and stores the result; returns what `change` returned. */
export function change(step) {
  return serially(async () => {
    const scripts = await all();
    const out = await step(scripts);
    await chrome.storage.local.set({ [SCRIPTS_KEY]: scripts });
    await sync(scripts).catch((e) => console.warn('userscripts: registering with chrome.userScripts failed', e));
    return out;
  });
}

/** chrome.userScripts, or null when the browser does not offer it to this extension. */
export function userScriptsApi() {
  try {
    // Accessing the namespace throws (or is undefined) until the user allows user scripts.
    const api = chrome.userScripts;
    return api && typeof api.getScripts === 'function' ? api : null;
  } catch {
    return null;
  }
}

/** Keeps chrome.userScripts registrations equal to the enabled, reviewed scripts with matches. */
export async function sync(scripts) {
  const api = userScriptsApi();
  if (!api) return;
  const wanted = Object.values(scripts).filter((s) => s.enabled && s.reviewed && s.matches.length);
  const registered = await api.getScripts();
  if (registered.length) await api.unregister({ ids: registered.map((r) => r.id) });
  if (wanted.length) {
    await api.register(wanted.map((s) => ({ id: s.id, matches: s.matches, js: [{ code: s.code }], runAt: 'document_idle' })));
  }
}

function jsonSafe(value) {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return null;
    return text.length > 10_000 ? `${text.slice(0, 10_000)}… (truncated)` : JSON.parse(text);
  } catch {
    return String(value);
  }
}

/**
 * Runs `code` once in tab `tabId`: with chrome.userScripts.execute (USER_SCRIPT
 * world) when available, else chrome.scripting.executeScript in the page's
 * MAIN world (which the page's own CSP may refuse). Returns `{via, result}`.
 */
export async function runOnTab(code, tabId) {
  const api = userScriptsApi();
  if (api && typeof api.execute === 'function') {
    const [first] = await api.execute({ target: { tabId }, js: [{ code }], world: 'USER_SCRIPT' });
    if (first?.error) throw new Error(first.error);
    return { via: 'userScripts', result: jsonSafe(first?.result) };
  }
  const [first] = await chrome.scripting.executeScript({
    target: { tabId },
    world: 'MAIN',
    args: [code],
    func: (source) => {
      try {
        // The whole point of a userscripts manager: run the user's source in the page.
        // eslint-disable-next-line no-eval
        return { value: (0, eval)(source) };
      } catch (e) {
        return { error: String(e?.message ?? e) };
      }
    },
  });
  const out = first?.result;
  if (!out) throw new Error('the page returned nothing (it may refuse scripts)');
  if (out.error) throw new Error(out.error);
  return { via: 'scripting', result: jsonSafe(out.value) };
}

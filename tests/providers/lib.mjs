// Test harness for provider extensions: a real headless Chromium with real
// extensions loaded, driven over CDP on --remote-debugging-pipe (no port is
// opened). The caller is a real extension — the bridge — whose service worker
// sends the probe and opens the port; an MCP Transport here relays the
// port's messages so the official TypeScript SDK Client runs the session.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BRIDGE_ID = 'hjfgijdboblbpgomjhgpbhfiobiokomm';
export const USERSCRIPTS_ID = 'eghfoecghmfkmlcingapcclcakhdighl';
const BROWSER = process.env.LUMO_BROWSER ?? '/usr/lib/chromium/chromium';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A CDP connection over the pipe of a Chromium it started. */
export class Browser {
  static async launch(extensionDirs) {
    const profile = mkdtempSync(join(tmpdir(), 'lumo-providers-'));
    const dirs = extensionDirs.map((d) => resolve(ROOT, d)).join(',');
    const args = [
      '--headless=new', '--no-sandbox', '--no-first-run', '--no-default-browser-check',
      '--remote-debugging-pipe', `--user-data-dir=${profile}`,
      `--disable-extensions-except=${dirs}`, `--load-extension=${dirs}`, 'about:blank',
    ];
    const child = spawn(BROWSER, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    const b = new Browser(child, profile);
    await b.send('Target.setDiscoverTargets', { discover: true });
    return b;
  }

  constructor(child, profile) {
    this.child = child;
    this.profile = profile;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.stderr = '';
    child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    let buffer = Buffer.alloc(0);
    child.stdio[4].on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      let end;
      while ((end = buffer.indexOf(0)) >= 0) {
        const message = JSON.parse(buffer.subarray(0, end).toString('utf8'));
        buffer = buffer.subarray(end + 1);
        this.#dispatch(message);
      }
    });
    child.on('exit', () => {
      for (const { reject } of this.pending.values()) reject(new Error(`browser exited: ${this.stderr}`));
      this.pending.clear();
    });
  }

  #dispatch(message) {
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (!waiter) return;
      if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
      else waiter.resolve(message.result);
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  send(method, params = {}, sessionId) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolvePromise, reject) => {
      this.pending.set(id, { resolve: resolvePromise, reject, method });
      this.child.stdio[3].write(`${JSON.stringify(message)}\0`);
    });
  }

  /** Resolves with the first event `method` for which `match(params)` holds. */
  waitFor(method, match = () => true, timeoutMs = 10_000) {
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (m) => {
        if (m.method === method && match(m.params)) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          resolvePromise(m.params);
        }
      };
      this.listeners.add(listener);
    });
  }

  /** The first target matching `match`, waiting for it to appear. */
  async target(match, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { targetInfos } = await this.send('Target.getTargets');
      const found = targetInfos.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error('target not found in time');
      await sleep(50);
    }
  }

  /** A session in the service worker of extension `id`, with its top level run. */
  async worker(id) {
    const info = await this.target((t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${id}/`));
    const { sessionId } = await this.send('Target.attachToTarget', { targetId: info.targetId, flatten: true });
    const session = new Session(this, sessionId, info.targetId);
    // The target appears before its top level has run: wait until chrome.runtime answers.
    const deadline = Date.now() + 10_000;
    while (!(await session.eval('typeof chrome !== "undefined" && !!chrome.runtime?.id').catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`worker of ${id} never became ready`);
      await sleep(30);
    }
    return session;
  }

  /** A session on a new tab at `url`, once loaded. */
  async page(url) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const session = new Session(this, sessionId, targetId);
    await this.send('Page.enable', {}, sessionId);
    const loaded = this.waitFor('Page.loadEventFired', () => true);
    await this.send('Page.navigate', { url }, sessionId);
    await loaded;
    return session;
  }

  async close() {
    const exited = new Promise((r) => this.child.once('exit', r));
    try {
      await Promise.race([this.send('Browser.close'), sleep(2000)]);
    } catch {
      // Gone already.
    }
    await Promise.race([exited, sleep(3000).then(() => this.child.kill('SIGKILL'))]);
    rmSync(this.profile, { recursive: true, force: true });
  }
}

export class Session {
  constructor(browser, sessionId, targetId) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.targetId = targetId;
  }

  /** Evaluates `expression` (awaiting a promise) and returns its JSON value. */
  async eval(expression) {
    const r = await this.browser.send('Runtime.evaluate', {
      expression, awaitPromise: true, returnByValue: true,
    }, this.sessionId);
    if (r.exceptionDetails) {
      throw new Error(`evaluate failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    }
    return r.result.value;
  }

  /** Calls `fn` (a function; its source is sent) with JSON `args` in this target. */
  call(fn, ...args) {
    return this.eval(`(${fn})(...${JSON.stringify(args)})`);
  }
}

/**
 * Installs, in the caller's worker, a small relay the tests use: probe(id,
 * message) with a timeout, and ports opened by name whose inbound messages
 * queue up for next(). Nothing of it is part of any extension.
 */
export async function installCaller(caller) {
  await caller.eval(`(() => {
    if (globalThis.__t) return;
    const ports = new Map();
    let n = 0;
    globalThis.__t = {
      probe(id, message, timeoutMs = 1500) {
        return Promise.race([
          chrome.runtime.sendMessage(id, message).then((r) => ({ answer: r === undefined ? null : r }), (e) => ({ rejected: String(e.message ?? e) })),
          new Promise((r) => setTimeout(() => r({ timeout: true }), timeoutMs)),
        ]);
      },
      open(id, name) {
        const key = 'p' + (++n);
        const port = chrome.runtime.connect(id, { name });
        const entry = { port, queue: [], waiters: [], closed: false };
        const push = (item) => { const w = entry.waiters.shift(); if (w) w(item); else entry.queue.push(item); };
        port.onMessage.addListener((m) => push({ message: m }));
        port.onDisconnect.addListener(() => { entry.closed = true; push({ closed: true, error: chrome.runtime.lastError?.message ?? null }); });
        ports.set(key, entry);
        return key;
      },
      post(key, message) { ports.get(key).port.postMessage(message); },
      next(key, timeoutMs = 10000) {
        const entry = ports.get(key);
        if (entry.queue.length) return entry.queue.shift();
        if (entry.closed) return { closed: true };
        return new Promise((r) => {
          const t = setTimeout(() => { entry.waiters = entry.waiters.filter((w) => w !== done); r({ timeout: true }); }, timeoutMs);
          const done = (item) => { clearTimeout(t); r(item); };
          entry.waiters.push(done);
        });
      },
      close(key) { ports.get(key)?.port.disconnect(); ports.delete(key); },
    };
  })()`);
}

/** The probe request the bridge would send. */
export function probeRequest(overrides = {}) {
  return {
    channel: 'lumo:probe', version: 1, id: `probe-${Math.random().toString(36).slice(2, 8)}`,
    client: { id: BRIDGE_ID, name: 'Lumo', version: '0.1.0' }, ...overrides,
  };
}

/** Probes `providerId` from the caller: `{answer}`, `{rejected}` or `{timeout}`. */
export function probe(caller, providerId, message = probeRequest(), timeoutMs = 1500) {
  return caller.call((id, m, t) => globalThis.__t.probe(id, m, t), providerId, message, timeoutMs);
}

/**
 * An MCP Transport (the SDK's interface) over a port that the caller's
 * worker holds: send() posts through it, a loop reads what it receives.
 */
export class RelayedPortTransport {
  constructor(caller, providerId, name = 'lumo:mcp') {
    this.caller = caller;
    this.providerId = providerId;
    this.name = name;
    this.closed = false;
  }

  async start() {
    this.key = await this.caller.call((id, name) => globalThis.__t.open(id, name), this.providerId, this.name);
    this.#pump();
  }

  async #pump() {
    while (!this.closed) {
      let item;
      try {
        item = await this.caller.call((k) => globalThis.__t.next(k, 5000), this.key);
      } catch (e) {
        if (!this.closed) this.onerror?.(e);
        break;
      }
      if (item.timeout) continue;
      if (item.closed) {
        this.closed = true;
        this.closeError = item.error;
        this.onclose?.();
        break;
      }
      this.onmessage?.(item.message);
    }
  }

  async send(message) {
    if (this.closed) throw new Error('port closed');
    await this.caller.call((k, m) => globalThis.__t.post(k, m), this.key, message);
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.caller.call((k) => globalThis.__t.close(k), this.key).catch(() => {});
    this.onclose?.();
  }
}

/** Parses the JSON body of a tool result (kit results carry it as text and structuredContent). */
export function body(result) {
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

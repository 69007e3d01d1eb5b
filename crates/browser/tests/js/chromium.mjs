// A headless Chromium driven over --remote-debugging-pipe, with lumo's in-page
// helper installed the way lumo installs it (the isolated world "lumo", the
// script build.rs assembles) and called through the same two entries
// crates/browser/src/helper/world.rs uses. No npm packages: Node's own
// child_process, http and test runner.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

// The contract's entries, as helper/world.rs spells them.
const ON_PAGE = 'function(p, n, method, arg) { return globalThis.__lumo.page(p, n, method, arg); }';
const ON_ELEMENT = 'function(p, n, method, arg) { return globalThis.__lumo.element(p, n, method, arg, this); }';

// The assembled helper: $LUMO_HELPER_JS, or the file build.rs wrote for the
// lumo binary (cargo names its folder; an up-to-date build only reports it).
export function helperScript() {
  return built('helper.js', process.env.LUMO_HELPER_JS);
}

// page_extract's reader as build.rs wraps js/extract.js: lumo installs it in a
// world the first time a document is read ($LUMO_READER_JS, or the build's file).
export function readerScript() {
  return built('reader.js', process.env.LUMO_READER_JS);
}

function built(file, override) {
  if (override) return readFileSync(override, 'utf8');
  const build = spawnSync('cargo', ['build', '-p', 'lumo-cli', '--message-format=json'], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (build.status !== 0) throw new Error('cargo build -p lumo-cli failed');
  for (const line of build.stdout.split('\n')) {
    if (!line.includes('"build-script-executed"')) continue;
    const m = JSON.parse(line);
    if (/lumo-browser/.test(m.package_id)) return readFileSync(join(m.out_dir, file), 'utf8');
  }
  throw new Error(`cargo did not report lumo-browser's build script; set LUMO_HELPER_JS / LUMO_READER_JS to its ${file}`);
}

// Serves `pages` (path -> HTML) on 127.0.0.1.
export async function serve(pages) {
  const server = createServer((req, res) => {
    const body = pages[req.url.split('?')[0]];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? 'not found');
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: (path) => `http://127.0.0.1:${server.address().port}${path}`, close: () => server.close() };
}

export class Browser {
  static async launch() {
    const profile = mkdtempSync(join(tmpdir(), 'lumo-helper-test-'));
    const exe = process.env.LUMO_BROWSER || '/usr/lib/chromium/chromium';
    const proc = spawn(exe, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
    return new Browser(proc, profile);
  }

  constructor(proc, profile) {
    this.proc = proc;
    this.profile = profile;
    this.id = 0;
    this.waiting = new Map();
    this.listeners = [];
    let buffer = '';
    proc.stdio[4].on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let end;
      while ((end = buffer.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        if (message.id !== undefined) {
          const w = this.waiting.get(message.id);
          this.waiting.delete(message.id);
          if (message.error) w.fail(new Error(`${w.method}: ${message.error.message}`));
          else w.ok(message.result);
        } else {
          for (const l of this.listeners) l(message);
        }
      }
    });
    this.exited = new Promise((ok) => proc.on('exit', ok));
  }

  send(method, params = {}, sessionId = undefined) {
    const id = ++this.id;
    this.proc.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
    return new Promise((ok, fail) => this.waiting.set(id, { ok, fail, method }));
  }

  event(method, sessionId) {
    return new Promise((ok) => {
      const l = (m) => {
        if (m.method === method && m.sessionId === sessionId) {
          this.listeners.splice(this.listeners.indexOf(l), 1);
          ok(m.params);
        }
      };
      this.listeners.push(l);
    });
  }

  // A new tab on `url`, loaded, with the helper installed in its main frame.
  async open(url, helper) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, helper);
    await page.send('Page.enable');
    await page.goto(url);
    return page;
  }

  async close() {
    this.proc.kill();
    await this.exited;
    // Chromium's helper processes may still be writing into the profile for a
    // moment; a folder left in the temporary directory fails no test.
    try {
      rmSync(this.profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 200 });
    } catch (e) {
      console.error(`left ${this.profile}: ${e.message}`);
    }
  }
}

// One tab, with lumo's counter: like lumo's ref book, it hands every call the
// next number and keeps the end of the run the call reports.
export class Page {
  constructor(browser, sessionId, helper) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.helper = helper;
    this.next = 1;
    this.prefix = 'e';
  }

  send(method, params) {
    return this.browser.send(method, params, this.sessionId);
  }

  async goto(url) {
    const loaded = this.browser.event('Page.loadEventFired', this.sessionId);
    await this.send('Page.navigate', { url });
    await loaded;
    const { frameTree } = await this.send('Page.getFrameTree');
    const world = await this.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'lumo' });
    this.context = world.executionContextId;
    const installed = await this.send('Runtime.evaluate', { expression: this.helper, contextId: this.context });
    if (installed.exceptionDetails) throw new Error('the helper did not install: ' + installed.exceptionDetails.text);
  }

  unwrap(result, method) {
    if (result.exceptionDetails) {
      throw new Error(`${method} threw: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`);
    }
    const { value, refs } = result.result.value;
    this.refs = refs;
    this.next = Math.max(this.next, refs[1]);
    return value;
  }

  // A method of the page (the PAGE table of js/api.js).
  async call(method, arg = null) {
    const result = await this.send('Runtime.callFunctionOn', {
      functionDeclaration: ON_PAGE, executionContextId: this.context, returnByValue: true,
      arguments: [{ value: this.prefix }, { value: this.next }, { value: method }, { value: arg }],
    });
    return this.unwrap(result, method);
  }

  // A method of the first element matching `selector` (the ELEMENT table).
  async on(selector, method, arg = null) {
    const found = await this.send('Runtime.callFunctionOn', {
      functionDeclaration: 'function(s) { return document.querySelector(s); }', executionContextId: this.context,
      arguments: [{ value: selector }],
    });
    if (!found.result.objectId) throw new Error(`no element matches ${selector}`);
    const result = await this.send('Runtime.callFunctionOn', {
      functionDeclaration: ON_ELEMENT, objectId: found.result.objectId, returnByValue: true,
      arguments: [{ value: this.prefix }, { value: this.next }, { value: method }, { value: arg }],
    });
    return this.unwrap(result, method);
  }

  // Runs `fn` on the page's document in lumo's world (to change the DOM between calls).
  async run(fn) {
    const result = await this.send('Runtime.callFunctionOn', { functionDeclaration: String(fn), executionContextId: this.context, returnByValue: true });
    if (result.exceptionDetails) throw new Error('run threw: ' + result.exceptionDetails.text);
    return result.result.value;
  }

  // The whole page's snapshot text.
  async snapshot(options = {}) {
    const tree = await this.call('snapshot', { maxBytes: 100000, offset: 0, interactive: false, viewport: false, ...options });
    return tree.text;
  }

  // How an action's answer names the element: `role "name"`, without its ref.
  async described(selector) {
    const { name } = await this.on(selector, 'aim');
    return name.replace(/ \[[a-z0-9]+\]$/, '');
  }
}

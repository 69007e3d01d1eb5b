// Shared helpers of the TypeScript-SDK tests: the lumo binary, a static server for
// fixtures/, `lumo serve --http` children, and the browser processes lumo starts.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer, connect } from 'node:net';
import { dirname, extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '../..');

/** The lumo binary: $LUMO_BIN, else the debug build. */
export const lumoBin = process.env.LUMO_BIN ?? join(repo, 'target/debug/lumo');

/** The command that rewrites tests/golden/tools.json from what lumo lists now. */
export const BLESS = 'LUMO_BLESS=1 cargo test -p lumo-cli --test golden';

/** The golden tool list (tests/golden/tools.json, the exact tools/list of a fresh lumo serve), in order. */
export function goldenTools() {
  return JSON.parse(readFileSync(join(repo, 'tests/golden/tools.json'), 'utf8')).tools;
}

/** Name, description and inputSchema of each tool: what the golden comparisons look at. */
export function toolShapes(tools) {
  return tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

/** Environment for lumo children: Debian's Chromium unless LUMO_BROWSER says otherwise. */
export function lumoEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  if (!env.LUMO_BROWSER && existsSync('/usr/lib/chromium/chromium')) env.LUMO_BROWSER = '/usr/lib/chromium/chromium';
  return env;
}

const types = { '.html': 'text/html; charset=utf-8', '.json': 'application/json', '.js': 'text/javascript', '.png': 'image/png' };

/** Serves fixtures/ on 127.0.0.1 (any free port). */
export async function fixtureServer() {
  const root = join(repo, 'fixtures');
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise(ok => server.listen(0, '127.0.0.1', ok));
  const port = server.address().port;
  return { url: page => `http://127.0.0.1:${port}/${page}`, close: () => new Promise(ok => server.close(ok)) };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const server = createNetServer();
  await new Promise(ok => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  await new Promise(ok => server.close(ok));
  return port;
}

/** Starts `lumo serve --http 127.0.0.1:PORT ARGS…` and waits until it listens. */
export async function lumoHttp(args = []) {
  const port = await freePort();
  const child = spawn(lumoBin, ['serve', '--http', `127.0.0.1:${port}`, ...args], {
    env: (({ LUMO_TOKEN, ...env }) => env)(lumoEnv()),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', d => { stderr += d; });
  const exited = new Promise(ok => child.once('exit', (code, signal) => ok({ code, signal })));
  for (let i = 0; i < 100; i++) {
    const up = await new Promise(ok => {
      const s = connect(port, '127.0.0.1', () => { s.end(); ok(true); });
      s.on('error', () => ok(false));
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error(`lumo serve --http exited early: ${stderr}`);
    await sleep(100);
  }
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    stderr: () => stderr,
    /** SIGTERM, then waits (at most 15 s) for the exit. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return Promise.race([exited, sleep(15000).then(() => { child.kill('SIGKILL'); return { code: null, signal: 'timeout' }; })]);
    },
  };
}

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: after[0], ppid: Number(after[1]) };
  } catch {
    return null;
  }
}

/** Every descendant of `pid` whose command line looks like Chromium. */
export function browserProcesses(pid) {
  const all = readdirSync('/proc').filter(n => /^\d+$/.test(n)).map(Number);
  const children = new Map();
  for (const p of all) {
    const info = parentOf(p);
    if (!info) continue;
    if (!children.has(info.ppid)) children.set(info.ppid, []);
    children.get(info.ppid).push(p);
  }
  const found = [];
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length) {
    const p = stack.pop();
    let cmd = '';
    try { cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' '); } catch { continue; }
    if (/chrom/i.test(cmd)) found.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return found;
}

/** Whether process `pid` still runs (a zombie does not count). */
export function running(pid) {
  const info = parentOf(pid);
  return info !== null && info.state !== 'Z';
}

/** Waits (at most `ms`) until none of `pids` runs; returns those still running. */
export async function waitGone(pids, ms = 10000) {
  const end = Date.now() + ms;
  let left = pids.filter(running);
  while (left.length && Date.now() < end) {
    await sleep(200);
    left = left.filter(running);
  }
  return left;
}

/** Waits until `predicate()` is truthy (polling), at most `ms`. */
export async function until(predicate, ms = 15000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The text of a tool result. */
export const textOf = result => (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');

/** Raw Streamable HTTP: POST one JSON-RPC message; returns status, headers and the whole body text. */
export async function post(url, message, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(message),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

/** An `initialize` request of protocol `version`. */
export const initialize = (version, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'lumo-ts-test', version: '0.0.0' } },
});

/** The SSE events of a body: [{id, data, retry}]. */
export function sseEvents(text) {
  return text.split(/\r?\n\r?\n/).filter(block => block.trim() && !block.trim().startsWith(':')).map(block => {
    const event = {};
    for (const line of block.split(/\r?\n/)) {
      const [, field, value] = line.match(/^([a-z]+):? ?(.*)$/) ?? [];
      if (field) event[field] = (event[field] !== undefined && field === 'data') ? `${event[field]}\n${value}` : value;
    }
    return event;
  });
}

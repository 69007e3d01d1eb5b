// The provider kit's pure parts in Node: its constants equal lumo-protocol's
// (read from the Rust source, so the two cannot drift apart unnoticed), the
// name rules, and RFC 8785 canonical JSON + SHA-256 against the Rust test vectors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';
import * as contract from '../../extension/provider-kit/src/contract.js';
import { namespaceProblems, providerProblems, toolNameProblems } from '../../extension/provider-kit/src/names.js';
import { canonicalJson, paramsHash } from '../../extension/provider-kit/src/audit.js';

const rust = (file) => readFileSync(join(ROOT, 'crates/protocol/src', file), 'utf8');
function rustConst(source, name) {
  const m = source.match(new RegExp(`pub const ${name}: [^=]+= ([^;]+);`));
  assert.ok(m, `${name} not found in lumo-protocol`);
  return m[1].trim();
}

test('constants mirror lumo-protocol exactly', () => {
  const probe = rust('probe.rs');
  assert.equal(rustConst(probe, 'PROBE_CHANNEL'), JSON.stringify(contract.PROBE_CHANNEL));
  assert.equal(rustConst(probe, 'MCP_PORT_NAME'), JSON.stringify(contract.MCP_PORT_NAME));
  assert.equal(Number(rustConst(probe, 'PROBE_VERSION')), contract.PROBE_VERSION);
  const names = rust('names.rs');
  assert.equal(Number(rustConst(names, 'MAX_TOOLS_PER_PROVIDER')), contract.MAX_TOOLS_PER_PROVIDER);
  assert.equal(Number(rustConst(names, 'MAX_NAMESPACE_LEN')), contract.MAX_NAMESPACE_LEN);
  assert.equal(Number(rustConst(names, 'MAX_TOOL_NAME_LEN')), contract.MAX_TOOL_NAME_LEN);
  assert.equal(Number(rustConst(names, 'MAX_QUALIFIED_LEN')), contract.MAX_QUALIFIED_LEN);
  const reserved = JSON.parse(rustConst(names, 'RESERVED_NAMESPACES'));
  assert.deepEqual(reserved, [...contract.RESERVED_NAMESPACES]);
  const rate = rust('rate.rs');
  assert.equal(Number(rustConst(rate, 'DEFAULT_WRITE_LIMIT')), contract.WRITE_LIMIT);
  assert.equal(rustConst(rate, 'DEFAULT_WINDOW'), `Duration::from_secs(${contract.WRITE_WINDOW_MS / 1000})`);
});

test('isExtensionId is /^[a-p]{32}$/ and nothing else', () => {
  assert.equal(contract.isExtensionId('hjfgijdboblbpgomjhgpbhfiobiokomm'), true);
  for (const bad of ['', 'hjfgijdboblbpgomjhgpbhfiobiokom', 'hjfgijdboblbpgomjhgpbhfiobiokommm', 'qjfgijdboblbpgomjhgpbhfiobiokomm',
    'HJFGIJDBOBLBPGOMJHGPBHFIOBIOKOMM', ' hjfgijdboblbpgomjhgpbhfiobiokomm', null, 42, ['hjfgijdboblbpgomjhgpbhfiobiokomm']]) {
    assert.equal(contract.isExtensionId(bad), false, JSON.stringify(bad));
  }
});

test('name rules: the limits, the alphabet, reserved namespaces, the count, duplicates', () => {
  assert.deepEqual(namespaceProblems('userscripts'), []);
  assert.equal(namespaceProblems('a'.repeat(17)).length, 1);
  assert.equal(namespaceProblems('Bad').length, 1);
  assert.equal(namespaceProblems('has_underscore').length, 1);
  for (const r of contract.RESERVED_NAMESPACES) assert.match(namespaceProblems(r).join(), /reserved/);
  assert.deepEqual(toolNameProblems('userscripts', 'a'.repeat(40)), []);
  assert.match(toolNameProblems('userscripts', 'a'.repeat(41)).join(), /1 to 40/);
  assert.match(toolNameProblems('userscripts', 'has space').join(), /letters, digits/);
  assert.match(toolNameProblems('userscripts', '_lead').join(), /start with/);
  assert.deepEqual(toolNameProblems('a'.repeat(16), 'b'.repeat(40)), [], '16 + 1 + 40 = 57 fits');
  const many = Array.from({ length: 65 }, (_, i) => `t${i}`);
  assert.match(providerProblems('x', many).join(), /at most 64 tools, got 65/);
  assert.deepEqual(providerProblems('x', many.slice(0, 64)), []);
  assert.match(providerProblems('x', ['a', 'a']).join(), /more than once/);
});

test('params hash is SHA-256 of RFC 8785 canonical JSON, equal to lumo-protocol', async () => {
  assert.equal(canonicalJson({ b: 2, a: [1, 'x', null, true], c: { z: 1e21, y: 0.1, x: -0 } }),
    '{"a":[1,"x",null,true],"b":2,"c":{"x":0,"y":0.1,"z":1e+21}}');
  assert.equal(canonicalJson({ '\u20ac': 1, '\r': 2, 'ö': 3 }), '{"\\r":2,"ö":3,"€":1}');
  // The vectors of crates/protocol/src/audit.rs.
  const source = rust('audit.rs');
  assert.ok(source.includes('b4d0b6988ed6f5860cb62b521c127d8303c8279eb1adb4093f1fc97e852c1f56'));
  assert.equal(await paramsHash({ b: 2, a: [1, 'x', null, true] }), 'b4d0b6988ed6f5860cb62b521c127d8303c8279eb1adb4093f1fc97e852c1f56');
  assert.equal(await paramsHash({}), '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  assert.notEqual(await paramsHash({ a: 1 }), await paramsHash({ a: 2 }));
  assert.equal(await paramsHash({ a: 1, b: 2 }), await paramsHash({ b: 2, a: 1 }));
  assert.throws(() => canonicalJson({ a: NaN }), /not finite/);
});

/** A chrome.runtime.Port stand-in: enough for PortTransport (listeners, postMessage, disconnect). */
function fakePort() {
  const listeners = { message: [], disconnect: [] };
  return {
    posted: [],
    disconnected: false,
    onMessage: { addListener: (f) => listeners.message.push(f) },
    onDisconnect: { addListener: (f) => listeners.disconnect.push(f) },
    postMessage(m) { this.posted.push(m); },
    disconnect() { this.disconnected = true; },
    deliver(m) { for (const f of listeners.message) f(m); },
  };
}

const request = (id, method = 'tools/list') => ({ jsonrpc: '2.0', id, method });

test('PortTransport holds inbound messages until released and started, then delivers them in order', async () => {
  const { PortTransport } = await import('../../extension/provider-kit/src/transport.js');
  const port = fakePort();
  const t = new PortTransport(port);
  const got = [];
  port.deliver(request(1, 'initialize'));
  port.deliver({ jsonrpc: '2.0', method: 'notifications/initialized' });
  t.onmessage = (m) => got.push(m.id ?? m.method);
  await t.start();
  port.deliver(JSON.stringify(request(2)));
  assert.deepEqual(got, [], 'nothing reaches the server before authorization is settled');
  t.release();
  assert.deepEqual(got, [1, 'notifications/initialized', 2]);
  port.deliver(request(3));
  assert.deepEqual(got, [1, 'notifications/initialized', 2, 3]);
  await t.send({ jsonrpc: '2.0', id: 3, result: {} });
  assert.equal(port.posted.length, 1);
});

test('a refused PortTransport answers held requests with why, and closes', async () => {
  const { NOT_AUTHORIZED, PortTransport } = await import('../../extension/provider-kit/src/transport.js');
  const port = fakePort();
  const t = new PortTransport(port);
  let closed = false;
  t.onclose = () => { closed = true; };
  port.deliver(request(1, 'initialize'));
  port.deliver({ jsonrpc: '2.0', method: 'notifications/initialized' });
  t.refuse('not on the allow list');
  assert.deepEqual(port.posted, [{ jsonrpc: '2.0', id: 1, error: { code: NOT_AUTHORIZED, message: 'not on the allow list' } }]);
  assert.equal(port.disconnected, true);
  assert.equal(closed, true);
  await assert.rejects(t.send(request(9)), /closed/);

  // Refused before any request arrived: the first one that comes is answered, then the port closes.
  const late = fakePort();
  const u = new PortTransport(late);
  u.refuse('endpoint off');
  assert.equal(late.disconnected, false);
  late.deliver(request(7, 'initialize'));
  assert.equal(late.posted[0].error.message, 'endpoint off');
  assert.equal(late.disconnected, true);
});

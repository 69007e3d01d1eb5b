// A policy preset file: a copy of the reference provider with
// lumo-policy.preset.json in its package starts with that policy, so tests
// (lumo's own, which may not reach the provider's worker) need no clicking.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BRIDGE_ID, Browser, ROOT, RelayedPortTransport, USERSCRIPTS_ID, body, installCaller, probe } from './lib.mjs';

let browser;
let caller;
let copy;

before(async () => {
  copy = mkdtempSync(join(tmpdir(), 'lumo-userscripts-'));
  cpSync(join(ROOT, 'extension/userscripts'), copy, { recursive: true });
  writeFileSync(join(copy, 'lumo-policy.preset.json'), JSON.stringify({ allowlist: [BRIDGE_ID], writes: false }));
  browser = await Browser.launch(['extension/bridge', copy]);
  caller = await browser.worker(BRIDGE_ID);
  await installCaller(caller);
});

after(async () => {
  await browser?.close();
  rmSync(copy, { recursive: true, force: true });
});

test('a copy with a preset keeps its ID and starts with the preset policy', async () => {
  const { answer } = await probe(caller, USERSCRIPTS_ID);
  assert.deepEqual(answer.status, { enabled: true, authorized: true, ready: true, pendingApproval: false });
  const client = new Client({ name: 'preset-test', version: '1.0.0' });
  await client.connect(new RelayedPortTransport(caller, USERSCRIPTS_ID));
  assert.equal((await client.callTool({ name: 'list', arguments: {} })).isError, undefined);
  const refused = await client.callTool({ name: 'create', arguments: { name: 'x', code: '1' } });
  assert.equal(body(refused).error.code, 'forbidden', 'writes: false from the preset');
  // The preset only seeds: what the user (or a test) changes is stored and wins.
  const provider = await browser.worker(USERSCRIPTS_ID);
  await provider.eval(`lumoKit.policy.set({ writes: true })`);
  assert.equal((await client.callTool({ name: 'create', arguments: { name: 'x', code: '1' } })).isError, undefined);
  await client.close();
});

// The broken test providers (extension/test-providers/*) in real headless
// Chromium, called by the real bridge: each shows the one invariant it breaks
// and keeps the rest (they answer the probe and serve MCP like the kit does),
// so a conformance check can name exactly what failed.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BRIDGE_ID, Browser, RelayedPortTransport, USERSCRIPTS_ID, body, installCaller, probe, probeRequest,
} from './lib.mjs';

/** The table of extension/provider-kit/README.md. */
export const VARIANTS = {
  'probe-silent': 'gigfbjanajkopjnffipkiebloebjgpfm',
  'probe-not-ok': 'ffooihbmlglgboglcolhnpbnbjfjcbga',
  'probe-incomplete': 'epmifomfgpdinkjngjomogapgilogoni',
  'not-ready': 'aclhbbbmfhgafdlgcdeiahmeidanpggl',
  'policy-not-ok': 'gbfdcoacjhhckmhodmdohnlboolpmohj',
  'auth-by-name': 'mhjbknjljkcmdjbdjeidooilkjcgibih',
  'any-port-name': 'mfhaajhllhjiaheffninmgodlcoblkaj',
  'no-iserror': 'eogohglpjkdniodkcinfghjijkgjaega',
  'no-rate-limit': 'ikdcfniihfnblgnkamopdjohdoaomljn',
  'too-many-tools': 'fggpippmhngbeifclmgnbplkogglkacl',
  'long-names': 'ojlcjglofikkjnfggcdfjecnhonckagd',
  'reserved-namespace': 'mbkkfimloilpllfpfeedeidmciokfdhn',
  'dup-namespace': 'cfahidbdoekiedmenlahhoinncancfmb',
};

let browser;
let caller;

async function connect(id, name = 'lumo:mcp') {
  const client = new Client({ name: 'variant-test', version: '1.0.0' });
  await client.connect(new RelayedPortTransport(caller, id, name));
  return client;
}

async function answer(name, request) {
  const r = await probe(caller, VARIANTS[name], request);
  assert.ok(r.answer, `${name}: ${JSON.stringify(r)}`);
  return r.answer;
}

before(async () => {
  const dirs = ['extension/bridge', 'extension/userscripts', ...Object.keys(VARIANTS).map((n) => `extension/test-providers/${n}`)];
  browser = await Browser.launch(dirs);
  caller = await browser.worker(BRIDGE_ID);
  await installCaller(caller);
  // The IDs are pinned by each manifest's key: every listed extension runs under its ID.
  // Waiting for each worker's top level keeps start-up out of the 1500 ms probe budget.
  await Promise.all(Object.values(VARIANTS).map((id) => browser.worker(id)));
});

after(async () => {
  await browser?.close();
});

describe('broken probes', () => {
  test('probe-silent never answers: the 1500 ms probe times out', async () => {
    const started = Date.now();
    const r = await probe(caller, VARIANTS['probe-silent']);
    assert.deepEqual(r, { timeout: true });
    assert.ok(Date.now() - started >= 1400);
  });

  test('probe-not-ok answers ok:false', async () => {
    const a = await answer('probe-not-ok');
    assert.equal(a.ok, false);
    assert.equal(a.error.code, 'broken');
  });

  test('probe-incomplete answers ok:true without status', async () => {
    const a = await answer('probe-incomplete');
    assert.equal(a.ok, true);
    assert.equal(a.status, undefined);
    assert.equal(a.service.namespace, 'probeincomplete');
  });

  test('not-ready answers ready:false with its reason', async () => {
    const a = await answer('not-ready');
    assert.deepEqual(a.status, {
      enabled: true, authorized: true, ready: false, pendingApproval: false,
      reason: 'The test provider is not ready, on purpose.',
    });
  });

  test('policy-not-ok answers a policy failure with ok:false', async () => {
    const a = await answer('policy-not-ok');
    assert.equal(a.ok, false);
    assert.equal(a.error.code, 'not_authorized');
  });

  test('auth-by-name lets in whoever says "Lumo", whatever its ID', async () => {
    const other = probeRequest({ client: { id: BRIDGE_ID, name: 'Someone', version: '1' } });
    assert.equal((await answer('auth-by-name', other)).status.authorized, false);
    // The same sender, only the name changed: a sender.id check could not flip.
    assert.equal((await answer('auth-by-name', probeRequest())).status.authorized, true);
    const client = await connect(VARIANTS['auth-by-name']);
    assert.equal((await client.listTools()).tools.length, 3);
    await client.close();
  });
});

describe('broken sessions', () => {
  test('any-port-name serves MCP on a port that is not lumo:mcp', async () => {
    const client = await connect(VARIANTS['any-port-name'], 'not-lumo');
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['echo', 'fail', 'write']);
    await client.close();
  });

  test('no-iserror reports a business failure without isError', async () => {
    const client = await connect(VARIANTS['no-iserror']);
    const r = await client.callTool({ name: 'fail', arguments: {} });
    assert.equal(r.isError, undefined);
    assert.equal(body(r).ok, false);
    assert.equal(body(r).error.code, 'not_found');
    await client.close();
  });

  test('no-rate-limit admits a 31st write within the window', async () => {
    const client = await connect(VARIANTS['no-rate-limit']);
    for (let i = 0; i < 31; i++) {
      const r = await client.callTool({ name: 'write', arguments: {} });
      assert.equal(r.isError, undefined, `write ${i + 1}`);
    }
    await client.close();
  });

  test('too-many-tools lists 65 tools', async () => {
    const client = await connect(VARIANTS['too-many-tools']);
    assert.equal((await client.listTools()).tools.length, 65);
    await client.close();
  });

  test('long-names lists a 41-character name and one with a space', async () => {
    const client = await connect(VARIANTS['long-names']);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.some((n) => n.length === 41));
    assert.ok(names.includes('has space'));
    await client.close();
  });

  test('reserved-namespace claims "browser"; dup-namespace claims "userscripts" under another ID', async () => {
    assert.equal((await answer('reserved-namespace')).service.namespace, 'browser');
    const dup = await answer('dup-namespace');
    const ref = (await probe(caller, USERSCRIPTS_ID)).answer;
    assert.equal(dup.service.namespace, 'userscripts');
    assert.equal(ref.service.namespace, 'userscripts');
    assert.notEqual(VARIANTS['dup-namespace'], USERSCRIPTS_ID);
  });
});

describe('everything else holds in every variant', () => {
  const conformant = ['not-ready', 'any-port-name', 'no-iserror', 'no-rate-limit', 'too-many-tools', 'long-names', 'reserved-namespace', 'dup-namespace'];
  for (const name of conformant) {
    test(`${name}: probe ok with the bridge allowed; business failures isError unless that is the break`, async () => {
      const a = await answer(name);
      assert.equal(a.ok, true);
      assert.equal(a.status.enabled && a.status.authorized, true);
      const client = await connect(VARIANTS[name]);
      const r = await client.callTool({ name: 'fail', arguments: {} });
      assert.equal(r.isError, name === 'no-iserror' ? undefined : true);
      assert.equal((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).structuredContent.text, 'hi');
      await client.close();
    });
  }
  for (const name of ['probe-silent', 'probe-not-ok', 'probe-incomplete', 'policy-not-ok', 'auth-by-name', 'no-iserror', 'too-many-tools']) {
    test(`${name}: a port of another name is closed`, async () => {
      await assert.rejects(connect(VARIANTS[name], 'lumo:other'), /closed/i);
    });
  }
});

// The reference provider (extension/userscripts, built on the provider kit)
// in real headless Chromium, called by the real bridge extension: the probe
// from its worker with chrome.runtime.sendMessage, MCP over a lumo:mcp port
// it opens, run by the official TypeScript SDK Client.

import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BRIDGE_ID, Browser, RelayedPortTransport, USERSCRIPTS_ID, body, installCaller, probe, probeRequest,
} from './lib.mjs';

const OTHER_ID = 'abcdefghijklmnopabcdefghijklmnop';
let browser;
let caller;
let provider;
let site;
let siteUrl;

async function connect(name = 'lumo:mcp') {
  const client = new Client({ name: 'provider-test', version: '1.0.0' });
  await client.connect(new RelayedPortTransport(caller, USERSCRIPTS_ID, name));
  return client;
}

const kit = (expression) => provider.eval(expression);

before(async () => {
  site = createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<title>provider test page</title><p>hello</p>');
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${site.address().port}/`;
  browser = await Browser.launch(['extension/bridge', 'extension/userscripts']);
  caller = await browser.worker(BRIDGE_ID);
  provider = await browser.worker(USERSCRIPTS_ID);
  await installCaller(caller);
});

after(async () => {
  await browser?.close();
  site?.close();
});

beforeEach(async () => {
  await kit(`(async () => {
    await chrome.storage.local.clear();
    await lumoKit.rate.reset();
  })()`);
});

const approveBridge = () => kit(`lumoKit.policy.approve('${BRIDGE_ID}')`);

describe('L0 probe', () => {
  test('the answer has the seed shape and echoes the id', async () => {
    await approveBridge();
    const request = probeRequest();
    const { answer } = await probe(caller, USERSCRIPTS_ID, request);
    assert.deepEqual(answer, {
      ok: true,
      id: request.id,
      service: { namespace: 'userscripts', name: 'Lumo Userscripts', version: '1.0.1' },
      status: { enabled: true, authorized: true, ready: true, pendingApproval: false },
    });
  });

  test('policy failures still answer ok:true: pending, refused, switched off', async () => {
    let { answer } = await probe(caller, USERSCRIPTS_ID);
    assert.equal(answer.ok, true);
    assert.deepEqual(answer.status, { enabled: true, authorized: false, ready: true, pendingApproval: true });
    const p = await kit('lumoKit.policy.get()');
    assert.deepEqual(p.pending.map((e) => [e.id, e.name]), [[BRIDGE_ID, 'Lumo']]);

    await kit(`lumoKit.policy.deny('${BRIDGE_ID}')`);
    ({ answer } = await probe(caller, USERSCRIPTS_ID));
    assert.equal(answer.ok, true);
    assert.deepEqual(answer.status, { enabled: true, authorized: false, ready: true, pendingApproval: false });

    await kit(`lumoKit.policy.approve('${BRIDGE_ID}').then(() => lumoKit.policy.set({ enabled: false }))`);
    ({ answer } = await probe(caller, USERSCRIPTS_ID));
    assert.equal(answer.ok, true);
    assert.equal(answer.status.enabled, false);
  });

  test('only protocol failures answer ok:false, saying what was wrong', async () => {
    const cases = [
      [probeRequest({ version: 2 }), 'unsupported_version'],
      [probeRequest({ id: 42 }), 'bad_request'],
      [probeRequest({ client: { id: 'not-an-id', name: 'Lumo', version: '1' } }), 'bad_request'],
    ];
    for (const [request, code] of cases) {
      const { answer } = await probe(caller, USERSCRIPTS_ID, request);
      assert.equal(answer.ok, false, JSON.stringify(request));
      assert.equal(answer.error.code, code);
      assert.match(answer.error.message, /\w/);
    }
    // A bad probe does not make the caller pending.
    assert.deepEqual((await kit('lumoKit.policy.get()')).pending, []);
  });

  test('authorization is by sender.id: a client naming an allowed ID is not let in', async () => {
    await kit(`lumoKit.policy.approve('${OTHER_ID}', 'Lumo')`);
    const forged = probeRequest({ client: { id: OTHER_ID, name: 'Lumo', version: '1' } });
    const { answer } = await probe(caller, USERSCRIPTS_ID, forged);
    assert.equal(answer.status.authorized, false);
    // The port is refused too: initialize gets the policy's reason and the port closes.
    await assert.rejects(connect(), /not on the provider's allow list/);
    // Approved by ID under any display name, it is let in.
    await kit(`lumoKit.policy.approve('${BRIDGE_ID}', 'Somebody else')`);
    const named = probeRequest({ client: { id: BRIDGE_ID, name: 'Not Lumo at all', version: '1' } });
    assert.equal((await probe(caller, USERSCRIPTS_ID, named)).answer.status.authorized, true);
  });
});

describe('approval through the options page', () => {
  test('pending → Approve clicked in options.html → connected with its tools', async () => {
    assert.equal((await probe(caller, USERSCRIPTS_ID)).answer.status.pendingApproval, true);
    const options = await browser.page(`chrome-extension://${USERSCRIPTS_ID}/options.html`);
    const clicked = await options.eval(`new Promise((resolve) => {
      const tryClick = () => {
        const b = document.querySelector('button[data-approve="${BRIDGE_ID}"]');
        if (b) { b.click(); resolve(true); } else setTimeout(tryClick, 20);
      };
      tryClick();
    })`);
    assert.equal(clicked, true);
    let status;
    for (let i = 0; i < 100; i++) {
      ({ status } = (await probe(caller, USERSCRIPTS_ID)).answer);
      if (status.authorized) break;
    }
    assert.deepEqual(status, { enabled: true, authorized: true, ready: true, pendingApproval: false });
    const client = await connect();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['list', 'get', 'create', 'update', 'set_enabled', 'delete', 'run']);
    assert.equal(tools.find((t) => t.name === 'list').annotations.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === 'delete').annotations.readOnlyHint, false);
    await client.close();
    // The switches on the page write the same policy.
    await options.eval(`document.getElementById('writes').click()`);
    let writes = true;
    for (let i = 0; i < 100 && writes; i++) writes = (await kit('lumoKit.policy.get()')).writes;
    assert.equal(writes, false);
    await browser.send('Target.closeTarget', { targetId: options.targetId });
  });
});

describe('L1 MCP over the lumo:mcp port', () => {
  test('a port of another name is closed without an answer', async () => {
    await approveBridge();
    await assert.rejects(connect('lumo:other'), /closed|Connection/i);
  });

  test('a switch takes effect on the very next call, without reconnecting', async () => {
    await approveBridge();
    const client = await connect();
    assert.match(client.getInstructions(), /Write tools are on/);
    const made = await client.callTool({ name: 'create', arguments: { name: 'a', code: '1' } });
    assert.equal(made.isError, undefined);

    await kit('lumoKit.policy.set({ writes: false })');
    const refused = await client.callTool({ name: 'create', arguments: { name: 'b', code: '2' } });
    assert.equal(refused.isError, true);
    assert.equal(body(refused).error.code, 'forbidden');
    assert.match(body(refused).error.message, /Writes are switched off/);
    assert.equal((await client.callTool({ name: 'list', arguments: {} })).isError, undefined);

    await kit('lumoKit.policy.set({ enabled: false })');
    const off = await client.callTool({ name: 'list', arguments: {} });
    assert.equal(off.isError, true);
    assert.match(body(off).error.message, /turned off/);

    await kit(`lumoKit.policy.set({ enabled: true, writes: true }).then(() => lumoKit.policy.deny('${BRIDGE_ID}'))`);
    const revoked = await client.callTool({ name: 'list', arguments: {} });
    assert.equal(revoked.isError, true);
    assert.match(body(revoked).error.message, /not on the provider's allow list/);

    await approveBridge();
    const back = await client.callTool({ name: 'list', arguments: {} });
    assert.equal(back.isError, undefined);
    assert.equal(body(back).scripts.length, 1);
    await client.close();

    // A new session's instructions follow the policy of its moment.
    await kit('lumoKit.policy.set({ writes: false, review: true })');
    const again = await connect();
    assert.match(again.getInstructions(), /Write tools are switched off/);
    assert.match(again.getInstructions(), /Review is on/);
    await again.close();
  });

  test('business failures are isError results with a code and a reason', async () => {
    await approveBridge();
    const client = await connect();
    const missing = await client.callTool({ name: 'get', arguments: { id: '00000000-0000-4000-8000-000000000000' } });
    assert.equal(missing.isError, true);
    assert.deepEqual(Object.keys(body(missing)), ['ok', 'error']);
    assert.equal(body(missing).error.code, 'not_found');
    const bad = await client.callTool({ name: 'create', arguments: { name: 'x', code: '1', matches: ['nope'] } });
    assert.equal(bad.isError, true);
    assert.equal(body(bad).error.code, 'invalid_arguments');
    // Arguments that break the schema are refused by the SDK as an isError result too.
    const invalid = await client.callTool({ name: 'get', arguments: { id: 'not-a-uuid' } });
    assert.equal(invalid.isError, true);
    assert.match(invalid.content[0].text, /UUID/);
    const { script } = body(await client.callTool({ name: 'create', arguments: { name: 'x', code: '1' } }));
    const noTab = await client.callTool({ name: 'run', arguments: { id: script.id, tabId: 999999 } });
    assert.equal(noTab.isError, true);
    assert.equal(body(noTab).error.code, 'not_found');
    await client.close();
  });

  test('the 31st write within 60 s is refused as rate_limited; reads are not limited', async () => {
    await approveBridge();
    const client = await connect();
    for (let i = 0; i < 30; i++) {
      const r = await client.callTool({ name: 'create', arguments: { name: `s${i}`, code: `${i}` } });
      assert.equal(r.isError, undefined, `write ${i + 1}: ${JSON.stringify(r)}`);
    }
    const refused = await client.callTool({ name: 'create', arguments: { name: 's30', code: '30' } });
    assert.equal(refused.isError, true);
    assert.equal(body(refused).error.code, 'rate_limited');
    assert.match(body(refused).error.message, /30 writes per 60 s/);
    const listed = await client.callTool({ name: 'list', arguments: {} });
    assert.equal(body(listed).scripts.length, 30);
    const log = await kit('lumoKit.audit.list()');
    assert.equal(log.length, 31);
    assert.deepEqual(log.slice(-2).map((e) => e.outcome), ['ok', 'rate_limited']);
    await client.close();
  });

  test('every write is audited by tool, sender ID, outcome, target and params hash — never the source', async () => {
    await approveBridge();
    const client = await connect();
    const secret = 'document.title = "SECRET-SOURCE-7f3a"';
    const made = body(await client.callTool({ name: 'create', arguments: { name: 'audited', code: secret } }));
    await client.callTool({ name: 'update', arguments: { id: made.script.id, code: `${secret} + 1` } });
    await client.callTool({ name: 'delete', arguments: { id: '00000000-0000-4000-8000-000000000000' } });
    await client.callTool({ name: 'list', arguments: {} });
    const log = await kit('lumoKit.audit.list()');
    assert.deepEqual(log.map((e) => [e.tool, e.caller, e.outcome, e.target]), [
      ['create', BRIDGE_ID, 'ok', made.script.id],
      ['update', BRIDGE_ID, 'ok', made.script.id],
      ['delete', BRIDGE_ID, 'not_found', '00000000-0000-4000-8000-000000000000'],
    ]);
    for (const e of log) {
      assert.deepEqual(Object.keys(e).sort(), ['atMs', 'caller', 'outcome', 'paramsHash', 'target', 'tool']);
      assert.match(e.paramsHash, /^[0-9a-f]{64}$/);
    }
    const stored = JSON.stringify(await kit('chrome.storage.local.get(null)'));
    assert.ok(stored.includes('SECRET-SOURCE-7f3a'), 'the script itself is stored');
    assert.ok(!JSON.stringify(log).includes('SECRET'), 'but never in the audit');
    // The hash is lumo-protocol's params_hash (its test vectors, crates/protocol/src/audit.rs).
    assert.equal(await kit(`lumoKit.audit.paramsHash({ b: 2, a: [1, 'x', null, true] })`),
      'b4d0b6988ed6f5860cb62b521c127d8303c8279eb1adb4093f1fc97e852c1f56');
    assert.equal(await kit(`lumoKit.audit.paramsHash({})`),
      '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    // The options page's audit view shows the same records, and no source either.
    const options = await browser.page(`chrome-extension://${USERSCRIPTS_ID}/options.html`);
    const shown = await options.eval(`new Promise((resolve) => {
      const read = () => {
        const rows = document.querySelectorAll('#audit tr');
        if (rows.length >= 4) resolve([...rows].map((r) => r.innerText));
        else setTimeout(read, 20);
      };
      read();
    })`);
    assert.equal(shown.length, 4, 'a heading and three records');
    assert.match(shown[1], new RegExp(`delete\\s+${BRIDGE_ID}\\s+not_found`));
    assert.match(shown[3], /create/);
    assert.ok(!shown.join('\n').includes('SECRET'));
    await browser.send('Target.closeTarget', { targetId: options.targetId });
    await client.close();
  });

  test('run executes a script on a tab and returns its value', async () => {
    await approveBridge();
    const page = await browser.page(siteUrl);
    const tabId = await caller.call(async (url) => (await chrome.tabs.query({ url: `${url}*` }))[0].id, siteUrl);
    const client = await connect();
    const { script } = body(await client.callTool({ name: 'create', arguments: { name: 't', code: 'document.title.toUpperCase()' } }));
    const ran = await client.callTool({ name: 'run', arguments: { id: script.id, tabId } });
    assert.equal(ran.isError, undefined, JSON.stringify(ran));
    assert.equal(body(ran).result, 'PROVIDER TEST PAGE');
    assert.equal(body(ran).via, 'scripting', 'headless Chromium offers no chrome.userScripts without the user toggle');
    const thrown = body(await client.callTool({ name: 'create', arguments: { name: 'e', code: 'throw new Error("boom")' } }));
    const failed = await client.callTool({ name: 'run', arguments: { id: thrown.script.id, tabId } });
    assert.equal(failed.isError, true);
    assert.match(body(failed).error.message, /boom/);
    // With review on, a changed script waits for the user before it can run.
    await kit('lumoKit.policy.set({ review: true })');
    await client.callTool({ name: 'update', arguments: { id: script.id, code: '2' } });
    const waiting = await client.callTool({ name: 'run', arguments: { id: script.id, tabId } });
    assert.equal(body(waiting).error.code, 'invalid_state');
    // The user reviews it on the options page; then it runs.
    const options = await browser.page(`chrome-extension://${USERSCRIPTS_ID}/options.html`);
    await options.eval(`new Promise((resolve) => {
      const tryClick = () => {
        const b = document.querySelector('button[data-review="${script.id}"]');
        if (b) { b.click(); resolve(true); } else setTimeout(tryClick, 20);
      };
      tryClick();
    })`);
    let reviewed = false;
    for (let i = 0; i < 100 && !reviewed; i++) {
      reviewed = body(await client.callTool({ name: 'get', arguments: { id: script.id } })).script.reviewed;
    }
    assert.equal(reviewed, true);
    assert.equal(body(await client.callTool({ name: 'run', arguments: { id: script.id, tabId } })).result, 2);
    await browser.send('Target.closeTarget', { targetId: options.targetId });
    await client.close();
    await browser.send('Target.closeTarget', { targetId: page.targetId });
  });

  test('a new port after the worker stopped gets a new server and initialize', async () => {
    await approveBridge();
    const first = await connect();
    await first.callTool({ name: 'create', arguments: { name: 'kept', code: '1' } });
    const closed = new Promise((r) => { first.onclose = r; });
    await browser.send('Target.closeTarget', { targetId: provider.targetId });
    await closed;
    // The probe wakes the stopped worker: its listeners were registered at the top level.
    assert.equal((await probe(caller, USERSCRIPTS_ID)).answer.status.authorized, true);
    await browser.send('Target.closeTarget', { targetId: (await browser.worker(USERSCRIPTS_ID)).targetId });
    const second = await connect();
    assert.equal(body(await second.callTool({ name: 'list', arguments: {} })).scripts[0].name, 'kept');
    await second.close();
    provider = await browser.worker(USERSCRIPTS_ID);
  });
});

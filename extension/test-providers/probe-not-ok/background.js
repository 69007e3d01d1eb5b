// Test provider "probe-not-ok": answers every probe ok:false (a protocol error).
// Everything else is the provider kit's, so exactly one invariant is broken.

import { ToolError, isProbe, portListener, prepare } from './kit/index.js';

const BRIDGE = 'hjfgijdboblbpgomjhgpbhfiobiokomm';

const tools = [
  { name: 'echo', description: 'Returns its text.', input: (z) => ({ text: z.string().max(1000) }), run: async ({ text }) => ({ text }) },
  {
    name: 'fail',
    description: 'Always a business failure (not_found).',
    run: async () => {
      throw new ToolError('not_found', 'There is nothing here, on purpose.');
    },
  },
  { name: 'write', description: 'A write that changes nothing (rate-limited and audited).', write: true, run: async () => ({ written: true }) },
];

const spec = {
  service: { namespace: 'probenotok', name: 'Answers ok:false', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

prepare(spec);
chrome.runtime.onMessageExternal.addListener((message, sender, sendResponse) => {
  if (!isProbe(message)) return false;
  sendResponse({ ok: false, error: { code: 'broken', message: 'This test provider always answers ok:false.' } });
  return false;
});
chrome.runtime.onConnectExternal.addListener(portListener(spec));

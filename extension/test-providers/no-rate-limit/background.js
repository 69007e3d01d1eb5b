// Test provider "no-rate-limit": admits every write: no 30-per-60-s window.
// Everything else is the provider kit's, so exactly one invariant is broken.

import { ToolError, portListener, prepare, probeListener } from './kit/index.js';

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
  service: { namespace: 'noratelimit', name: 'No rate limit', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

prepare(spec);
chrome.runtime.onMessageExternal.addListener(probeListener(spec));
chrome.runtime.onConnectExternal.addListener(portListener(spec, { admit: async () => ({ ok: true }) }));

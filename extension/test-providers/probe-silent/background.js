// Test provider "probe-silent": never answers the probe (the host times out after 1500 ms).
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
  service: { namespace: 'probesilent', name: 'Never answers the probe', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

prepare(spec);
// Keeps the message channel open and never answers.
chrome.runtime.onMessageExternal.addListener((message) => isProbe(message));
chrome.runtime.onConnectExternal.addListener(portListener(spec));

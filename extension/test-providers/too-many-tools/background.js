// Test provider "too-many-tools": lists 65 tools (the limit is 64).
// Everything else is the provider kit's, so exactly one invariant is broken.

import { ToolError, defineProvider } from './kit/index.js';

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
for (let i = tools.length; i < 65; i++) {
  tools.push({ name: `extra${String(i).padStart(2, '0')}`, description: `Filler tool ${i}.`, run: async () => ({ i }) });
}

const spec = {
  service: { namespace: 'toomanytools', name: '65 tools', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

defineProvider(spec, { checkNames: false });

// Test provider "no-iserror": reports the business failure of `fail` as a plain result, without isError.
// Everything else is the provider kit's, so exactly one invariant is broken.

import { defineProvider } from './kit/index.js';

const BRIDGE = 'hjfgijdboblbpgomjhgpbhfiobiokomm';

const tools = [
  { name: 'echo', description: 'Returns its text.', input: (z) => ({ text: z.string().max(1000) }), run: async ({ text }) => ({ text }) },
  {
    name: 'fail',
    description: 'Always a business failure (not_found), reported wrongly as a success.',
    run: async () => ({ ok: false, error: { code: 'not_found', message: 'There is nothing here, on purpose.' } }),
  },
  { name: 'write', description: 'A write that changes nothing (rate-limited and audited).', write: true, run: async () => ({ written: true }) },
];

const spec = {
  service: { namespace: 'noiserror', name: 'Business failure without isError', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

defineProvider(spec);

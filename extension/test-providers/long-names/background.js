// Test provider "long-names": lists tools whose names break the rules: 41 characters (the limit is 40) and one with a space.
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
tools.push(
  { name: 'a_tool_name_that_is_forty_one_characters_', description: 'A name of 41 characters.', run: async () => ({}) },
  { name: 'has space', description: 'A name with a space.', run: async () => ({}) },
);

const spec = {
  service: { namespace: 'longnames', name: 'Names over the limits', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools,
};

defineProvider(spec, { checkNames: false });

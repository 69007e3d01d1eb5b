// Test provider "list-changing": its tool list changes at run time. `grow` adds the tool
// `extra`, `shrink` removes it; the kit's addTool/removeTool change every open session, so
// the SDK sends notifications/tools/list_changed and the host must list the tools again.
// Nothing is broken: everything else is the kit's.

import { addTool, defineProvider, removeTool } from './kit/index.js';

const BRIDGE = 'hjfgijdboblbpgomjhgpbhfiobiokomm';

const extra = {
  name: 'extra',
  description: 'Added at run time by grow; returns its text.',
  input: (z) => ({ text: z.string().max(100) }),
  run: async ({ text }) => ({ extra: text }),
};

const spec = {
  service: { namespace: 'listchanging', name: 'Changes its tool list', version: '0.1.0' },
  initialPolicy: { allowlist: [BRIDGE] },
  tools: [
    {
      name: 'grow',
      description: 'Adds the tool extra (no-op when it is there).',
      run: async () => {
        const added = !spec.tools.some((t) => t.name === extra.name);
        if (added) addTool(spec, extra);
        return { added };
      },
    },
    { name: 'shrink', description: 'Removes the tool extra.', run: async () => ({ removed: removeTool(spec, extra.name) }) },
  ],
};

defineProvider(spec);

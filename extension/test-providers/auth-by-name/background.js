// Test provider "auth-by-name": authorizes a caller by the name it gives in `client.name` ("Lumo"), not by sender.id. Nobody is on the allow list.
// Everything else is the provider kit's, so exactly one invariant is broken.

import { ToolError, policy, portListener, prepare, probeListener } from './kit/index.js';

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
  service: { namespace: 'authbyname', name: 'Authorizes by name', version: '0.1.0' },
  initialPolicy: { allowlist: [] },
  tools,
};

// The wrong way: whoever last probed saying it is "Lumo" is let in.
const TRUSTED_NAME = 'Lumo';
const claimed = new Map();
async function byName(id, options = {}) {
  if (options.displayName !== undefined) claimed.set(id, options.displayName);
  const p = await policy.resolve(id, options);
  const authorized = claimed.get(id) === TRUSTED_NAME;
  return { ...p, authorized, pendingApproval: !authorized && p.pendingApproval };
}

prepare(spec);
chrome.runtime.onMessageExternal.addListener(probeListener(spec, byName));
chrome.runtime.onConnectExternal.addListener(portListener(spec, { resolve: byName }));

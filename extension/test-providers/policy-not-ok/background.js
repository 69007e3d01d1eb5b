// Test provider "policy-not-ok": answers a policy failure (caller not allowed) with ok:false instead of ok:true. Nobody is allowed.
// Everything else is the provider kit's, so exactly one invariant is broken.

import { ToolError, answerProbe, isProbe, portListener, prepare } from './kit/index.js';

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
  service: { namespace: 'policynotok', name: 'Policy failure as ok:false', version: '0.1.0' },
  initialPolicy: { allowlist: [] },
  tools,
};

prepare(spec);
chrome.runtime.onMessageExternal.addListener((message, sender, sendResponse) => {
  if (!isProbe(message)) return false;
  answerProbe(spec, message, sender).then((answer) => {
    const s = answer.status;
    if (answer.ok && !(s.enabled && s.authorized)) {
      sendResponse({ ok: false, error: { code: 'not_authorized', message: 'You are not allowed.' } });
    } else {
      sendResponse(answer);
    }
  });
  return true;
});
chrome.runtime.onConnectExternal.addListener(portListener(spec));

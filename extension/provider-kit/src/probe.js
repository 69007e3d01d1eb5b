// L0: the answer to `{channel: "lumo:probe", version: 1, id, client}`.
//
// Only protocol failures answer `ok: false` (wrong version, a malformed
// request, a sender that is not an extension). Policy failures — endpoint
// off, caller not allowed, approval pending — answer `ok: true` with the
// state in `status`, so the host can tell the user what to fix. The caller is
// `sender.id`; `client` is display only. No tools or data travel on L0.

import { PROBE_CHANNEL, PROBE_VERSION, isExtensionId } from './contract.js';
import * as policy from './policy.js';

function protocolError(code, message) {
  return { ok: false, error: { code, message } };
}

/** Whether a runtime message is meant for the probe (others are not answered here). */
export function isProbe(message) {
  return message !== null && typeof message === 'object' && message.channel === PROBE_CHANNEL;
}

/** The provider's readiness: `{ready, reason?}` from `spec.ready()`, ready when it has none. */
async function readiness(spec) {
  if (!spec.ready) return { ready: true };
  try {
    const r = await spec.ready();
    if (typeof r === 'boolean') return { ready: r };
    return { ready: r?.ready === true, reason: typeof r?.reason === 'string' ? r.reason : undefined };
  } catch (e) {
    return { ready: false, reason: `The provider could not check its readiness: ${e?.message ?? e}` };
  }
}

/** The L0 answer for `message` from `sender`. `resolve` is the policy lookup (swappable in test providers). */
export async function answerProbe(spec, message, sender, resolve = policy.resolve) {
  if (message.version !== PROBE_VERSION) {
    return protocolError('unsupported_version', `probe version ${JSON.stringify(message.version)} is not supported; this provider speaks version ${PROBE_VERSION}`);
  }
  if (typeof message.id !== 'string' || message.id.length === 0 || message.id.length > 128) {
    return protocolError('bad_request', 'probe `id` must be a string of 1 to 128 characters');
  }
  const client = message.client;
  if (!client || typeof client !== 'object' || !isExtensionId(client.id) || typeof client.name !== 'string' || typeof client.version !== 'string') {
    return protocolError('bad_request', 'probe `client` must be {id: an extension ID, name: string, version: string}');
  }
  if (!isExtensionId(sender?.id)) {
    return protocolError('not_an_extension', 'only another extension can probe this provider');
  }
  const p = await resolve(sender.id, { requestApproval: true, displayName: client.name.slice(0, 64) });
  const { ready, reason } = await readiness(spec);
  const status = { enabled: p.enabled, authorized: p.authorized, ready, pendingApproval: p.pendingApproval };
  if (!ready && reason) status.reason = reason;
  return { ok: true, id: message.id, service: { ...spec.service }, status };
}

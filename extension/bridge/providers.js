// The provider contract, bridge side: lumo's hand for the L0 probe
// (chrome.runtime.sendMessage) and the L1 ports (chrome.runtime.connect),
// which only an extension can use. lumo decides everything; this module only
// carries messages (see crates/host/src/providers/link.rs for the wire).
//
// Ports live in this worker's memory: when the worker stops they close, the
// providers see onDisconnect, and lumo (whose socket closes too) reconnects
// lazily on the next call.

/** The seed's probe timeout, measured here, next to sendMessage. */
const PROBE_TIMEOUT_MS = 1500;

/** lumo's port number → chrome.runtime.Port. */
const ports = new Map();

/** Handles one `provider.*` message from lumo; `send` answers on the socket. */
export function handle(message, send) {
  switch (message.type) {
    case 'provider.probe':
      return probe(message, send);
    case 'provider.connect':
      return connect(message, send);
    case 'provider.send': {
      const port = ports.get(message.port);
      if (!port) return send({ type: 'provider.closed', port: message.port, error: 'no such port' });
      try {
        port.postMessage(message.msg);
      } catch (e) {
        ports.delete(message.port);
        send({ type: 'provider.closed', port: message.port, error: String(e?.message || e) });
      }
      return;
    }
    case 'provider.close': {
      const port = ports.get(message.port);
      ports.delete(message.port);
      port?.disconnect();
      return;
    }
    default:
      console.warn('lumo bridge: ignored a provider message of unknown type', message.type);
  }
}

/** The socket to lumo closed: its ports go too (lumo counts them closed). */
export function closeAll() {
  for (const port of ports.values()) port.disconnect();
  ports.clear();
}

async function probe({ req, extension, message }, send) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ timeout: `Probe timed out after ${PROBE_TIMEOUT_MS}ms` }), PROBE_TIMEOUT_MS);
  });
  const asked = chrome.runtime.sendMessage(extension, message).then(
    (answer) => ({ answer: answer === undefined ? null : answer }),
    (e) => ({ rejected: String(e?.message || e) }),
  );
  const result = await Promise.race([asked, timeout]);
  clearTimeout(timer);
  send({ type: 'provider.probed', req, ...result });
}

function connect({ port: number, extension, name }, send) {
  let port;
  try {
    port = chrome.runtime.connect(extension, { name });
  } catch (e) {
    return send({ type: 'provider.closed', port: number, error: String(e?.message || e) });
  }
  ports.set(number, port);
  port.onMessage.addListener((msg) => send({ type: 'provider.message', port: number, msg }));
  port.onDisconnect.addListener(() => {
    const error = chrome.runtime.lastError?.message || null;
    if (ports.get(number) === port) ports.delete(number);
    send({ type: 'provider.closed', port: number, error });
  });
}

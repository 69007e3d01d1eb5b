// An MCP Transport (the SDK's interface: start, send, close, onmessage,
// onclose, onerror) over a chrome.runtime.Port.
//
// It listens to the port the moment it is made, in the same task as
// onConnectExternal, and holds every inbound message until authorization is
// settled: `release()` hands them to the server in order, `refuse(why)`
// answers each held request with a JSON-RPC error and closes the port. A
// message the host sent before the policy was read is never lost, and none
// reaches a server that should not exist. A refused port answers the first
// request that arrives (usually `initialize`, which may come after the policy
// was read) and then closes, so the host reads why instead of a bare close.

/** JSON-RPC error code for a caller the policy refuses (server-defined range). */
export const NOT_AUTHORIZED = -32001;
/** How long a refused port waits for a request to answer before closing anyway. */
const REFUSED_GRACE_MS = 5_000;

export class PortTransport {
  constructor(port) {
    this.port = port;
    this.held = [];
    this.released = false;
    this.started = false;
    this.closed = false;
    this.refusal = null;
    this.onmessage = undefined;
    this.onclose = undefined;
    this.onerror = undefined;
    port.onMessage.addListener((message) => this.#inbound(message));
    port.onDisconnect.addListener(() => this.#ended());
  }

  #inbound(raw) {
    let message = raw;
    if (typeof raw === 'string') {
      try {
        message = JSON.parse(raw);
      } catch {
        this.onerror?.(new Error('a port message that is not JSON'));
        return;
      }
    }
    if (this.refusal !== null) this.#answerRefused([message]);
    else if (this.released && this.started) this.onmessage?.(message);
    else this.held.push(message);
  }

  #flush() {
    if (!this.released || !this.started) return;
    const held = this.held;
    this.held = [];
    for (const message of held) this.onmessage?.(message);
  }

  #ended() {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.grace);
    this.held = [];
    this.onclose?.();
  }

  /** Called by the SDK when the server connects. */
  async start() {
    if (this.started) throw new Error('PortTransport already started');
    this.started = true;
    this.#flush();
  }

  /** Authorization passed: deliver held and future messages. */
  release() {
    this.released = true;
    this.#flush();
  }

  /** Authorization failed: answer held requests with `why`, then close the port. */
  refuse(why) {
    if (this.closed || this.refusal !== null) return;
    this.refusal = why;
    const held = this.held;
    this.held = [];
    if (!this.#answerRefused(held)) this.grace = setTimeout(() => this.close(), REFUSED_GRACE_MS);
  }

  /** Answers the requests among `messages` with the refusal; closes the port after one. */
  #answerRefused(messages) {
    let answered = false;
    for (const message of messages) {
      if (message && typeof message === 'object' && 'id' in message && 'method' in message) {
        this.#post({ jsonrpc: '2.0', id: message.id, error: { code: NOT_AUTHORIZED, message: this.refusal } });
        answered = true;
      }
    }
    if (answered) this.close();
    return answered;
  }

  #post(message) {
    try {
      this.port.postMessage(message);
      return true;
    } catch {
      // The other end went away; onDisconnect reports it.
      return false;
    }
  }

  async send(message) {
    if (this.closed) throw new Error('the lumo:mcp port is closed');
    if (!this.#post(message)) throw new Error('the lumo:mcp port is closed');
  }

  async close() {
    if (this.closed) return;
    try {
      this.port.disconnect();
    } catch {
      // Already gone.
    }
    this.#ended();
  }
}

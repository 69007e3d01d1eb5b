// The contract's fixed names and limits, mirrored from lumo-protocol
// (crates/protocol/src/{probe,names,rate}.rs). Change them there first.

/** The `channel` of every L0 probe request. */
export const PROBE_CHANNEL = 'lumo:probe';
/** The name of the runtime port that carries L1 (standard MCP). */
export const MCP_PORT_NAME = 'lumo:mcp';
/** The probe `version` this kit speaks. */
export const PROBE_VERSION = 1;

/** At most this many tools per provider. */
export const MAX_TOOLS_PER_PROVIDER = 64;
/** Longest namespace, in characters. */
export const MAX_NAMESPACE_LEN = 16;
/** Longest tool name (the part after the namespace). */
export const MAX_TOOL_NAME_LEN = 40;
/** Longest `<namespace>_<tool>`. */
export const MAX_QUALIFIED_LEN = 57;
/** Namespaces of lumo's built-in tools; providers cannot claim them. */
export const RESERVED_NAMESPACES = Object.freeze(['browser', 'page', 'file', 'network', 'devtools', 'webmcp', 'ext']);

/** Writes per caller per window (a sliding window). */
export const WRITE_LIMIT = 30;
/** The window, in milliseconds. */
export const WRITE_WINDOW_MS = 60_000;

/** The only test of an extension ID (seed: every input path goes through it). */
export function isExtensionId(value) {
  return typeof value === 'string' && /^[a-p]{32}$/.test(value);
}

/** Whether `value` is a UUID (8-4-4-4-12 hex digits), the only target an audit record takes. */
export function isUuid(value) {
  return typeof value === 'string' && /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value);
}

// The provider kit: everything a Chrome extension needs to offer MCP tools to
// lumo under the L0 probe / L1 MCP contract. See ../README.md (the five steps).
//
//   import { defineProvider } from './kit/index.js';
//   defineProvider({ service: {namespace, name, version}, tools: [...] });
//
// A tool's `input` is a function of zod, `(z) => ({field: z.string()})`:
// the SDK and zod load on the first port, so a probe that wakes a stopped
// worker does not wait for them.
//
// Call defineProvider at the top level of the service worker, synchronously:
// it registers onMessageExternal (the probe) and onConnectExternal (the
// port) right away, so an event that wakes a stopped worker reaches them.

import { MCP_PORT_NAME, isExtensionId } from './contract.js';
import { providerProblems } from './names.js';
import { answerProbe, isProbe } from './probe.js';
import { buildServer, toolChanger } from './server.js';
import { PortTransport } from './transport.js';
import * as audit from './audit.js';
import * as policy from './policy.js';
import * as rate from './rate.js';

export * from './contract.js';
export { ToolError, buildServer, instructionsFor } from './server.js';
export { PortTransport } from './transport.js';
export { answerProbe, isProbe } from './probe.js';
export { providerProblems } from './names.js';
export { loadSdk } from './mcp-sdk.js';
export { audit, policy, rate };

/** Answers probes for `spec` (the listener registered by defineProvider). */
export function probeListener(spec, resolve = policy.resolve) {
  return (message, sender, sendResponse) => {
    if (!isProbe(message)) return false;
    answerProbe(spec, message, sender, resolve).then(sendResponse, (e) => {
      sendResponse({ ok: false, error: { code: 'internal', message: `the provider failed to answer: ${e?.message ?? e}` } });
    });
    return true;
  };
}

/**
 * Serves MCP on one port for `spec`: holds inbound messages, checks the
 * policy for the port's sender, then connects a new McpServer (never one
 * from an earlier port: every port re-runs initialize). Does not check the
 * port name — the listener does.
 */
export function servePort(spec, port, parts = {}) {
  const transport = new PortTransport(port);
  const caller = port.sender?.id;
  const resolve = parts.resolve ?? policy.resolve;
  (async () => {
    if (!isExtensionId(caller)) return transport.refuse('Only another extension can open lumo:mcp.');
    const p = await resolve(caller);
    if (!p.enabled) return transport.refuse('Agent access is turned off in the provider.');
    if (!p.authorized) return transport.refuse(`The caller ${caller} is not on the provider's allow list.`);
    const server = buildServer(spec, caller, p, parts);
    await server.connect(transport);
    const servers = liveServers(spec);
    servers.add(server);
    server.server.onclose = () => servers.delete(server);
    transport.release();
  })().catch((e) => {
    console.error('lumo provider kit: serving a port failed', e);
    transport.refuse(`The provider failed to start its MCP server: ${e?.message ?? e}`);
  });
  return transport;
}

/** spec → the McpServers serving it on open ports. */
const live = new WeakMap();

function liveServers(spec) {
  if (!live.has(spec)) live.set(spec, new Set());
  return live.get(spec);
}

/**
 * Adds `tool` to the provider at run time: to `spec.tools` (so every later
 * port lists it) and to every open session, whose client is sent
 * `notifications/tools/list_changed`. Lives as long as the worker: a provider
 * whose tools depend on stored state should rebuild them at start-up.
 */
export function addTool(spec, tool) {
  checkTool(tool);
  if (spec.tools.some((t) => t.name === tool.name)) throw new Error(`addTool: tool ${tool.name} exists already`);
  const problems = providerProblems(spec.service.namespace, [...spec.tools.map((t) => t.name), tool.name]);
  if (problems.length) throw new Error(`addTool: lumo would refuse this tool: ${problems.join('; ')}`);
  spec.tools.push(tool);
  for (const server of liveServers(spec)) toolChanger(server)?.add(tool);
}

/** Removes tool `name` at run time, like addTool; false when there is no such tool. */
export function removeTool(spec, name) {
  const at = spec.tools.findIndex((t) => t.name === name);
  if (at < 0) return false;
  spec.tools.splice(at, 1);
  for (const server of liveServers(spec)) toolChanger(server)?.remove(name);
  return true;
}

/** Opens MCP sessions on ports named lumo:mcp (the listener registered by defineProvider). */
export function portListener(spec, parts = {}) {
  return (port) => {
    if (port.name !== MCP_PORT_NAME) {
      port.disconnect();
      return;
    }
    servePort(spec, port, parts);
  };
}

function checkTool(t) {
  if (typeof t?.run !== 'function') throw new Error(`lumo provider kit: tool ${t?.name} has no run(args, ctx)`);
  if (t.input !== undefined && typeof t.input !== 'function') {
    throw new Error(`lumo provider kit: tool ${t.name}: input must be a function (z) => ({field: z.string(), …})`);
  }
}

function checkSpec(spec, checkNames) {
  const s = spec?.service;
  if (!s || typeof s.namespace !== 'string' || typeof s.name !== 'string' || typeof s.version !== 'string') {
    throw new Error('defineProvider: service must be {namespace, name, version}, all strings');
  }
  if (!Array.isArray(spec.tools)) throw new Error('defineProvider: tools must be an array');
  for (const t of spec.tools) checkTool(t);
  if (checkNames) {
    const problems = providerProblems(s.namespace, spec.tools.map((t) => t.name));
    if (problems.length) throw new Error(`defineProvider: lumo would refuse these tools: ${problems.join('; ')}`);
  }
}

/**
 * Checks `spec`, sets its initial policy and puts the kit on the worker's
 * global scope as `lumoKit` ({spec, policy, audit, rate}), so an options page
 * or a test driving the worker over CDP can change the policy without
 * clicking. Registers no listener: defineProvider does that.
 * `options.checkNames: false` skips the name rules (only for test providers
 * that break them on purpose).
 */
export function prepare(spec, { checkNames = true } = {}) {
  checkSpec(spec, checkNames);
  policy.setInitialPolicy(spec.initialPolicy);
  globalThis.lumoKit = { spec, policy, audit, rate };
  return spec;
}

/** Defines the provider and registers both listeners (call it at the top level). */
export function defineProvider(spec, options = {}) {
  prepare(spec, options);
  chrome.runtime.onMessageExternal.addListener(probeListener(spec));
  chrome.runtime.onConnectExternal.addListener(portListener(spec));
  return spec;
}

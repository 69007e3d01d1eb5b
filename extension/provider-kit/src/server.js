// One McpServer (the official SDK's) for one authorized port. Every tool call
// starts by resolving the policy again — endpoint on, caller allowed, writes
// on — so a switch takes effect on the very next call; writes are then
// rate-limited per caller and audited. Business failures come back as
// `isError: true` results the model can read, `{ok: false, error: {code, message}}`.

import { loadSdk } from './mcp-sdk.js';
import { WRITE_LIMIT, WRITE_WINDOW_MS } from './contract.js';
import * as audit from './audit.js';
import * as policy from './policy.js';
import * as rate from './rate.js';

/**
 * A business failure: becomes an `isError: true` result with this code (lowercase
 * snake_case like lumo's, e.g. `not_found`; anything else reads `operation_failed`) and message.
 */
export class ToolError extends Error {
  constructor(code, message) {
    super(message);
    this.code = typeof code === 'string' && /^[a-z_]{1,32}$/.test(code) ? code : 'operation_failed';
  }
}

function failure(code, message) {
  const body = { ok: false, error: { code, message } };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

function success(data) {
  const body = { ok: true, ...(data && typeof data === 'object' && !Array.isArray(data) ? data : { result: data }) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/** Why the policy refuses `caller` now, or null. */
export function refusal(p, caller, write) {
  if (!p.enabled) return ['forbidden', 'Agent access is turned off in the provider.'];
  if (!p.authorized) {
    return ['forbidden', `The caller ${caller} is not on the provider's allow list; approve it in the provider's options page.`];
  }
  if (write && !p.writes) return ['forbidden', "Writes are switched off in the provider's options page; read tools still work."];
  return null;
}

/** The instructions for a new session, from the provider's text and the policy now. */
export function instructionsFor(spec, p) {
  const lines = [];
  if (spec.instructions) lines.push(typeof spec.instructions === 'function' ? spec.instructions(p) : spec.instructions);
  lines.push(
    p.writes
      ? `Write tools are on, limited to ${WRITE_LIMIT} per ${WRITE_WINDOW_MS / 1000} s; every write is audited.`
      : 'Write tools are switched off by the user; only read tools will succeed.',
  );
  if (p.review) lines.push('Review is on: what you create or change waits for the user to review it before it can run.');
  return lines.join('\n');
}

/** McpServer → {add(tool), remove(name)}: how its tool list changes at run time. */
const changers = new WeakMap();

/** How `server`'s tool list changes at run time (for index.js). */
export function toolChanger(server) {
  return changers.get(server);
}

/**
 * Builds the server for `caller`. `parts` lets a test provider swap one piece
 * (how the policy is resolved, how writes are admitted); real providers pass nothing.
 */
export function buildServer(spec, caller, p, parts = {}) {
  const resolve = parts.resolve ?? ((id) => policy.resolve(id));
  const admit = parts.admit ?? ((id) => rate.admit(id));
  // The SDK is evaluated here, on the first port, never on the probe's path.
  const { McpServer, z } = loadSdk();
  const server = new McpServer(
    { name: spec.service.name, version: spec.service.version },
    { instructions: instructionsFor(spec, p) },
  );
  const register = (tool) => {
    const config = {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input ? tool.input(z) : {},
      annotations: { readOnlyHint: !tool.write, ...(tool.annotations ?? {}) },
    };
    return server.registerTool(tool.name, config, async (args) => {
      const current = await resolve(caller);
      let target = typeof args?.id === 'string' ? args.id : undefined;
      const finish = async (result, outcome) => {
        if (tool.write) {
          await audit.record({ tool: tool.name, caller, outcome, target, params: args ?? {} }).catch((e) => {
            console.error('lumo provider kit: audit record failed', e);
          });
        }
        return result;
      };
      const refused = refusal(current, caller, tool.write);
      if (refused) return finish(failure(...refused), refused[0]);
      if (tool.write) {
        const admitted = await admit(caller);
        if (!admitted.ok) {
          const secs = Math.ceil(admitted.retryAfterMs / 1000);
          return finish(
            failure('rate_limited', `Rate limit of ${WRITE_LIMIT} writes per ${WRITE_WINDOW_MS / 1000} s reached; retry in ${secs} s.`),
            'rate_limited',
          );
        }
      }
      const ctx = { caller, policy: current, setTarget: (uuid) => { target = uuid; } };
      try {
        return await finish(success(await tool.run(args ?? {}, ctx)), 'ok');
      } catch (e) {
        if (e instanceof ToolError) return finish(failure(e.code, e.message), e.code);
        console.error(`lumo provider kit: tool ${tool.name} failed`, e);
        return finish(failure('operation_failed', `${tool.name} failed: ${e?.message ?? e}`), 'operation_failed');
      }
    });
  };
  const registered = new Map(spec.tools.map((tool) => [tool.name, register(tool)]));
  // addTool/removeTool (index.js) change the tools of live servers; the SDK then
  // sends notifications/tools/list_changed on its own.
  changers.set(server, {
    add: (tool) => registered.set(tool.name, register(tool)),
    remove: (name) => {
      registered.get(name)?.remove();
      registered.delete(name);
    },
  });
  return server;
}

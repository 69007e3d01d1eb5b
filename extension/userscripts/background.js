// Lumo Userscripts, the reference provider: a small userscripts manager whose
// tools lumo exposes as userscripts_<tool>. Everything about the contract
// (probe, port, policy, audit, rate limit, isError) is the provider kit's;
// this file only says what the tools do.

import { defineProvider, ToolError } from './kit/index.js';
import * as scripts from './scripts.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Schema parts, as functions of zod (the kit loads it on the first port).
const id = (z) => z.string().regex(UUID, 'a script id (a UUID, from userscripts_list)');
const name = (z) => z.string().min(1).max(100);
const code = (z) => z.string().max(100_000);
const matches = (z) => z.array(z.string().min(1).max(500)).max(20);

function summary(s) {
  return { id: s.id, name: s.name, matches: s.matches, enabled: s.enabled, reviewed: s.reviewed, size: s.code.length, updatedAt: s.updatedAt };
}

function found(all, scriptId) {
  const s = all[scriptId];
  if (!s) throw new ToolError('not_found', `No userscript with id ${scriptId}; userscripts_list shows the ids.`);
  return s;
}

function validMatches(list) {
  for (const pattern of list) {
    if (pattern !== '<all_urls>' && !/^(\*|https?|file|ftp):\/\/[^/]*\/.*$/.test(pattern)) {
      throw new ToolError('invalid_arguments', `${JSON.stringify(pattern)} is not a match pattern like "https://example.com/*"`);
    }
  }
  return list;
}

defineProvider({
  service: { namespace: 'userscripts', name: 'Lumo Userscripts', version: chrome.runtime.getManifest().version },
  initialPolicy: { enabled: true, writes: true, review: false },
  instructions: 'Lumo Userscripts manages small JavaScript userscripts: list, read, create, change, enable or disable, delete them, and run one once on a tab.',
  tools: [
    {
      name: 'list',
      title: 'List userscripts',
      description: 'Every userscript: id, name, match patterns, enabled, reviewed, size (not the source).',
      run: async () => ({ scripts: Object.values(await scripts.all()).map(summary) }),
    },
    {
      name: 'get',
      title: 'Read a userscript',
      description: 'One userscript with its source.',
      input: (z) => ({ id: id(z) }),
      run: async (args) => ({ script: found(await scripts.all(), args.id) }),
    },
    {
      name: 'create',
      title: 'Create a userscript',
      description: 'Adds a userscript. `matches` (optional) are match patterns where it runs on its own once enabled.',
      input: (z) => ({ name: name(z), code: code(z), matches: matches(z).optional(), enabled: z.boolean().optional() }),
      write: true,
      annotations: { destructiveHint: false },
      run: (args, ctx) => scripts.change((all) => {
        const now = Date.now();
        const s = {
          id: crypto.randomUUID(),
          name: args.name,
          code: args.code,
          matches: validMatches(args.matches ?? []),
          enabled: args.enabled ?? false,
          reviewed: !ctx.policy.review,
          createdAt: now,
          updatedAt: now,
        };
        all[s.id] = s;
        ctx.setTarget(s.id);
        return { script: summary(s) };
      }),
    },
    {
      name: 'update',
      title: 'Change a userscript',
      description: 'Changes the name, source or match patterns of a userscript (only the fields given).',
      input: (z) => ({ id: id(z), name: name(z).optional(), code: code(z).optional(), matches: matches(z).optional() }),
      write: true,
      annotations: { destructiveHint: true, idempotentHint: true },
      run: (args, ctx) => scripts.change((all) => {
        const s = found(all, args.id);
        if (args.name !== undefined) s.name = args.name;
        if (args.matches !== undefined) s.matches = validMatches(args.matches);
        if (args.code !== undefined) {
          s.code = args.code;
          if (ctx.policy.review) s.reviewed = false;
        }
        s.updatedAt = Date.now();
        return { script: summary(s) };
      }),
    },
    {
      name: 'set_enabled',
      title: 'Enable or disable a userscript',
      description: 'Enables (runs on its match patterns) or disables a userscript.',
      input: (z) => ({ id: id(z), enabled: z.boolean() }),
      write: true,
      annotations: { destructiveHint: false, idempotentHint: true },
      run: (args) => scripts.change((all) => {
        const s = found(all, args.id);
        if (args.enabled && !s.reviewed) {
          throw new ToolError('invalid_state', `Userscript ${s.id} waits for the user to review it in the provider's options page.`);
        }
        s.enabled = args.enabled;
        s.updatedAt = Date.now();
        return { script: summary(s) };
      }),
    },
    {
      name: 'delete',
      title: 'Delete a userscript',
      description: 'Deletes a userscript for good.',
      input: (z) => ({ id: id(z) }),
      write: true,
      annotations: { destructiveHint: true, idempotentHint: true },
      run: (args) => scripts.change((all) => {
        found(all, args.id);
        delete all[args.id];
        return { deleted: args.id };
      }),
    },
    {
      name: 'run',
      title: 'Run a userscript on a tab',
      description: 'Runs a userscript once on the tab `tabId` now and returns the value of its last expression.',
      input: (z) => ({ id: id(z), tabId: z.number().int().nonnegative() }),
      write: true,
      annotations: { destructiveHint: true, openWorldHint: true },
      run: async (args) => {
        const s = found(await scripts.all(), args.id);
        if (!s.reviewed) {
          throw new ToolError('invalid_state', `Userscript ${s.id} waits for the user to review it in the provider's options page.`);
        }
        try {
          await chrome.tabs.get(args.tabId);
        } catch {
          throw new ToolError('not_found', `No tab with id ${args.tabId}.`);
        }
        try {
          return await scripts.runOnTab(s.code, args.tabId);
        } catch (e) {
          throw new ToolError('operation_failed', `The script failed on tab ${args.tabId}: ${e?.message ?? e}`);
        }
      },
    },
  ],
});

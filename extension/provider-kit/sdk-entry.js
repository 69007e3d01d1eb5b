// The one bundled part of the kit: the official MCP TypeScript SDK's server and zod (its
// schema language). `build` wraps the bundle in loadSdk(), so it is evaluated on the first
// port, not when the worker starts: a probe to a stopped worker stays fast.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

// Zod would probe `new Function` for its fast path; the extension CSP forbids eval.
z.config({ jitless: true });

export { McpServer, z };

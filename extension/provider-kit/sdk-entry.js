// The one bundled file of the kit: the official MCP TypeScript SDK's server and zod
// (its schema language). Everything else in the kit is plain ES modules.
export { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
export { z } from 'zod';

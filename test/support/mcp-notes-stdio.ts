/**
 * The notes MCP server over stdio, as Writ spawns it: `node --import tsx mcp-notes-stdio.ts`.
 * WRIT_JWKS_URL: where the gateway publishes its grant keys; NOTES_CALL_LOG: a file that gets
 * one JSON line per tools/call received.
 */
import { appendFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createNotesServer } from "./mcp-notes.ts";

const jwks = process.env.WRIT_JWKS_URL;
const log = process.env.NOTES_CALL_LOG;
if (jwks === undefined || log === undefined) {
  console.error("mcp-notes-stdio: set WRIT_JWKS_URL and NOTES_CALL_LOG");
  process.exit(2);
}
const { server } = createNotesServer({
  keys: new URL(jwks),
  record: (call) => appendFileSync(log, `${JSON.stringify(call)}\n`),
});
await server.connect(new StdioServerTransport());

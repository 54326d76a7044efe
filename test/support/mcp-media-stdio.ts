/**
 * A small MCP server over stdio for what the reference servers do not offer: an audio result,
 * and a slow call that reports progress and records whether it was cancelled. Like third-party
 * servers, it does not check Writ's grants. MEDIA_CALL_LOG: a file that gets one JSON line per
 * event (`{"event": "started" | "cancelled" | "finished", "tool": …}`).
 *
 *   sound {}             -> one audio item (a 4-byte WAV-like payload) and a text item
 *   wait {steps, ms, quiet?} -> a log message (unless quiet) and progress after each step; on
 *                           cancellation it stops and says so in the log
 */
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const log = process.env.MEDIA_CALL_LOG;
if (log === undefined) {
  console.error("mcp-media-stdio: set MEDIA_CALL_LOG");
  process.exit(2);
}
const record = (event: string, tool: string) => appendFileSync(log, `${JSON.stringify({ event, tool })}\n`);

const SOUND_BASE64 = Buffer.from("RIFF").toString("base64");

const server = new McpServer({ name: "media", version: "1.0.0" }, { capabilities: { logging: {} } });
server.registerTool("sound", { description: "A short sound", inputSchema: {} }, async () => ({
  content: [
    { type: "audio", data: SOUND_BASE64, mimeType: "audio/wav" },
    { type: "text", text: "a short sound" },
  ],
}));
server.registerTool(
  "wait",
  {
    description: "Waits, reporting progress after each step",
    inputSchema: {
      steps: z.number().int().min(1).max(100),
      ms: z.number().int().min(1).max(1000),
      quiet: z.boolean().optional(),
    },
  },
  async ({ steps, ms, quiet }, extra) => {
    record("started", "wait");
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (extra.signal.aborted) {
        record("cancelled", "wait");
        return { content: [{ type: "text", text: "cancelled" }], isError: true };
      }
      if (quiet !== true)
        await server.server.sendLoggingMessage({ level: "info", data: `step ${step} of ${steps}` });
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
        });
      }
    }
    record("finished", "wait");
    return { content: [{ type: "text", text: `waited ${steps} steps` }] };
  },
);
await server.connect(new StdioServerTransport());

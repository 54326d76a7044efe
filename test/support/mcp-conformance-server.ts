/**
 * The reference server of the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * its server scenarios), built with the SDK and served over stdio, as Writ spawns it:
 * `node --import tsx mcp-conformance-server.ts`. Writ fronts it in test/mcp/conformance.test.ts,
 * and the suite checks what reaches it through Writ.
 *
 * Each tool, resource and prompt does what the suite's scenario of the same name expects (the
 * scenario descriptions, `conformance list --server`, say it). Like any third-party server, it
 * does not check Writ's grants. Tools are served from one table, `CONFORMANCE_TOOLS`, whose raw
 * JSON Schemas the Writ contracts in test/mcp/conformance-fixture.ts reuse, so the two never
 * disagree.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CreateMessageResultSchema,
  type ElicitRequestFormParams,
  ElicitResultSchema,
  ErrorCode,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** A 1x1 red PNG. */
export const TEST_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/** A WAV file holding one silent 16-bit sample. */
export const TEST_WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const elicitedForm: Record<"sep1034" | "sep1330" | "contact", ElicitRequestFormParams["requestedSchema"]> = {
  sep1034: {
    type: "object",
    properties: {
      name: { type: "string", description: "User name", default: "John Doe" },
      age: { type: "integer", description: "User age", default: 30 },
      score: { type: "number", description: "User score", default: 95.5 },
      status: {
        type: "string",
        description: "User status",
        enum: ["active", "inactive", "pending"],
        default: "active",
      },
      verified: { type: "boolean", description: "Verified", default: true },
    },
  },
  sep1330: {
    type: "object",
    properties: {
      untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
      titledSingle: {
        type: "string",
        oneOf: [
          { const: "value1", title: "First Option" },
          { const: "value2", title: "Second Option" },
          { const: "value3", title: "Third Option" },
        ],
      },
      legacyEnum: {
        type: "string",
        enum: ["opt1", "opt2", "opt3"],
        enumNames: ["Option One", "Option Two", "Option Three"],
      },
      untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
      titledMulti: {
        type: "array",
        items: {
          anyOf: [
            { const: "value1", title: "First Choice" },
            { const: "value2", title: "Second Choice" },
            { const: "value3", title: "Third Choice" },
          ],
        },
      },
    },
  },
  contact: {
    type: "object",
    properties: {
      username: { type: "string", description: "User's response" },
      email: { type: "string", description: "User's email address" },
    },
    required: ["username", "email"],
  },
};

async function elicit(
  extra: Extra,
  message: string,
  requestedSchema: ElicitRequestFormParams["requestedSchema"],
): Promise<CallToolResult> {
  const answer = await extra.sendRequest(
    { method: "elicitation/create", params: { mode: "form", message, requestedSchema } },
    ElicitResultSchema,
  );
  return text(
    `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
  );
}

const argumentsSchema = {
  test_sampling: z.object({ prompt: z.string() }),
  test_elicitation: z.object({ message: z.string() }),
};

type ToolHandler = (args: Record<string, unknown>, extra: Extra) => Promise<CallToolResult>;

/** What each tool does, by the name the suite calls it. */
const handlers = {
  test_simple_text: async () => text("This is a simple text response for testing."),
  test_image_content: async () => ({
    content: [{ type: "image", data: TEST_PNG_BASE64, mimeType: "image/png" }],
  }),
  test_audio_content: async () => ({
    content: [{ type: "audio", data: TEST_WAV_BASE64, mimeType: "audio/wav" }],
  }),
  test_embedded_resource: async () => ({
    content: [
      {
        type: "resource",
        resource: {
          uri: "test://embedded-resource",
          mimeType: "text/plain",
          text: "This is an embedded resource content.",
        },
      },
    ],
  }),
  test_multiple_content_types: async () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: TEST_PNG_BASE64, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }),
  async test_tool_with_logging(_args, extra) {
    const steps = ["Tool execution started", "Tool processing data", "Tool execution completed"];
    for (const [index, data] of steps.entries()) {
      if (index > 0) await pause(50);
      await extra.sendNotification({
        method: "notifications/message",
        params: { level: "info", logger: "conformance", data },
      });
    }
    return text("Tool with logging executed successfully");
  },
  test_error_handling: async () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }),
  async test_tool_with_progress(_args, extra) {
    const progressToken = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progress > 0) await pause(50);
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress, total: 100, message: `step ${progress} of 100` },
        });
      }
    }
    return text(`progress reported to ${progressToken === undefined ? "nobody" : String(progressToken)}`);
  },
  async test_sampling(args, extra) {
    const { prompt } = argumentsSchema.test_sampling.parse(args);
    const answer = await extra.sendRequest(
      {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 },
      },
      CreateMessageResultSchema,
    );
    const said = answer.content.type === "text" ? answer.content.text : `(${answer.content.type})`;
    return text(`LLM response: ${said}`);
  },
  async test_elicitation(args, extra) {
    const { message } = argumentsSchema.test_elicitation.parse(args);
    return elicit(extra, message, elicitedForm.contact);
  },
  async test_roots(_args, extra) {
    const answer = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
    return text(`roots: ${answer.roots.map((root) => root.uri).join(", ")}`);
  },
  test_elicitation_sep1034_defaults: (_args, extra) =>
    elicit(extra, "Please review the form; every field has a default", elicitedForm.sep1034),
  test_elicitation_sep1330_enums: (_args, extra) =>
    elicit(extra, "Please pick from the enum fields", elicitedForm.sep1330),
  json_schema_2020_12_tool: async (args) =>
    text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  async test_reconnection() {
    await pause(100);
    return text("Reconnection test completed successfully.");
  },
} satisfies Record<string, ToolHandler>;

type ToolName = keyof typeof handlers;

export interface ConformanceTool {
  name: ToolName;
  description: string;
  /** JSON Schema (2020-12) of the arguments, as listed and as Writ's contract declares it. */
  inputSchema: { type: "object" } & Record<string, unknown>;
}

const noArguments = { type: "object", properties: {}, additionalProperties: false } as const;

/** The tools the suite's scenarios call, by the names they call them. */
export const CONFORMANCE_TOOLS: readonly ConformanceTool[] = [
  { name: "test_simple_text", description: "Returns one text block", inputSchema: noArguments },
  { name: "test_image_content", description: "Returns a PNG image", inputSchema: noArguments },
  { name: "test_audio_content", description: "Returns a WAV audio clip", inputSchema: noArguments },
  {
    name: "test_embedded_resource",
    description: "Returns an embedded text resource",
    inputSchema: noArguments,
  },
  {
    name: "test_multiple_content_types",
    description: "Returns text, an image and an embedded resource",
    inputSchema: noArguments,
  },
  {
    name: "test_tool_with_logging",
    description: "Sends three info log messages while it runs",
    inputSchema: noArguments,
  },
  { name: "test_error_handling", description: "Always fails with isError", inputSchema: noArguments },
  {
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50 and 100 of 100 when the caller sent a progress token",
    inputSchema: noArguments,
  },
  {
    name: "test_sampling",
    description: "Asks the client's model to answer a prompt (sampling/createMessage)",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send to the model" } },
      required: ["prompt"],
      additionalProperties: false,
    },
  },
  {
    name: "test_elicitation",
    description: "Asks the user for a username and an email (elicitation/create)",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message shown to the user" } },
      required: ["message"],
      additionalProperties: false,
    },
  },
  {
    name: "test_roots",
    description: "Lists the client's roots (roots/list; not a suite scenario: Writ's own tests use it)",
    inputSchema: noArguments,
  },
  {
    name: "test_elicitation_sep1034_defaults",
    description: "Elicits a form whose fields have defaults of every primitive type (SEP-1034)",
    inputSchema: noArguments,
  },
  {
    name: "test_elicitation_sep1330_enums",
    description: "Elicits a form with every enum variant (SEP-1330)",
    inputSchema: noArguments,
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Takes arguments described with JSON Schema 2020-12 features (SEP-1613)",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
  {
    name: "test_reconnection",
    description: "Answers after a pause (SEP-1699 polling; over stdio there is no stream to close)",
    inputSchema: noArguments,
  },
];

/** The reference server: the tools above, plus the suite's resources, prompts, logging, completion. */
export function createConformanceServer(): McpServer {
  const mcp = new McpServer(
    { name: "mcp-conformance-reference", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true },
        prompts: {},
        logging: {},
      },
    },
  );

  // Tools from the table, with their raw JSON Schemas (McpServer.registerTool takes zod shapes).
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...CONFORMANCE_TOOLS] }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = CONFORMANCE_TOOLS.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `no tool named ${request.params.name}`);
    }
    try {
      return await handlers[tool.name](request.params.arguments ?? {}, extra);
    } catch (error) {
      return {
        isError: true,
        content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }],
      };
    }
  });

  mcp.registerResource(
    "static-text",
    "test://static-text",
    { description: "A static text resource", mimeType: "text/plain" },
    async (uri) => ({
      contents: [
        { uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." },
      ],
    }),
  );
  mcp.registerResource(
    "static-binary",
    "test://static-binary",
    { description: "A static binary resource (a PNG)", mimeType: "image/png" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: TEST_PNG_BASE64 }] }),
  );
  mcp.registerResource(
    "watched-resource",
    "test://watched-resource",
    { description: "A resource clients subscribe to", mimeType: "text/plain" },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }],
    }),
  );
  mcp.registerResource(
    "template",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { description: "Data for an id", mimeType: "application/json" },
    async (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: "application/json",
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
  const subscriptions = new Set<string>();
  mcp.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  mcp.registerPrompt("test_simple_prompt", { description: "A prompt without arguments" }, async () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  mcp.registerPrompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with two arguments",
      argsSchema: {
        // Completable, so that completion/complete has something to complete.
        arg1: completable(z.string().describe("First test argument"), (value) =>
          ["paris", "park", "party"].filter((word) => word.startsWith(value)),
        ),
        arg2: z.string().describe("Second test argument"),
      },
    },
    async ({ arg1, arg2 }) => ({
      messages: [
        {
          role: "user",
          content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  );
  mcp.registerPrompt(
    "test_prompt_with_embedded_resource",
    {
      description: "A prompt embedding a resource",
      argsSchema: { resourceUri: z.string().describe("URI of the resource to embed") },
    },
    async ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: {
              uri: resourceUri,
              mimeType: "text/plain",
              text: "Embedded resource content for testing.",
            },
          },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  mcp.registerPrompt("test_prompt_with_image", { description: "A prompt holding an image" }, async () => ({
    messages: [
      { role: "user", content: { type: "image", data: TEST_PNG_BASE64, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));

  return mcp;
}

export interface ConformanceHttpServer {
  /** e.g. http://127.0.0.1:41234/mcp */
  url: string;
  close(): Promise<void>;
}

/**
 * The reference server on its own over Streamable HTTP on loopback, one session per client (the
 * suite's sampling and elicitation scenarios need a session to answer the server's requests on):
 * the control that shows which scenarios the server passes without Writ in front.
 */
export async function startConformanceHttpServer(): Promise<ConformanceHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    const ready = (async () => {
      let transport = known;
      if (transport === undefined) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (session): void => {
            sessions.set(session, created);
          },
        });
        await createConformanceServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })();
    ready.catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const address = http.address();
  if (address === null || typeof address === "string") throw new Error("the server has no port");
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// Run as a program (not when imported for its tool table): serve over stdio.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await createConformanceServer().connect(new StdioServerTransport());
}

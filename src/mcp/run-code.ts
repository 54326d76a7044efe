/**
 * Code Mode on Writ's MCP endpoint: the tool `run_code`, listed for a caller the policy lets run
 * code (`code.run` discoverable), its description carrying that caller's SDK declarations; a call
 * runs the program (src/codemode/) and answers the run's outcome as `structuredContent`, with
 * `isError` when the run did not return.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type CodeMode, RUN_CODE_TOOL } from "../codemode/index.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";

const runArgumentsSchema = z.strictObject({ code: z.string().min(1) });

/**
 * A tool as `tools/list` shows it, on either revision (the `Tool` of each SDK line accepts it:
 * the input schema is JSON Schema, an object).
 */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: { [keyword: string]: unknown; type: "object" };
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint?: boolean;
  };
  _meta?: Record<string, unknown>;
}

/** The `run_code` tool as `subject` sees it: its SDK in the description. */
export function runCodeTool(codeMode: CodeMode, subject: Subject): ListedTool {
  return {
    name: RUN_CODE_TOOL,
    description: `Run a short TypeScript or JavaScript program that calls the tools below and returns a JSON value. The program is the body of an async function; every call it makes is authorized on its own, and a refused call ends the run. The answer lists each call (ledger), the console lines and the returned value.\n\n\`\`\`ts\n${codeMode.sdk(subject)}\`\`\``,
    inputSchema: {
      type: "object",
      properties: { code: { type: "string", description: "The program (TypeScript or JavaScript)" } },
      required: ["code"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  };
}

/** Whether a `tools/call` names Code Mode's tool (and Code Mode is on). */
export function callsRunCode(codeMode: CodeMode | undefined, name: string): codeMode is CodeMode {
  return codeMode?.enabled === true && name === RUN_CODE_TOOL;
}

/** A `run_code` call: the run's outcome, as a tool result. */
export async function callRunCode(
  codeMode: CodeMode,
  ctx: { subject: Subject; requestId: string; signal?: AbortSignal | undefined },
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const parsed = runArgumentsSchema.safeParse(args ?? {});
  if (!parsed.success) {
    const error = new WritError("invalid_argument", "run_code takes {code: string}", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/arguments"),
      suggestedFix: "call run_code with arguments {code: <the program>}",
    });
    return failed(error.toJSON(), { error: error.toJSON() });
  }
  const { body } = await codeMode.run({
    subject: ctx.subject,
    code: parsed.data.code,
    requestId: ctx.requestId,
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  });
  const structured = { ...body };
  if (body.error !== undefined) return failed(body.error, structured);
  return {
    content: [{ type: "text", text: JSON.stringify(body.value ?? null) }],
    structuredContent: structured,
  };
}

function failed(
  error: { category: string; message: string; suggested_fix: string },
  structured: Record<string, unknown>,
): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: `${error.category}: ${error.message}\nwhat to do: ${error.suggested_fix}` },
    ],
    structuredContent: structured,
  };
}

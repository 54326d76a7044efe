/**
 * The SDK a Code Mode program is written against: TypeScript declarations of the tools the caller
 * may discover (the discovery policy's filter, as `/v1/tools` and MCP `tools/list` apply it), by
 * their model-facing names, each with its contract's description as a doc comment, its input
 * schema as the argument type and its output schema (when the contract declares one) as what the
 * call resolves to. Only declarations: the sandbox offers exactly these names, and every call is
 * decided by the policy again when it is made.
 */
import { docComment, propertyKey, typeOf } from "./schema-to-ts.ts";

export interface SdkTool {
  /** The model-facing name (default family), the property of `tools` a program calls. */
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /** The contract's output schema, when it declares one: what the call resolves to. */
  output_schema?: Record<string, unknown>;
  /** The canonical contract, for the doc comment. */
  contract: { name: string; version: string; side_effect: string };
}

const PREAMBLE = `// Writ Code Mode: the body of an async function. Call tools as \`await tools.<name>(args)\` (run
// several at once with Promise.all); \`return\` a JSON value, the run's result. Every call is
// authorized by policy when it is made: a refused call ends the run. No network, files, timers
// or environment; console.log lines are kept in the outcome.`;

/** The declarations for `tools`, in the order given. */
export function sdkDeclarations(tools: readonly SdkTool[]): string {
  const members = tools.map((tool) => {
    const doc = docComment(
      [
        tool.description,
        `contract ${tool.contract.name}@${tool.contract.version}, side effect: ${tool.contract.side_effect}`,
      ],
      "  ",
    );
    const args = typeOf(tool.input_schema, "  ");
    const output =
      tool.output_schema === undefined ? "Record<string, unknown>" : typeOf(tool.output_schema, "  ");
    return `${doc}  ${propertyKey(tool.name)}(args: ${args}): Promise<${output}>;\n`;
  });
  return `${PREAMBLE}

interface Tools {
${members.join("")}}

declare const tools: Tools;

declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
};
`;
}

/**
 * `initialize` (and `ping`, `logging/setLevel`): answered by the per-POST SDK server itself, with
 * what this module gives it: Writ's name, the capabilities `/mcp` offers, the instructions.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const SERVER_INFO = { name: "writ", version: "0.1.0" };
/**
 * The JSON Schema validator every per-POST server shares. The SDK would otherwise build a new Ajv
 * (its meta-schemas and formats) for each POST, the largest part of a server's construction; the
 * server uses it for elicitation answers only, which Writ's endpoint never asks for.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();
const INSTRUCTIONS =
  'Writ authorizes every tool call against policy. A refused call answers with isError and a structured error (category, message, suggested_fix): follow the fix. A call that needs approval answers approval_required with an approval id; once it is approved, call the same tool with the same arguments and _meta {"writ/approval": "<id>"}.';

/** A POST's server, before its methods are registered (methods/index.ts). */
export function newServer(): Server {
  return new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, logging: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: SCHEMA_VALIDATOR,
  });
}

/**
 * Stage 2 of the pipeline: a proposed call becomes a canonical action through its tool contract:
 * the contract it names, its declared paths in normal form (src/normalize/paths.ts), arguments
 * checked against the contract's JSON Schema, the resource it touches, and the digest of the
 * exact arguments.
 */
import type { ContractRegistry, SchemaViolation, ToolContract } from "../contracts/index.ts";
import { canonicalJson, sha256Hex } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { CanonicalAction, ProposedCall, ResourceRef } from "../core/types.ts";
import { closestNames } from "./closest-names.ts";
import { formatPointer, resolvePointer } from "./json-pointer.ts";
import { isTool, promptContract, resourceContract, resourceMatch } from "./mcp.ts";
import { normalizePaths, type PathRefusal } from "./paths.ts";

export interface NormalizedCall {
  contract: ToolContract;
  action: CanonicalAction;
  /** The resource the call touches; undefined when the contract declares none. */
  resource: ResourceRef | undefined;
  /** The resource revision the arguments expect (contract `resource.revision`), for compare-and-swap. */
  resourceRevision: string | undefined;
}

/** How many tool names an unknown-tool error suggests. */
const suggestionCount = 10;

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * A call naming no tool. Which tools to suggest instead depends on who asks, which stage 2 does
 * not know yet: by itself it points at the caller's tool list; `suggesting` (run once the caller
 * is known, with the names discovery shows them) lists the closest of those first. Never the
 * names of tools discovery hides from the caller (issue 27).
 */
export class UnknownToolError extends WritError {
  constructor(
    readonly call: Pick<ProposedCall, "tool" | "callId" | "source">,
    suggestedFix = "Call one of the tools you may use: GET /v1/tools (or tools/list over MCP) lists them.",
  ) {
    super("unknown_tool", `unknown tool ${JSON.stringify(call.tool)} (call ${call.callId})`, {
      fieldErrors: [{ path: "/tool", message: `no tool is named ${JSON.stringify(call.tool)}` }],
      suggestedFix,
    });
    this.name = "UnknownToolError";
  }

  /** The same refusal suggesting `names` (the tools the caller may see), closest first. */
  suggesting(names: readonly string[]): UnknownToolError {
    if (names.length === 0) {
      return new UnknownToolError(
        this.call,
        "No tool is available to you here: ask the operator for access to the tools you need.",
      );
    }
    const ranked = closestNames(this.call.tool, names);
    const shown = ranked.slice(0, suggestionCount).join(", ");
    const more = ranked.length > suggestionCount ? ` (and ${ranked.length - suggestionCount} more)` : "";
    return new UnknownToolError(
      this.call,
      `Call one of the tools you may use, closest first: ${shown}${more}.`,
    );
  }
}

function unknownTool(call: ProposedCall, registry: ContractRegistry): WritError {
  const versions = registry.versionsOf(call.tool);
  const where = [{ path: "/tool", message: `no tool is named ${JSON.stringify(call.tool)}` }];
  if (versions.length > 1) {
    return new WritError(
      "unknown_tool",
      `tool ${JSON.stringify(call.tool)} (call ${call.callId}) has several versions (${versions.join(", ")}) and the call names none`,
      {
        fieldErrors: [{ path: "/tool", message: `names ${versions.length} versions` }],
        suggestedFix: `Name one version, e.g. ${call.tool}@${versions.at(-1)}, or call the tool by its model-facing name.`,
      },
    );
  }
  if (registry.list().length === 0) {
    return new WritError("unknown_tool", `unknown tool ${JSON.stringify(call.tool)} (call ${call.callId})`, {
      fieldErrors: where,
      suggestedFix:
        "This gateway offers no tools yet: declare tool contracts in the tools section of its config.",
    });
  }
  return new UnknownToolError(call);
}

/** `required: a, b; allowed: a, b, c` from an object schema, or "" when it declares neither. */
function schemaSummary(schema: Record<string, unknown>): string {
  const { required, properties } = schema;
  const parts: string[] = [];
  if (Array.isArray(required) && required.length > 0) {
    parts.push(`required: ${required.filter((name) => typeof name === "string").join(", ")}`);
  }
  if (properties !== null && typeof properties === "object" && !Array.isArray(properties)) {
    const names = Object.keys(properties);
    if (names.length > 0) parts.push(`fields: ${names.join(", ")}`);
  }
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`;
}

function invalidArguments(
  call: ProposedCall,
  contract: ToolContract,
  violations: SchemaViolation[],
): WritError {
  const fieldErrors = violations.map((violation) => ({
    path: `/arguments${violation.pointer}`,
    message: violation.message,
  }));
  const [first] = fieldErrors;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : "";
  return new WritError(
    "invalid_argument",
    `the arguments of ${call.tool} (call ${call.callId}) do not match its input schema: ${first?.path} ${first?.message}${more}`,
    {
      fieldErrors,
      suggestedFix: `Fix the listed arguments and call ${call.tool} again with arguments matching its input schema${schemaSummary(contract.input_schema)}.`,
    },
  );
}

/** What to send instead of a refused path. */
function pathFix(refusal: PathRefusal): string {
  const { root, relative } = refusal.declaration;
  const where = `at /arguments${refusal.pointer}`;
  const inside = relative
    ? `a path inside ${root} (relative to it, e.g. docs/a.md, or absolute under it)`
    : `a path inside ${root} (absolute under it, or relative to it)`;
  switch (refusal.code) {
    case "outside_root":
    case "empty":
      return `send ${inside} ${where}`;
    case "backslash":
      return `send ${inside} ${where}, its parts separated by / (a backslash is refused, not read as a separator)`;
    case "control_character":
      return `send ${inside} ${where}, without control characters`;
    default:
      return `send ${inside} ${where}, percent-encoded at most once and never encoding / (or not encoded at all)`;
  }
}

/** The call's declared paths that cannot be normalized: refused before the policy sees them. */
function pathsRefused(call: ProposedCall, refusals: PathRefusal[]): WritError {
  const fieldErrors = refusals.map((refusal) => ({
    path: `/arguments${refusal.pointer}`,
    message: refusal.message,
  }));
  const [first] = fieldErrors;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : "";
  const fixes = [...new Set(refusals.map(pathFix))];
  return new WritError(
    "invalid_argument",
    `${call.tool} (call ${call.callId}) names a path Writ refuses: ${first?.path} ${first?.message}${more}`,
    {
      fieldErrors,
      suggestedFix: `Call ${call.tool} again: ${fixes.join("; ")}.`,
    },
  );
}

/**
 * The resource id or revision at `pointer` in the arguments: a non-empty string, or a number as its
 * JSON text; undefined when nothing is there.
 */
function identifierAt(call: ProposedCall, pointer: string, what: string): string | undefined {
  const lookup = resolvePointer(call.arguments, pointer);
  if (!lookup.found) return undefined;
  const { value } = lookup;
  if ((typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value))) {
    return String(value);
  }
  const path = `/arguments${pointer}`;
  throw new WritError(
    "invalid_argument",
    `the arguments of ${call.tool} (call ${call.callId}) name ${what} at ${path} with ${describeType(value)}`,
    {
      fieldErrors: [
        {
          path,
          message: `must be a non-empty string or a number naming ${what}, got ${describeType(value)}`,
        },
      ],
      suggestedFix: `Call ${call.tool} again with ${what} as a string at ${path}.`,
    },
  );
}

function resourceIdAt(call: ProposedCall, pointer: string, what: string): string {
  const id = identifierAt(call, pointer, what);
  if (id !== undefined) return id;
  const path = `/arguments${pointer}`;
  throw new WritError(
    "invalid_argument",
    `the arguments of ${call.tool} (call ${call.callId}) do not name ${what}: nothing at ${path}`,
    {
      fieldErrors: [{ path, message: `is required: it names ${what}` }],
      suggestedFix: `Call ${call.tool} again with ${what} at ${path}.`,
    },
  );
}

/** The digests `normalize` computed, by the arguments object it made (which nothing changes). */
const argsDigests = new WeakMap<Record<string, unknown>, string>();

/**
 * The digest of `args` when they are the arguments object `normalize` made (and digested) for a
 * call; undefined for any other object, whose digest is to be computed.
 */
export function normalizedArgsDigest(args: Record<string, unknown>): string | undefined {
  return argsDigests.get(args);
}

function digestOf(call: ProposedCall, args: Record<string, unknown>): string {
  try {
    return sha256Hex(canonicalJson(args));
  } catch (error) {
    throw new WritError(
      "invalid_argument",
      `the arguments of ${call.tool} (call ${call.callId}) are not plain JSON`,
      {
        fieldErrors: [{ path: "/arguments", message: "cannot be written as canonical JSON (RFC 8785)" }],
        suggestedFix:
          "Send arguments made only of JSON values: objects, arrays, strings, finite numbers, booleans, null.",
        cause: error,
      },
    );
  }
}

/**
 * The canonical action of `call` under its contract, its declared paths in normal form. Throws
 * `WritError`: `unknown_tool` when no contract has the name, `invalid_argument` (pointers under
 * `/arguments`) when a declared path is refused (outside its root, badly encoded, …), when the
 * arguments do not match the contract's input schema or do not name the contract's resource.
 */
export function normalize(call: ProposedCall, registry: ContractRegistry): NormalizedCall {
  const { contract, args: given } = governing(call, registry);
  const args = structuredClone(given);
  const paths = registry.pathsOf(contract);
  const refusals = paths === undefined ? [] : normalizePaths(args, paths);
  if (refusals.length > 0) throw pathsRefused(call, refusals);
  // Checked once normalized: the schema's pattern, enum, maxLength… apply to the path sent on.
  const violations = registry.checkInput(contract, args);
  if (violations.length > 0) throw invalidArguments(call, contract, violations);
  const digest = digestOf(call, args);
  argsDigests.set(args, digest);
  const action = canonicalAction(contract, args, digest);
  const declared = contract.resource;
  if (declared === undefined) return { contract, action, resource: undefined, resourceRevision: undefined };
  const what = `the ${declared.type} resource`;
  // The resource is named in the arguments as normalized (a URI's template variables included).
  const named = { ...call, arguments: args };
  const id = resourceIdAt(named, declared.id, what);
  const resourceRevision =
    declared.revision === undefined
      ? undefined
      : identifierAt(named, declared.revision, `the expected revision of ${what}`);
  return { contract, action, resource: { type: declared.type, id }, resourceRevision };
}

function unknownTarget(call: ProposedCall, what: string, listing: string): WritError {
  return new WritError("unknown_tool", `no contract governs the ${what} ${JSON.stringify(call.tool)}`, {
    fieldErrors: [{ path: "/tool", message: `no contract governs this ${what}` }],
    suggestedFix: `Ask for one that ${listing} shows you.`,
  });
}

/**
 * A resource read's arguments: `{uri, ...variables}` as the URI matched. Arguments given (through
 * the HTTP API) must agree with them: the policy sees the variables of the URI that is read.
 */
function resourceArguments(
  call: ProposedCall,
  contract: ToolContract,
  given: Record<string, unknown>,
): Record<string, unknown> {
  const uri = given.uri;
  const variables = typeof uri === "string" ? resourceMatch(contract, uri) : undefined;
  if (typeof uri !== "string" || variables === undefined) {
    const backend = contract.backend;
    const governed = backend.kind === "mcp_resource" ? backend.uri : "";
    throw new WritError("invalid_argument", `${call.tool} (call ${call.callId}) reads no URI it governs`, {
      fieldErrors: [{ path: "/arguments/uri", message: `must be a URI matching ${governed}` }],
      suggestedFix: `Call ${call.tool} again with arguments.uri a URI matching ${governed}.`,
    });
  }
  const args: Record<string, unknown> = { ...variables, uri };
  const disagree = Object.keys(given).filter(
    (key) => !Object.hasOwn(args, key) || canonicalJson(given[key]) !== canonicalJson(args[key]),
  );
  if (disagree.length > 0) {
    throw new WritError(
      "invalid_argument",
      `the arguments of ${call.tool} (call ${call.callId}) disagree with the URI ${uri}: ${disagree.join(", ")}`,
      {
        fieldErrors: disagree.map((key) => ({
          path: formatPointer(["arguments", key]),
          message: Object.hasOwn(args, key)
            ? `must be ${canonicalJson(args[key])}, as the URI says`
            : "is not a variable of the URI template",
        })),
        suggestedFix: `Send only {uri} (Writ reads the template's variables from it), or variables equal to the URI's.`,
      },
    );
  }
  return args;
}

/**
 * The contract a call names and its arguments. An MCP resource read is governed by the contract
 * matching its URI, a prompt by the contract naming it; a tool call names a tool (a resource or
 * prompt contract is called by name only through the canonical format, the HTTP API).
 */
function governing(
  call: ProposedCall,
  registry: ContractRegistry,
): { contract: ToolContract; args: Record<string, unknown> } {
  if (call.mcp === "resource") {
    const found = resourceContract(registry, call.tool);
    if (found === undefined)
      throw unknownTarget(call, "resource URI", "resources/list or resources/templates/list");
    return { contract: found.contract, args: { ...found.variables, uri: call.tool } };
  }
  if (call.mcp === "prompt") {
    const contract = promptContract(registry, call.tool);
    if (contract === undefined) throw unknownTarget(call, "prompt", "prompts/list");
    return { contract, args: call.arguments };
  }
  const contract = registry.resolve(call.tool, call.source);
  if (contract === undefined || (call.source !== "canonical" && !isTool(contract))) {
    throw unknownTool(call, registry);
  }
  if (contract.backend.kind === "mcp_resource") {
    return { contract, args: resourceArguments(call, contract, call.arguments) };
  }
  return { contract, args: call.arguments };
}

/** The canonical action of a call to `contract` with `args` (already validated) and their digest. */
export function canonicalAction(
  contract: ToolContract,
  args: Record<string, unknown>,
  argsDigest: string,
): CanonicalAction {
  return {
    name: contract.name,
    version: contract.version,
    side_effect: contract.side_effect,
    idempotency: contract.idempotency,
    data_classification: contract.data_classification,
    args,
    args_digest: argsDigest,
  };
}

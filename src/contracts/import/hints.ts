/**
 * What an imported tool's contract says about its effects, from the server's annotations
 * (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). MCP calls them hints: a
 * server's claims about itself, which clients are to treat as untrusted unless the server is
 * trusted. So every field taken from a hint is marked as such (the YAML says so beside
 * it), and where hints are not trusted (the default of `contracts: import` at serve) every tool
 * is `committing` with `idempotency: none`, whatever it claims: a policy must never treat a
 * destructive tool as read-only because its server said so.
 */
import type { ToolContract } from "../schema.ts";

/** A tool's annotations as MCP defines them (each optional). */
export interface ToolHints {
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
}

export interface EffectDefaults {
  side_effect: ToolContract["side_effect"];
  idempotency: ToolContract["idempotency"];
  /** Why each field has its value (a YAML comment beside it). */
  notes: { side_effect: string; idempotency: string };
  /** What else the hints say (openWorldHint), for the contract's heading comment. */
  remarks: string[];
}

const CLAIM = "a claim, not a fact; review before trusting it";
const CONSERVATIVE = "Writ's conservative default for an imported tool";

/** The effect fields of an imported tool: from its hints when `trust`, else the conservative ones. */
export function effectDefaults(hints: ToolHints | undefined, trust: boolean): EffectDefaults {
  const given = hints ?? {};
  const remarks = openWorldRemark(given);
  if (!trust) {
    const why = `${CONSERVATIVE} (the server's hints are not trusted)`;
    return {
      side_effect: "committing",
      idempotency: "none",
      notes: { side_effect: why, idempotency: why },
      remarks,
    };
  }
  if (given.readOnlyHint === true) {
    const note = `from the server's readOnlyHint: ${CLAIM}`;
    return {
      side_effect: "none",
      idempotency: "natural",
      notes: { side_effect: note, idempotency: note },
      remarks,
    };
  }
  const side_effect =
    given.destructiveHint === false
      ? `the server claims additive updates only (destructiveHint: false); kept committing, which Writ cannot undo: ${CLAIM}`
      : given.readOnlyHint === false || given.destructiveHint === true
        ? `from the server's destructiveHint (${given.destructiveHint === true ? "true" : "absent: MCP's default is true"}): ${CLAIM}`
        : `${CONSERVATIVE}: the server gives no readOnlyHint or destructiveHint`;
  if (given.idempotentHint === true) {
    return {
      side_effect: "committing",
      idempotency: "natural",
      notes: { side_effect, idempotency: `from the server's idempotentHint: ${CLAIM}` },
      remarks,
    };
  }
  const idempotency =
    given.idempotentHint === false
      ? "from the server's idempotentHint: false (repeating a call may repeat its effect)"
      : `${CONSERVATIVE}: the server gives no idempotentHint`;
  return { side_effect: "committing", idempotency: "none", notes: { side_effect, idempotency }, remarks };
}

function openWorldRemark(hints: ToolHints): string[] {
  if (hints.openWorldHint === false) {
    return [`openWorldHint: false: the server says this tool stays within its own data (${CLAIM})`];
  }
  return [
    `openWorldHint: ${hints.openWorldHint === true ? "true" : "absent (MCP's default is true)"}: the tool may reach systems beyond the server (the web, other services)`,
  ];
}

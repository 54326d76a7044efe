/**
 * The configuration and policy that put Writ in front of the notes MCP server (test/support/
 * mcp-notes.ts): four contracts on the `notes` server, and a decision policy where viewers read,
 * editors also delete and archive, and publishing needs a moderator's approval.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { lateGrantKeys } from "../support/late-grant-keys.ts";
import { type NotesHttpServer, startNotesHttpServer } from "../support/mcp-notes-http.ts";
import { startV2Upstream, type V2Upstream } from "../support/mcp-v2-upstream.ts";

export const NOTES_POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

allow_once := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}}

editor if "editor" in input.subject.roles

reader if {
	some role in input.subject.roles
	role in {"viewer", "editor"}
}

approved if {
	approval := input.context.approval
	approval.approver.id != input.subject.id
	"moderator" in approval.approver.roles
}

decision := allow_once if {
	input.action.name == "notes.read"
	reader
} else := allow_once if {
	input.action.name in {"notes.delete", "notes.archive"}
	editor
} else := {"decision": "deny", "reasons": [{"code": "editors_only", "message": "only editors change notes", "visible_to_model": true}]} if {
	input.action.name in {"notes.delete", "notes.archive", "notes.publish"}
	not editor
} else := allow_once if {
	input.action.name == "notes.publish"
	approved
} else := {
	"decision": "require_approval",
	"reasons": [{"code": "approval_required", "message": "publishing needs a moderator", "visible_to_model": true}],
	"approval": {"approver_roles": ["moderator"], "ttl_seconds": 600},
} if {
	input.action.name == "notes.publish"
}
`;

const idSchema = {
  type: "object",
  properties: { id: { type: "string", minLength: 1 } },
  required: ["id"],
  additionalProperties: false,
};

function contract(
  name: string,
  tool: string,
  side_effect: "none" | "reversible" | "committing",
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    version: "1",
    description: `${name} on the notes server`,
    input_schema: idSchema,
    side_effect,
    idempotency: side_effect === "none" ? "natural" : "none",
    backend: { kind: "mcp", server: "notes", tool },
    model_views: [{ family: "mcp", name: tool }],
    ...extra,
  };
}

export const NOTES_CONTRACTS = [
  contract("notes.read", "read_note", "none", {
    output_schema: {
      type: "object",
      properties: { id: { type: "string" }, text: { type: "string" } },
      required: ["id", "text"],
    },
  }),
  contract("notes.delete", "delete_note", "committing"),
  contract("notes.publish", "publish_note", "committing", {
    input_schema: {
      type: "object",
      properties: { id: { type: "string" }, text: { type: "string" } },
      required: ["id", "text"],
      additionalProperties: false,
    },
  }),
  contract("notes.archive", "archive_note", "reversible"),
];

/** A folder holding the notes policy (writ/decision.rego). */
export async function notesPolicyDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-policy-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), NOTES_POLICY);
  return dir;
}

/** A `configure` hook for startTestGateway: the notes contracts, the server, the notes policy. */
export function withNotes(server: Record<string, unknown>, policyDir: string) {
  return (document: Record<string, unknown>): Record<string, unknown> => {
    const tools = Array.isArray(document.tools) ? document.tools : [];
    const policy = typeof document.policy === "object" && document.policy !== null ? document.policy : {};
    return {
      ...document,
      tools: [...tools, ...NOTES_CONTRACTS],
      mcp: { servers: [{ name: "notes", ...server }] },
      policy: { ...policy, dir: policyDir },
    };
  };
}

/**
 * A gateway serving the notes contracts (and `extraTools`) from `policyDir`, fronting the v2
 * test upstream over HTTP; the upstream checks grants against the gateway's keys, bound once it
 * listens. The caller closes both.
 */
export async function startNotesOnV2Upstream(
  policyDir: string,
  extraTools: readonly unknown[] = [],
): Promise<{ gw: TestGateway; upstream: V2Upstream }> {
  const { keys, bind } = lateGrantKeys();
  const upstream = await startV2Upstream(keys);
  const notes = withNotes({ transport: "http", url: upstream.url }, policyDir);
  const gw = await startTestGateway({
    configure: (document) => {
      const configured = notes(document);
      const tools = Array.isArray(configured.tools) ? configured.tools : [];
      return { ...configured, tools: [...tools, ...extraTools] };
    },
  });
  bind(gw.jwksUrl);
  return { gw, upstream };
}

/**
 * A gateway in front of the notes server over Streamable HTTP (test/support/mcp-notes-http.ts),
 * which checks grants against the gateway's keys, bound once it listens. The caller closes both.
 */
export async function startNotesOverHttp(
  policyDir: string,
): Promise<{ gw: TestGateway; http: NotesHttpServer }> {
  const { keys, bind } = lateGrantKeys();
  const http = await startNotesHttpServer(keys);
  const gw = await startTestGateway({
    configure: withNotes({ transport: "http", url: http.url }, policyDir),
  });
  bind(gw.jwksUrl);
  return { gw, http };
}

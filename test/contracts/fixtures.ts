/** Tool contracts as they would be written in the `tools:` section of a gateway config. */
import type { ToolContractInput } from "../../src/contracts/index.ts";

export function repoRead(): ToolContractInput {
  return {
    name: "repo.read",
    version: "1",
    description: "Read a file from a repository.",
    input_schema: {
      type: "object",
      properties: {
        repo: { type: "string", minLength: 1 },
        path: { type: "string" },
        ref: { type: "string" },
      },
      required: ["repo", "path"],
      additionalProperties: false,
    },
    output_schema: {
      type: "object",
      properties: { content: { type: "string" }, revision: { type: "string" } },
      required: ["content"],
    },
    side_effect: "none",
    idempotency: "natural",
    resource: { type: "repo", id: "/repo" },
    backend: {
      kind: "http",
      method: "GET",
      url: "https://git.internal/api/read",
      credentials_ref: "git-reader",
    },
    model_views: [{ family: "openai", name: "read_file", description: "Read one file." }],
  };
}

export function repoWrite(): ToolContractInput {
  return {
    name: "repo.write",
    version: "1",
    description: "Write a file in a repository.",
    input_schema: {
      type: "object",
      properties: {
        repo: { type: "string" },
        path: { type: "string" },
        content: { type: "string" },
        expected_revision: { type: "string" },
      },
      required: ["repo", "path", "content"],
      additionalProperties: false,
    },
    side_effect: "committing",
    idempotency: "keyed",
    resource: { type: "file", id: "/path", revision: "/expected_revision" },
    data_classification: "confidential",
    timeout_ms: 30_000,
    retry: { attempts: 3, backoff_ms: 200 },
    concurrency_group: "repo-writes",
    backend: { kind: "mcp", server: "git", tool: "write_file" },
  };
}

export function ticketsSearch(): ToolContractInput {
  return {
    name: "tickets.search",
    version: "2",
    description: "Search tickets.",
    input_schema: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 50 } },
      required: ["query"],
    },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "inprocess", handler: "tickets.search" },
    model_views: [
      { family: "default", name: "search_tickets" },
      {
        family: "anthropic",
        name: "find_tickets",
        description: "Find support tickets by text.",
        input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      },
    ],
  };
}

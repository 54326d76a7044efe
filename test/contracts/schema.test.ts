import { describe, expect, it } from "vitest";
import { parseToolContracts } from "../../src/contracts/index.ts";
import { errorOf } from "../intake/helpers.ts";
import { repoRead, repoWrite, ticketsSearch } from "./fixtures.ts";

describe("parseToolContracts", () => {
  it("applies the defaults", () => {
    const [read, write] = parseToolContracts([repoRead(), repoWrite()]);
    expect(read).toMatchObject({ data_classification: "internal", timeout_ms: 10_000 });
    expect(write).toMatchObject({ data_classification: "confidential", timeout_ms: 30_000, model_views: [] });
  });

  it("names each problem by its pointer under the given prefix", () => {
    const error = errorOf(() =>
      parseToolContracts(
        [
          { ...repoRead(), owner: "platform" },
          { ...ticketsSearch(), side_effect: "maybe" },
        ],
        "/tools",
      ),
    );
    expect(error.category).toBe("invalid_argument");
    expect(error.field_errors).toEqual([
      { path: "/tools/0/owner", message: 'unknown field "owner"' },
      {
        path: "/tools/1/side_effect",
        message: 'must be "none" or "reversible" or "committing", got "maybe"',
      },
    ]);
    expect(error.message).toBe(
      'the tool contracts are invalid: /tools/0/owner: unknown field "owner" (and 1 more)',
    );
    expect(error.suggested_fix).toMatch(/tools section of the gateway config/);
  });

  it("checks names, pointers, schemas and backends", () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ name: "repo read" }, "/0/name", /dotted segments/],
      [
        { model_views: [{ family: "openai", name: "read.file" }] },
        "/0/model_views/0/name",
        /1 to 64 letters/,
      ],
      [{ model_views: [{ family: "gemini", name: "x" }] }, "/0/model_views/0/family", /must be "default"/],
      [{ resource: { type: "repo", id: "repo" } }, "/0/resource/id", /JSON Pointer/],
      [{ resource: { type: "repo", id: "/a~2b" } }, "/0/resource/id", /JSON Pointer/],
      [{ input_schema: { type: "array" } }, "/0/input_schema/type", /must be "object"/],
      [{ backend: { kind: "grpc", target: "x" } }, "/0/backend/kind", /Invalid discriminator/],
      [
        { backend: { kind: "http", method: "GET", url: "javascript:alert(1)" } },
        "/0/backend/url",
        /http or https/,
      ],
      [
        {
          backend: {
            kind: "http",
            method: "GET",
            url: "https://x",
            headers: { Authorization: "Bearer s3cr3t" },
          },
        },
        "/0/backend/headers/Authorization",
        /credentials_ref/,
      ],
      [{ idempotency: "none", retry: { attempts: 3, backoff_ms: 10 } }, "/0/retry", /idempotent/],
      [
        {
          model_views: [
            { family: "openai", name: "a" },
            { family: "openai", name: "b" },
          ],
        },
        "/0/model_views/1/family",
        /one view per family/,
      ],
    ];
    for (const [change, path, message] of cases) {
      const error = errorOf(() => parseToolContracts([{ ...repoRead(), ...change }]));
      expect(error.field_errors, JSON.stringify(change)).toHaveLength(1);
      expect(error.field_errors[0]?.path, JSON.stringify(change)).toBe(path);
      expect(error.field_errors[0]?.message, JSON.stringify(change)).toMatch(message);
    }
  });
});

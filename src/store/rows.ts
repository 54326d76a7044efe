/**
 * What every store checks the same way: values going in as JSON text, rows coming back out
 * (parsed with zod, never trusted because they came from our own database), and the versions of
 * its schema migrations.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";

export const versionRowSchema = z.object({ version: z.number().int() });
export const lastRowSchema = z.object({ seq: z.number().int().positive(), hash: z.string() });

/** JSON text read back from a column, parsed (a custom issue when it is not JSON); pipe it to its shape. */
export const storedJsonText = z.string().transform((text, ctx): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    ctx.addIssue({ code: "custom", message: "not JSON" });
    return z.NEVER;
  }
});

export function validDate(date: Date): boolean {
  return date instanceof Date && !Number.isNaN(date.getTime());
}

/** JSON text of a value, or `invalid_argument` naming where it is not JSON. */
export function jsonText(value: unknown, pointer: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new WritError("invalid_argument", `${pointer} is not JSON: ${String(error)}`, {
      fieldErrors: [{ path: pointer, message: "not serializable as JSON" }],
      suggestedFix: "pass plain JSON data (no cycles, no BigInt)",
      cause: error,
    });
  }
  if (text === undefined) {
    throw new WritError("invalid_argument", `${pointer} is not JSON`, {
      fieldErrors: [{ path: pointer, message: "not serializable as JSON" }],
      suggestedFix: "pass plain JSON data",
    });
  }
  return text;
}

export function parseStored<T>(schema: z.ZodType<T>, row: unknown, what: string): T {
  const parsed = schema.safeParse(row);
  if (!parsed.success) {
    throw new WritError(
      "internal",
      `${what} in the database is malformed: ${z.prettifyError(parsed.error)}`,
      {
        suggestedFix: "the database was changed outside Writ or by a newer release: restore it from a backup",
      },
    );
  }
  return parsed.data;
}

/**
 * The versions listed in `schema_migrations`; refuses a database that a newer Writ migrated
 * (`suggestedFix` says which release to run).
 */
export function appliedVersions(
  rows: readonly unknown[],
  migrations: readonly { version: number }[],
  location: string,
  suggestedFix: string,
): Set<number> {
  const applied = new Set(
    rows.map((row) => parseStored(versionRowSchema, row, "a schema_migrations row").version),
  );
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const newest = Math.max(0, ...applied);
  if (newest > known) {
    throw new WritError(
      "internal",
      `the database at ${location} has schema version ${newest}, newer than this Writ knows (${known})`,
      { suggestedFix },
    );
  }
  return applied;
}

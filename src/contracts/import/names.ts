/**
 * The names an imported contract gets: canonical `<server>.<tool>` (resources and prompts
 * `<server>.resource.<name>`, `<server>.prompt.<name>`), and the server's own tool name as the
 * model-facing name, so that callers see the tools as the server names them. Characters a
 * contract name cannot hold become `_`, and a name past 64 characters is cut and given a short
 * digest of the original, so that two long names stay apart.
 */
import { createHash } from "node:crypto";

const MAX = 64;

/** `name` with every character outside `[A-Za-z0-9_-]` (and `.` when `dots`) replaced by `_`. */
function cleaned(name: string, dots: boolean): string {
  const safe = name.replace(dots ? /[^A-Za-z0-9_.-]/g : /[^A-Za-z0-9_-]/g, "_");
  // Dotted segments must not be empty: `a..b`, `.a`, `a.` would not be a canonical name.
  const segments = dots ? safe.split(".").map((segment) => (segment === "" ? "_" : segment)) : [safe];
  return segments.join(".") || "_";
}

/** `name` cut to `max` characters with a digest of `original` at the end when it is longer. */
function fitted(name: string, original: string, max = MAX): string {
  if (name.length <= max) return name;
  const digest = createHash("sha256").update(original).digest("hex").slice(0, 8);
  return `${name.slice(0, max - digest.length - 1)}-${digest}`;
}

/** The canonical name of an imported tool, resource or prompt of `server`. */
export function canonicalName(server: string, kind: "tool" | "resource" | "prompt", name: string): string {
  const prefix = kind === "tool" ? cleaned(server, true) : `${cleaned(server, true)}.${kind}`;
  return fitted(`${prefix}.${cleaned(name, false)}`, `${server}\u0000${kind}\u0000${name}`);
}

/** The model-facing name of an imported tool: its own name where a model accepts it. */
export function modelName(tool: string): string {
  return fitted(cleaned(tool, false), tool);
}

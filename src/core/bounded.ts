/**
 * Strings a caller or a policy controls, bounded before Writ repeats them: in reasons, error
 * messages and field errors. A longer text keeps its start and says how much was left out, with
 * the SHA-256 of the whole, so the log can still tell two long inputs apart. Bounding a bounded
 * text changes nothing.
 */
import { createHash } from "node:crypto";

/** Longest message or reason Writ repeats whole. */
export const MESSAGE_LIMIT = 2048;
/** Longest code, path or name Writ repeats whole. */
export const NAME_LIMIT = 256;

export function bounded(text: string, limit: number = MESSAGE_LIMIT): string {
  if (text.length <= limit) return text;
  const kept = Math.floor(limit / 2);
  const digest = createHash("sha256").update(text).digest("hex");
  return `${text.slice(0, kept)}… (${text.length - kept} more characters; sha256 ${digest})`;
}

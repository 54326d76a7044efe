/**
 * Secret detectors: patterns for credentials that end up in tool arguments (a token pasted into a
 * shell command, a key file read into a string), and object keys whose values are secrets by
 * name. A detector replaces only the secret inside a string, so the rest stays readable.
 */

export const MASK = "[masked]";

interface Detector {
  name: string;
  pattern: RegExp;
  replacement: string;
}

/** Applied in this order: the wide ones (PEM blocks, JWTs) first so that nothing inside them is half-masked. */
const detectors: readonly Detector[] = [
  {
    name: "pem_private_key",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replacement: MASK,
  },
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, replacement: MASK },
  { name: "bearer", pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*/gi, replacement: `$1 ${MASK}` },
  { name: "aws_access_key_id", pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replacement: MASK },
  {
    name: "aws_secret_access_key",
    pattern: /((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi,
    replacement: `$1${MASK}`,
  },
  {
    name: "github_token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
    replacement: MASK,
  },
  { name: "slack_token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replacement: MASK },
  { name: "openai_key", pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g, replacement: MASK },
];

/**
 * A text no detector can match does not match this: every detector's match contains one of these
 * (its literal start, or its keyword), and the `i` flag only widens the case-sensitive ones. Most
 * strings fail it, and skip the eight passes.
 */
const mayHoldSecret =
  /-----BEGIN |eyJ|bearer|AKIA|ASIA|secret_?access_?key|gh[pousr]_|github_pat_|xox[abprs]-|sk-/i;

/** The string with every detected secret replaced by the mask (the same string when none was found). */
export function scrubString(text: string): string {
  if (!mayHoldSecret.test(text)) return text;
  let out = text;
  for (const detector of detectors) out = out.replace(detector.pattern, detector.replacement);
  return out;
}

/** The names of the detectors that fire on `text` (for diagnostics and tests). */
export function detectSecrets(text: string): string[] {
  return detectors.filter((detector) => text.replace(detector.pattern, "") !== text).map((d) => d.name);
}

const sensitiveKeyParts = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "authorization",
  "cookie",
  "privatekey",
];

/**
 * Whether an object key names a secret: case-insensitive, ignoring `-`, `_`, `.` and spaces, and
 * matching anywhere in the key (`X-Api-Key`, `db_password_confirmation`, `aws_secret_access_key`).
 */
export function isSensitiveKey(key: string): boolean {
  let sensitive = sensitiveKeys.get(key);
  if (sensitive === undefined) {
    const normalized = key.toLowerCase().replace(/[-_. ]/g, "");
    sensitive = sensitiveKeyParts.some((part) => normalized.includes(part));
    // The same few keys come back in every call's input; a flood of new ones starts it over, and
    // a long key (what a caller sends) is not kept.
    if (key.length <= SENSITIVE_KEY_CACHED_LENGTH) {
      if (sensitiveKeys.size >= SENSITIVE_KEYS_CACHED) sensitiveKeys.clear();
      sensitiveKeys.set(key, sensitive);
    }
  }
  return sensitive;
}

const SENSITIVE_KEYS_CACHED = 1024;
const SENSITIVE_KEY_CACHED_LENGTH = 64;
const sensitiveKeys = new Map<string, boolean>();

/**
 * One path in normal form under its root: a table of the cases the issue names, and properties
 * over generated paths (always inside the root, a fixed point, in the form `format: path` checks).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isNormalPath, type PathDeclaration } from "../../src/contracts/paths.ts";
import { normalizePath } from "../../src/normalize/path.ts";

const docs: PathDeclaration = { root: "/srv/docs", relative: false };
const workspace: PathDeclaration = { root: "/", relative: true };

describe("normalizePath", () => {
  it.each([
    ["a/./b", "/srv/docs/a/b"],
    ["a//b/", "/srv/docs/a/b"],
    ["./a", "/srv/docs/a"],
    [".", "/srv/docs"],
    ["/srv/docs", "/srv/docs"],
    ["/srv/docs/", "/srv/docs"],
    ["/srv/docs//a/../b", "/srv/docs/b"],
    ["a/../b", "/srv/docs/b"],
    ["../docs/a", "/srv/docs/a"],
    ["%2e%2e/docs/x", "/srv/docs/x"],
    ["a%20b.md", "/srv/docs/a b.md"],
    ["caf\u0065\u0301.md", "/srv/docs/caf\u00e9.md"],
    ["caf%65%CC%81.md", "/srv/docs/caf\u00e9.md"],
    ["~/x", "/srv/docs/~/x"],
  ])("%j becomes %j under /srv/docs", (raw, expected) => {
    expect(normalizePath(raw, docs)).toEqual({ ok: true, path: expected });
  });

  it.each([
    ["./src//sum.ts", "src/sum.ts"],
    ["/README.md", "README.md"],
    ["src/../README.md", "README.md"],
    ["src/", "src"],
    ["./", "."],
    ["/", "."],
  ])("%j becomes %j relative to /", (raw, expected) => {
    expect(normalizePath(raw, workspace)).toEqual({ ok: true, path: expected });
  });

  it.each(["../.env", "/../.env", "src/../../.env", "%2e%2e/.env"])(
    "refuses %j, which climbs out of the root /",
    (raw) => {
      expect(normalizePath(raw, workspace)).toEqual({
        ok: false,
        code: "outside_root",
        message: "climbs out of / with ..",
      });
    },
  );

  it("writes NFC and NFD alike", () => {
    const nfc = normalizePath("r\u00e9sum\u00e9.txt", docs);
    const nfd = normalizePath("re\u0301sume\u0301.txt", docs);
    expect(nfc).toEqual(nfd);
    expect(nfc).toEqual({ ok: true, path: "/srv/docs/r\u00e9sum\u00e9.txt" });
  });

  it.each([
    ["", "empty"],
    ["a/../../x", "outside_root"],
    ["%2e%2e/x", "outside_root"],
    ["../../../../../x", "outside_root"],
    ["/srv/docs/../secret", "outside_root"],
    ["/srv/docsecret", "outside_root"],
    ["/etc/passwd", "outside_root"],
    ["..", "outside_root"],
    ["%2e%2e/%2e%2e/x", "outside_root"],
    ["%2E%2E%2Fsecret", "encoded_separator"],
    ["a%2fb", "encoded_separator"],
    ["%252e%252e/x", "double_encoding"],
    ["a%25b", "double_encoding"],
    ["100%", "bad_encoding"],
    ["%zz", "bad_encoding"],
    ["%ff", "bad_encoding"],
    ["a\u0000b", "control_character"],
    ["a%00b", "control_character"],
    ["a\nb", "control_character"],
    ["a%0Ab", "control_character"],
    ["a\u007fb", "control_character"],
    ["a\u0085b", "control_character"],
    ["a\\b", "backslash"],
    ["..\\..\\secret", "backslash"],
    ["a%5Cb", "backslash"],
  ])("refuses %j (%s)", (raw, code) => {
    const result = normalizePath(raw, docs);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.code).toBe(code);
  });

  it("says where an escaping path resolves", () => {
    expect(normalizePath("/srv/docs/../secret", docs)).toEqual({
      ok: false,
      code: "outside_root",
      message: "resolves to /srv/secret, outside /srv/docs",
    });
  });
});

/** Path-like strings made of the pieces that matter: dots, slashes, encodings, NFD, controls. */
const piece = fc.constantFrom(
  "",
  ".",
  "..",
  "a",
  "b.md",
  "srv",
  "docs",
  "%2e",
  "%2E%2e",
  "%25",
  "%2f",
  "%",
  "\\",
  "\u0000",
  "e\u0301",
  "\u00e9",
  "~",
  " ",
);
const pathLike = fc.oneof(
  fc.array(piece, { maxLength: 8 }).map((parts) => parts.join("/")),
  fc
    .tuple(fc.boolean(), fc.constantFrom("/", "//"), fc.array(piece, { maxLength: 8 }))
    .map(([absolute, separator, parts]) => `${absolute ? "/" : ""}${parts.join(separator)}`),
  fc.string({ unit: "binary", maxLength: 24 }),
);
const declaration = fc.record({
  root: fc.constantFrom("/", "/srv", "/srv/docs", "/srv/d\u00e9j\u00e0"),
  relative: fc.boolean(),
});

function inside(result: string, { root, relative }: PathDeclaration): boolean {
  if (relative) return !result.startsWith("/") && result.split("/").every((part) => part !== "..");
  return result === root || result.startsWith(root === "/" ? "/" : `${root}/`);
}

describe("normalizePath properties", () => {
  it("gives a path inside the root, in normal form, that normalizes to itself", () => {
    fc.assert(
      fc.property(pathLike, declaration, (raw, decl) => {
        const result = normalizePath(raw, decl);
        if (!result.ok) return;
        expect(inside(result.path, decl)).toBe(true);
        expect(isNormalPath(result.path)).toBe(true);
        expect(normalizePath(result.path, decl)).toEqual(result);
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves a path that isNormalPath accepts as it is", () => {
    fc.assert(
      fc.property(pathLike, (raw) => {
        if (!isNormalPath(raw)) return;
        const result = normalizePath(raw, { root: "/", relative: !raw.startsWith("/") });
        expect(result).toEqual({ ok: true, path: raw });
      }),
      { numRuns: 1000 },
    );
  });
});

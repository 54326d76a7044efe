/** Imports as OPA's writer orders them: groups of adjacent lines, each sorted by path, then alias. */
import type { FImport, FTerm } from "./tree.ts";

export function groupImports(imports: FImport[]): FImport[][] {
  const groups: FImport[][] = [];
  let group: FImport[] = [];
  for (const imp of imports) {
    const last = group[group.length - 1];
    if (last !== undefined && imp.loc.row - last.loc.row > 1) {
      groups.push(group);
      group = [];
    }
    group.push(imp);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** OPA's `Import.Compare`: by path (element by element, then length), then alias. */
export function compareImports(a: FImport, b: FImport): number {
  const left = pathParts(a.path);
  const right = pathParts(b.path);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const cmp = compareStrings(left[i]!, right[i]!);
    if (cmp !== 0) return cmp;
  }
  if (left.length !== right.length) return left.length - right.length;
  return compareStrings(a.alias ?? "", b.alias ?? "");
}

export function pathParts(path: FTerm): string[] {
  const terms = path.value.kind === "ref" ? path.value.terms : [path];
  return terms.map((term) =>
    term.value.kind === "var" ? term.value.name : term.value.kind === "string" ? term.value.value : "",
  );
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

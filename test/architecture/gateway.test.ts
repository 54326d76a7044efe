/**
 * `Gateway` (src/core/gateway.ts) names each part by the interface its consumers use, declared
 * beside the class that implements it, never by that class: every name gateway.ts imports is an
 * interface or a type alias (resolved with the TypeScript checker, through the modules'
 * re-exports), and it declares no class of its own. Consumers then depend on what they use, and a
 * test or another implementation can stand in for a part without its private state.
 */
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";

const gatewayFile = path.join(repoRoot, "src/core/gateway.ts");

/** Every name gateway.ts imports, with the kinds of the declarations it resolves to. */
function importedNames(): { name: string; kinds: ts.SyntaxKind[] }[] {
  const program = ts.createProgram([gatewayFile], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(gatewayFile);
  if (source === undefined) throw new Error(`${gatewayFile} was not read`);
  const names: { name: string; kinds: ts.SyntaxKind[] }[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings === undefined || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      const local = checker.getSymbolAtLocation(element.name);
      if (local === undefined) throw new Error(`${element.name.text} does not resolve`);
      const target = local.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(local) : local;
      names.push({ name: element.name.text, kinds: (target.declarations ?? []).map((d) => d.kind) });
    }
  }
  return names;
}

describe("the Gateway type", () => {
  it("names its parts by interfaces and type aliases, not by the classes behind them", () => {
    const names = importedNames();
    // The gateway's parts and views: a reading that found nothing would prove nothing.
    expect(names.length).toBeGreaterThan(20);
    for (const { name, kinds } of names)
      expect(kinds.length, `${name} resolves to a declaration`).toBeGreaterThan(0);
    const isTypeOnly = (kind: ts.SyntaxKind) =>
      kind === ts.SyntaxKind.InterfaceDeclaration || kind === ts.SyntaxKind.TypeAliasDeclaration;
    const classes = names.filter(({ kinds }) => !kinds.every(isTypeOnly)).map(({ name }) => name);
    expect(classes).toEqual([]);
  });

  it("declares no class itself", () => {
    const source = ts.createSourceFile(
      gatewayFile,
      ts.sys.readFile(gatewayFile) ?? "",
      ts.ScriptTarget.Latest,
      false,
    );
    expect(source.statements.filter(ts.isClassDeclaration)).toEqual([]);
  });
});

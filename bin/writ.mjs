#!/usr/bin/env node
// Entry point of the `writ` command. An installed package runs the compiled JavaScript in dist/
// (the package ships no src/); a checkout runs the TypeScript sources through tsx's loader, so
// `npm start`, the demo and the tests that spawn this file always run the current sources, never
// a dist/ left over from an earlier build. Either way nothing is loaded before the command needs
// it: the compiler (and binaryen, its code generator) only when a command compiles Rego.
import { existsSync } from "node:fs";
import { register as registerHooks } from "node:module";

const source = new URL("../src/cli/main.ts", import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  // Registered after tsx's, so asked first: dependencies' ES modules load natively, untransformed.
  registerHooks("./native-dependencies.mjs", import.meta.url);
  ({ main } = await import(source.href));
} else {
  ({ main } = await import("../dist/cli/main.js"));
}
process.exitCode = await main(process.argv.slice(2));

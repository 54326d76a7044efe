#!/usr/bin/env node
// Entry point of the `writ` command. An installed package runs the compiled JavaScript in dist/
// (the package ships no src/); a checkout runs the TypeScript sources through tsx's loader, so
// `npm start`, the demo and the tests that spawn this file always run the current sources, never
// a dist/ left over from an earlier build.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/main.ts", import.meta.url);
let main;
if (existsSync(source)) {
  // binaryen (the compiler's code generator) is imported natively first: through tsx's loader
  // its 13 MB bundle would be transformed on every start (seconds instead of a quarter second),
  // and once loaded the compiler's own `import binaryen` finds it in the module cache.
  await import("binaryen");
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import("../dist/cli/main.js"));
}
process.exitCode = await main(process.argv.slice(2));

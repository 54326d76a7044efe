#!/usr/bin/env node
// Entry point of the `writ` command. Writ ships TypeScript sources and runs them through tsx's
// loader, so there is no separate build step between `npm install` and `writ`.
//
// binaryen (the compiler's code generator) is imported natively first: through tsx's loader its
// 13 MB bundle would be transformed on every start (seconds instead of a quarter second), and
// once loaded the compiler's own `import binaryen` finds it in the module cache.
await import("binaryen");
const { register } = await import("tsx/esm/api");

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));

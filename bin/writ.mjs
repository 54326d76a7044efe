#!/usr/bin/env node
// Entry point of the `writ` command. Writ ships TypeScript sources and runs them through tsx's
// loader, so there is no separate build step between `npm install` and `writ`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));

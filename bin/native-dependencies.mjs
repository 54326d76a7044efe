// Module loader hooks that bin/writ.mjs registers after tsx's in a checkout: the dependencies'
// ES modules under node_modules/ are compiled JavaScript, loaded as Node itself loads them rather
// than transformed by tsx (binaryen's 13 MB bundle takes tsx 25–30 s; natively a second).
import { readFile } from "node:fs/promises";

export async function load(url, context, nextLoad) {
  if (context.format === "module" && url.startsWith("file:") && url.includes("/node_modules/")) {
    return { format: "module", source: await readFile(new URL(url)), shortCircuit: true };
  }
  return nextLoad(url, context);
}

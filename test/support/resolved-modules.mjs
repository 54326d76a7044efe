// `node --import <this file> …`: appends the URL of every module the process resolves to the
// file named by WRIT_TEST_RESOLVED_MODULES, one a line, so that a test sees from outside which
// modules a command loaded. Registered first, its resolve hook runs after every other loader's
// (tsx's, bin/writ.mjs's), on the URL they settled on. Plain JavaScript: it runs under plain Node.
import { register } from "node:module";

const hooks = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(file, resolved.url + "\\n");
  return resolved;
}`;
const file = process.env.WRIT_TEST_RESOLVED_MODULES;
if (file) register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file } });

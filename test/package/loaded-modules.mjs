// Prints, as JSON, every module that importing process.argv[2] loads: the ES modules through a
// module.register() load hook (reported over a MessagePort from the hooks thread) and the
// CommonJS ones from require's cache. Plain JavaScript, so that it runs under plain Node against
// an installed package as well as under tsx against the sources.
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";
import { MessageChannel } from "node:worker_threads";

const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }`;
const { port1, port2 } = new MessageChannel();
const esm = [];
port1.on("message", (url) => esm.push(url));
register(`data:text/javascript,${encodeURIComponent(hooks)}`, {
  data: { port: port2 },
  transferList: [port2],
});
const target = process.argv[2] ?? "";
await import(/^[./]/.test(target) ? pathToFileURL(target).href : target);
// Messages from the hooks thread arrive asynchronously: wait until none came for a moment.
let count = -1;
while (count !== esm.length) {
  count = esm.length;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
port1.close();
const cjs = Object.keys(createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href);
console.log(JSON.stringify([...esm, ...cjs]));

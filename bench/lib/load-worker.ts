/**
 * The evenly paced load generator in a worker thread (`--client thread`): runs `runPaced` on its
 * own event loop, so that the client's work does not queue behind the server's on the event loop
 * being measured. It shares the machine's cores still. (autocannon has worker threads of its own.)
 */
import { parentPort } from "node:worker_threads";
import { type PacedRequest, runPaced } from "./load.ts";

parentPort?.on("message", async (request: PacedRequest) => {
  try {
    parentPort?.postMessage({ result: await runPaced(request.options) });
  } catch (error) {
    parentPort?.postMessage({
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
});

/** `npm run conformance -- …`: see main.ts for the arguments and exit codes. */
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));

/** Loopback ports for servers whose address must be known before they start. */
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";

/** Where the kernel's ephemeral ports start when it does not say (Linux's default). */
const DEFAULT_EPHEMERAL_LOW = 32_768;
/** The lowest port handed out here: above the ports services commonly use. */
const LOWEST = 10_000;

/**
 * A port on 127.0.0.1 that was free a moment ago, chosen below the kernel's ephemeral range: the
 * kernel hands ports of that range to every server listening on port 0 and every outgoing
 * connection, so a port taken from it could be given to another test's server between this
 * probe and the server it is meant for (seen in CI as "already in use"). Below the range, only
 * another caller of this function could choose it, at random, in a range of some 20,000 ports.
 */
export async function freePort(): Promise<number> {
  const below = await ephemeralLow;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${LOWEST} and ${below} after 100 tries`);
}

/** The first port of the kernel's ephemeral range (Linux's `ip_local_port_range`), read once. */
const ephemeralLow: Promise<number> = readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
  .catch(() => "")
  .then((text) => {
    const low = Number(text.trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
  });

/** Whether a server can listen on `port` of 127.0.0.1 now. */
function isFree(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

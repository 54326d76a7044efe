/** Reading a request body, with the failure that is the caller's said as such. */
import { WritError } from "./errors.ts";

/**
 * A request's body as text. A body that never arrives whole (the client went away, or sent it
 * slower than the server's request timeout) is the caller's failure, not Writ's: it is an
 * `invalid_argument`, not an internal error.
 */
export async function bodyText(req: Request): Promise<string> {
  try {
    return await req.text();
  } catch (error) {
    throw bodyNotWhole(error);
  }
}

/** The caller's failure to send a whole body (`error`, the reading's failure, is its cause). */
export function bodyNotWhole(error: unknown): WritError {
  if (error instanceof WritError) return error;
  return new WritError("invalid_argument", "the request body did not arrive whole", {
    suggestedFix: "send the whole body at once, within the server's request timeout",
    cause: error,
  });
}

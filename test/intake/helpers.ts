import { expect } from "vitest";
import { WritError, type WritErrorBody } from "../../src/core/errors.ts";

/** The body of the `WritError` that `run` throws (fails the test if it throws anything else). */
export function errorOf(run: () => unknown): WritErrorBody {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WritError);
    if (error instanceof WritError) return error.toJSON();
  }
  throw new Error("expected a WritError, but nothing was thrown");
}

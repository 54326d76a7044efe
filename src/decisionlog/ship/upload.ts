/**
 * One upload to an OPA-compatible decision-log service: `POST <service><resource>` with a gzipped
 * JSON array (`Content-Encoding: gzip`, `Content-Type: application/json`). Any 2xx acknowledges
 * every event in it; anything else is a failure the shipper retries.
 */
import { errorMessage } from "../../core/errors.ts";

/** Why an upload failed, as the failure metric's `reason` label. */
export type UploadFailureReason = "status" | "network" | "timeout";

export class UploadError extends Error {
  readonly reason: UploadFailureReason;
  constructor(reason: UploadFailureReason, message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = "UploadError";
    this.reason = reason;
  }
}

export interface UploadRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Aborts the upload (shutdown past its flush bound). */
  signal: AbortSignal;
}

export async function upload(request: UploadRequest): Promise<void> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: "POST",
      headers: {
        ...request.headers,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body: request.body,
      signal: AbortSignal.any([timeout, request.signal]),
      redirect: "error",
    });
  } catch (error) {
    if (timeout.aborted) {
      throw new UploadError("timeout", `no answer within ${request.timeoutMs} ms`, { cause: error });
    }
    const cause = error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : "";
    throw new UploadError("network", `${errorMessage(error)}${cause}`, { cause: error });
  }
  // The body is not used: drain it so that the connection can be reused.
  await response.body?.cancel().catch(() => {});
  if (response.status < 200 || response.status > 299) {
    throw new UploadError("status", `it answered HTTP ${response.status}`);
  }
}

/**
 * `decision_log.ship` in the gateway configuration: where the decision log is shipped, in OPA's
 * decision-log event format, with the names of OPA's own `decision_logs` settings where they mean
 * the same (https://www.openpolicyagent.org/docs/configuration#decision-logs): the service URL,
 * the `resource` path (`/logs` by default), and `reporting.upload_size_limit_bytes`,
 * `min_delay_seconds`, `max_delay_seconds`. Secrets come from `credentials:` (an environment
 * variable or a file), never from this section.
 */
import { z } from "zod";
import { witnessUrlSchema } from "../checkpoint-witness.ts";

/** What is wrong with a header name an upload would carry, or undefined when it may. */
function headerNameProblem(name: string): string | undefined {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return "must be an HTTP header name";
  if (/^content-(type|encoding|length)$/i.test(name)) {
    return "Content-Type, Content-Encoding and Content-Length are set by Writ";
  }
  return undefined;
}

export const shipConfigSchema = z
  .object({
    /** The decision-log service's base URL (OPA's `services[].url`). */
    service: witnessUrlSchema,
    /** The path entries are POSTed to under `service` (OPA's `decision_logs.resource`). */
    resource: z
      .string()
      .regex(/^\/[^?#]*$/, { error: "must be a path starting with /, e.g. /logs" })
      .default("/logs"),
    /** Credentials (a name under `credentials:`) sent with every upload, e.g. a bearer token. */
    credentials_ref: z.string().min(1).optional(),
    /** Other headers sent with every upload: not secrets (those belong under `credentials:`). */
    headers: z
      .record(z.string(), z.string().regex(/^[^\r\n\0]*$/, { error: "must be one line" }))
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers)) {
          const problem = headerNameProblem(name);
          if (problem !== undefined) ctx.addIssue({ code: "custom", path: [name], message: problem });
        }
      })
      .default({}),
    reporting: z
      .object({
        /** The largest gzipped body of one upload; a larger backlog goes in several uploads. */
        upload_size_limit_bytes: z.number().int().min(256).default(32_768),
        /**
         * How long the shipper waits when it has caught up before it looks for new entries, and
         * the first back-off step after a failed upload.
         */
        min_delay_seconds: z.number().positive().default(1),
        /** The longest back-off between failed uploads (they are retried forever). */
        max_delay_seconds: z.number().positive().default(60),
      })
      .strict()
      .prefault({})
      .refine((r) => r.min_delay_seconds <= r.max_delay_seconds, {
        message: "min_delay_seconds must not exceed max_delay_seconds",
      }),
    /** How long one upload may take before it counts as failed. */
    timeout_ms: z.number().int().positive().default(10_000),
    /**
     * How long the instance that ships holds its lease in the store; another instance on the same
     * store takes over when it lapses (the holder renews it at every upload or look).
     */
    lease_s: z.number().positive().default(30),
    /** On shutdown, how long the shipper may keep uploading what is left before it stops. */
    shutdown_flush_ms: z.number().int().nonnegative().default(5_000),
  })
  .strict()
  .refine((c) => c.lease_s * 1000 >= 2 * c.timeout_ms, {
    message: "lease_s must be at least twice timeout_ms, so that a lease outlives an upload",
  });
export type ShipConfig = z.output<typeof shipConfigSchema>;

/** The URL entries are POSTed to: `service` + `resource`. */
export function shipUrl(config: Pick<ShipConfig, "service" | "resource">): string {
  return `${config.service.replace(/\/+$/, "")}${config.resource}`;
}

/** Shipping the decision log to an OPA-compatible decision-log service (`decision_log.ship`). */
import type { MetricsRecorder } from "../../observability/metrics.ts";
import type { DecisionStore, LogShippingStore } from "../../store/types.ts";
import { type ShipConfig, shipUrl } from "./config.ts";
import { DecisionLogShipper } from "./shipper.ts";

export { firstBatch } from "./batch.ts";
export { type ShipConfig, shipConfigSchema, shipUrl } from "./config.ts";
export { DecisionLogShipper, type ShipperOptions } from "./shipper.ts";

/**
 * The gateway's shipper, started (undefined when `decision_log.ship` is not configured);
 * `credentials` resolves its `credentials_ref` to headers at each upload.
 */
export function startShipper(
  config: ShipConfig | undefined,
  store: DecisionStore & LogShippingStore,
  credentials: (ref: string) => Promise<Record<string, string>>,
  metrics?: MetricsRecorder,
): DecisionLogShipper | undefined {
  if (config === undefined) return undefined;
  const ref = config.credentials_ref;
  const shipper = new DecisionLogShipper({
    store,
    url: shipUrl(config),
    headers: async () => ({ ...config.headers, ...(ref === undefined ? {} : await credentials(ref)) }),
    limitBytes: config.reporting.upload_size_limit_bytes,
    minDelayMs: config.reporting.min_delay_seconds * 1000,
    maxDelayMs: config.reporting.max_delay_seconds * 1000,
    timeoutMs: config.timeout_ms,
    leaseMs: config.lease_s * 1000,
    flushMs: config.shutdown_flush_ms,
    ...(metrics === undefined ? {} : { metrics }),
  });
  shipper.start();
  return shipper;
}

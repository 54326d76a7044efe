/**
 * The issuers a configuration trusts: its `identity.issuers`, then the development issuer when it
 * is on (its key file created when missing). `writ serve` and the CLI's `--as` read the same list.
 */
import type { IssuerConfigInput } from "./config.ts";
import { DevIssuer } from "./dev-issuer.ts";

/** The configuration's `identity` section. */
export interface TrustSettings {
  issuers: readonly IssuerConfigInput[];
  dev_issuer: { enabled: boolean; key_file: string; issuer: string; audience: string };
}

export async function trustedIssuers(settings: TrustSettings): Promise<IssuerConfigInput[]> {
  const issuers = [...settings.issuers];
  const dev = settings.dev_issuer;
  if (dev.enabled) {
    const issuer = await DevIssuer.create({
      keyFile: dev.key_file,
      issuer: dev.issuer,
      audience: dev.audience,
    });
    issuers.push(issuer.issuerConfig());
  }
  return issuers;
}

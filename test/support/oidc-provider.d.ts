/** The part of oidc-provider 8 (untyped JavaScript) that test/support/oidc.ts uses. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
  export const errors: { InvalidTarget: new (description?: string) => Error };
}

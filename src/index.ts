/**
 * `writ`: run the gateway from your own Node program. Read a configuration (`loadConfig`, or
 * `parseConfig` for one already parsed from YAML), then `startGateway` to serve it over HTTP or
 * `createGateway` to assemble its parts without a server. Tool backends import `writ/executor`
 * instead; the Rego toolchain is `writ/rego`.
 */
export * from "./config/index.ts";
export { type ErrorCategory, WritError, type WritErrorBody } from "./core/errors.ts";
export {
  createGateway,
  type GatewayParts,
  type RunningGateway,
  type StartOptions,
  startGateway,
} from "./server.ts";

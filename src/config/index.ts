export {
  ConfigError,
  defaultConfigFile,
  type GatewayConfig,
  gatewayConfigSchema,
  loadConfig,
  parseConfig,
} from "./config.ts";

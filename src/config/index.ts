export { configSchema, AGENT_NAMES, ENGINE_NAMES, DEFAULT_REPORT_SECTIONS } from './schema.js';
export type {
  Config,
  ConfigInput,
  AgentName,
  EngineName,
  SkillSourceConfig,
  SecretSource,
} from './schema.js';
export {
  loadConfig,
  inspectConfig,
  ConfigError,
  DEFAULT_CONFIG_FILE,
  formatProblem,
  readYamlConfig,
  envOverrides,
  deepMerge,
  setIn,
  didYouMean,
} from './load.js';
export type { ConfigProblem, ConfigInspection, LoadOptions, LoadedConfig, RawConfig, Env } from './load.js';
export { PACKAGE_ROOT } from './paths.js';
export { resolveSecrets } from './secrets.js';
export { unknownEnvWarnings } from './env-check.js';
export type { ResolvedSecrets } from './secrets.js';
export { configKeys, envName } from './keys.js';
export { parseDuration, formatDuration, parseBytes } from './duration.js';

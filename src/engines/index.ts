import type { Config, EngineName } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { createDockerEngine } from './docker.js';
import { createKubernetesEngine } from './kubernetes.js';
import { createProcessEngine } from './process.js';
import type { Engine } from './types.js';

// The engines, in one explicit map; a test checks it matches the engine modules in this folder.

export interface EngineDeps {
  config: Config;
  log: Logger;
  env?: Record<string, string | undefined>;
}

type EngineFactory = (deps: EngineDeps) => Engine;

export const ENGINES: Record<EngineName, EngineFactory> = {
  docker: ({ config, log, env }) => createDockerEngine(config, log, { env }),
  process: ({ config, log, env }) => createProcessEngine(config, log, { env }),
  kubernetes: ({ config, log, env }) => createKubernetesEngine(config, log, { env }),
};

/** The engine registered under `name`; an unknown name fails with the valid ones. */
export function createEngine(name: string, deps: EngineDeps): Engine {
  const factory = Object.hasOwn(ENGINES, name) ? ENGINES[name as EngineName] : undefined;
  if (!factory) {
    throw new Error(
      `unknown engine ${JSON.stringify(name)}: valid engines are ${Object.keys(ENGINES).join(', ')}; set engine in the config or pass --engine`,
    );
  }
  return factory(deps);
}

export { RUN_LABELS, LABEL_PREFIX, WaitTimeoutError, isWaitTimeout } from './labels.js';
export type { Engine, RunSpec, RunHandle, RunExit, RunInfo, Mount, StopSignal } from './types.js';

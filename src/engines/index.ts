import type { Config, EngineName } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Engine, Placement } from './types.js';

// The engines, in one explicit map; a test checks it matches the engine modules in this folder. Each
// engine module is loaded only when that engine is used (dockerode and the Kubernetes client are
// heavy: a command or daemon that does not use them does not pay for them).

export interface EngineDeps {
  config: Config;
  log: Logger;
  env?: Record<string, string | undefined>;
}

type EngineFactory = (deps: EngineDeps) => Promise<Engine>;

export const ENGINES: Record<EngineName, EngineFactory> = {
  docker: async ({ config, log, env }) =>
    (await import('./docker/index.js')).createDockerEngine(config, log, { env }),
  process: async ({ config, log, env }) =>
    (await import('./process.js')).createProcessEngine(config, log, { env }),
  kubernetes: async ({ config, log, env }) =>
    (await import('./kubernetes/index.js')).createKubernetesEngine(config, log, { env }),
};

/** Where each engine runs the agent, as data (the same as `engine.placement`), known without loading it. */
export const ENGINE_PLACEMENT: Record<EngineName, Placement> = {
  docker: 'container',
  process: 'host',
  kubernetes: 'container',
};

/** The engine registered under `name`; an unknown name fails with the valid ones. */
export async function createEngine(name: string, deps: EngineDeps): Promise<Engine> {
  const factory = Object.hasOwn(ENGINES, name) ? ENGINES[name as EngineName] : undefined;
  if (!factory) {
    throw new Error(
      `unknown engine ${JSON.stringify(name)}: valid engines are ${Object.keys(ENGINES).join(', ')}; set engine in the config or pass --engine`,
    );
  }
  return factory(deps);
}

export { RUN_LABELS, LABEL_PREFIX, WaitTimeoutError, isWaitTimeout } from './labels.js';
export type { Engine, RunSpec, RunHandle, RunExit, RunInfo, Mount, StopSignal, Placement } from './types.js';

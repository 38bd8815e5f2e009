import { tmpdir } from 'node:os';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';

type HostConfig = Pick<Config, 'providers' | 'gateway' | 'budget'>;

/** The gateway's part of a configuration: the schema's defaults, with `over` merged into each section. */
export function gatewayConfig(
  over: {
    providers?: Config['providers'];
    gateway?: Partial<Config['gateway']>;
    budget?: Partial<Config['budget']>;
  } = {},
): HostConfig {
  const { config } = loadConfig({ env: {}, cwd: tmpdir(), flags: { gateway: { host: '127.0.0.1' } } });
  return {
    providers: { ...config.providers, ...over.providers },
    gateway: { ...config.gateway, ...over.gateway },
    budget: { ...config.budget, ...over.budget },
  };
}

import { AuditLog } from '../../src/audit/log.js';
import { canonicalCluster, clusterRegistry } from '../../src/clusters/registry.js';
import { configSchema, type Config, type ConfigInput } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { RunExecutor } from '../../src/run/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { feedbackRoutes } from '../../src/server/routes/feedback.js';
import { createStatusRoutes } from '../../src/server/routes/status.js';
import { IncidentIndex } from '../../src/status/incident-index.js';
import { freePort } from './net.js';

// A real daemon with the status index, API and page wired as `triage-runner daemon` wires them, on a
// free loopback port.

export interface StatusDaemon {
  daemon: Daemon;
  index: IncidentIndex;
  config: Config;
  base: string;
  stop(): Promise<void>;
}

export async function startStatusDaemon(options: {
  root: string;
  executor: RunExecutor;
  token?: string;
  config?: Partial<ConfigInput>;
}): Promise<StatusDaemon> {
  const port = await freePort();
  const config = configSchema.parse({
    workspaces_root: options.root,
    engine: 'process',
    intake: { write_settle: '300ms' },
    ...options.config,
    http: { port, host: '127.0.0.1', ...options.config?.http },
    scheduling: {
      lease_ttl: '5s',
      rescan_interval: '300ms',
      shutdown_timeout: '5s',
      retry_base_delay: 50,
      retry_max_delay: 200,
      ...options.config?.scheduling,
    },
  });
  // As the daemon files them: a cluster under its registry name.
  const index = new IncidentIndex({
    root: config.workspaces_root,
    canonicalCluster: canonicalCluster(clusterRegistry(config)),
  });
  await index.load();
  const audit = new AuditLog();
  const daemon = new Daemon({
    config,
    log: silentLogger(),
    executor: options.executor,
    audit,
    random: () => 0.5,
    onChange: (change) => index.apply(change),
    server: (d) => ({
      ...(options.token ? { token: options.token } : {}),
      routes: [
        ...createStatusRoutes({
          index,
          host: d,
          lease: { ttlMs: config.scheduling.lease_ttl },
          redactor: new Redactor(),
        }),
        feedbackRoutes({
          root: config.workspaces_root,
          audit,
          onRecorded: (folder) => void index.refresh(folder),
        }),
      ],
    }),
  });
  await daemon.start();
  return {
    daemon,
    index,
    config,
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      index.close();
      await daemon.stop();
    },
  };
}

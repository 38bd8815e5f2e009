import { AuditLog } from '../../../src/audit/log.js';
import { configSchema, type ConfigInput } from '../../../src/config/schema.js';
import { Daemon } from '../../../src/daemon/daemon.js';
import type { RunExecutor } from '../../../src/run/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { httpLimits } from '../../../src/server/limits.js';
import { createIntakeRoutes } from '../../../src/server/routes/intake.js';
import { recordingHooks, type RecordingHooks } from '../intake-hooks.js';
import { freePort } from '../net.js';

// The real daemon (with a test executor) serving the intake routes on a loopback port, as the
// daemon command wires it.

export interface IntakeDaemon {
  daemon: Daemon;
  base: string;
  hooks: RecordingHooks;
  stop(): Promise<void>;
}

export async function startIntakeDaemon(options: {
  root: string;
  executor: RunExecutor;
  token?: string;
  secrets?: Record<string, string>;
  config?: Partial<ConfigInput>;
  /** Told when every alert behind an incident whose run already finished resolves. */
  onResolvedAfterRun?: (dir: string, at: string) => void;
}): Promise<IntakeDaemon> {
  const config = configSchema.parse({
    workspaces_root: options.root,
    engine: 'process',
    ...options.config,
    http: { port: await freePort(), host: '127.0.0.1', ...options.config?.http },
    scheduling: {
      lease_ttl: '5s',
      rescan_interval: '300ms',
      shutdown_timeout: '5s',
      ...options.config?.scheduling,
    },
  });
  const daemonId = `intake-test-${process.pid}`;
  let hooks: RecordingHooks | undefined;
  const daemon = new Daemon({
    config,
    log: silentLogger(),
    executor: options.executor,
    audit: new AuditLog(),
    daemonId,
    random: () => 0.5,
    ...(options.onResolvedAfterRun ? { onResolvedAfterRun: options.onResolvedAfterRun } : {}),
    server: (d) => {
      hooks = recordingHooks(d.intakeHooks);
      const routes = [
        createIntakeRoutes({
          ...{ config, secrets: options.secrets ?? {}, hooks, identity: { daemonId } },
          metrics: d.metrics.intake,
        }),
      ];
      return { ...(options.token ? { token: options.token } : {}), limits: httpLimits(config), routes };
    },
  });
  await daemon.start();
  if (!hooks) throw new Error('the daemon did not build its HTTP server');
  return { daemon, base: `http://127.0.0.1:${daemon.httpPort}`, hooks, stop: () => daemon.stop() };
}

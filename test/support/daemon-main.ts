// A daemon process for multi-process tests and benchmarks: the real Daemon with the process fake
// executor. Configured through environment variables; prints "READY <port>" once ready.
import { AuditLog } from '../../src/audit/log.js';
import { configSchema } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { createProcessFakeExecutor } from './fake-executor.js';

const env = process.env;
const root = env.DAEMON_ROOT;
if (!root) {
  process.stderr.write('daemon-main: set DAEMON_ROOT to the workspaces root\n');
  process.exit(2);
}
const config = configSchema.parse({
  workspaces_root: root,
  engine: 'process',
  scheduling: {
    max_concurrent: Number(env.DAEMON_MAX_CONCURRENT ?? 4),
    max_per_cluster: Number(env.DAEMON_MAX_PER_CLUSTER ?? 4),
    lease_ttl: env.DAEMON_LEASE_TTL ?? '3s',
    rescan_interval: env.DAEMON_RESCAN ?? '500ms',
    shutdown_timeout: env.DAEMON_SHUTDOWN_TIMEOUT ?? '5s',
    dedup_window: env.DAEMON_DEDUP_WINDOW ?? '10m',
  },
  http: { port: Number(env.DAEMON_HTTP_PORT ?? 0), host: '127.0.0.1' },
});
const log = createLogger({ level: env.DAEMON_LOG_LEVEL ?? 'warn' });
const daemon = new Daemon({
  config,
  log,
  executor: createProcessFakeExecutor({ sleepMs: Number(env.FAKE_AGENT_SLEEP_MS ?? 200) }),
  audit: new AuditLog(),
  daemonId: env.DAEMON_ID,
});
daemon.handleSignals();
await daemon.start();
process.stdout.write(`READY ${daemon.httpPort ?? 0}\n`);
await daemon.whenStopped();
process.exit(0);

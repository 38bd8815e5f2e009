// Shared by pipeline-burst.ts and soak.ts: a daemon on a fresh workspaces root running the REAL run
// pipeline (process engine, claude adapter, triage off, no skills sources) with a stand-in agent that
// sleeps, then writes a report and a claude-shaped result line; and incidents renamed into the root.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AuditLog } from '../src/audit/log.js';
import { configSchema, type Config } from '../src/config/schema.js';
import { Daemon } from '../src/daemon/daemon.js';
import type { DaemonDeps, DaemonHost } from '../src/daemon/types.js';
import type { HttpServerExtras } from '../src/server/types.js';
import { createRunExecutor } from '../src/run/pipeline.js';
import { silentLogger, type Logger } from '../src/log/logger.js';
import { Redactor } from '../src/log/redact.js';

/** The stand-in agent's script: reads the prompt, sleeps `sleepMs`, writes a report, prints a result. */
export const standInAgent = (sleepMs: number): string => `#!/bin/sh
cat > /dev/null
sleep ${(sleepMs / 1000).toFixed(3)}
mkdir -p output
printf '# Report\\n\\n%s\\n' "$(printf 'x%.0s' $(seq 1 250))" > output/investigation.md
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"H1: fake, high confidence; first action: none","usage":{"input_tokens":3,"output_tokens":2},"total_cost_usd":0}'
`;

/** Writes the stand-in agent to `<base>/agent.sh` (executable); its path. */
export async function writeStandInAgent(base: string, sleepMs: number): Promise<string> {
  const agent = path.join(base, 'agent.sh');
  await writeFile(agent, standInAgent(sleepMs));
  await chmod(agent, 0o755);
  return agent;
}

export interface StandInDaemonOptions {
  base: string;
  agent: string;
  concurrency: number;
  rescanInterval: string;
  http?: { host: string; port: number };
  onChange: NonNullable<DaemonDeps['onChange']>;
  /** The HTTP server's extras, given the daemon and its config. */
  server?: (daemon: DaemonHost, config: Config) => HttpServerExtras;
}

export interface StandInDaemon {
  root: string;
  config: Config;
  log: Logger;
  daemon: Daemon;
}

/** A started daemon on `<base>/root` (created) with the stand-in agent. */
export async function startStandInDaemon(options: StandInDaemonOptions): Promise<StandInDaemon> {
  const { base, agent, concurrency } = options;
  const root = path.join(base, 'root');
  await mkdir(root);
  const config = configSchema.parse({
    workspaces_root: root,
    engine: 'process',
    agent: { name: 'claude', command: agent, min_report_bytes: 10 },
    http: options.http ?? { port: 0 },
    skills: { sources: [], disable_triage_preload: true, cache_dir: path.join(base, 'skills') },
    scheduling: {
      max_concurrent: concurrency,
      max_per_cluster: concurrency,
      rescan_interval: options.rescanInterval,
      dedup_window: 0,
    },
  });
  const log = silentLogger();
  const redactor = new Redactor();
  const audit = new AuditLog({ redactor });
  const executor = createRunExecutor({ config, log, redactor, secrets: {}, audit, env: process.env });
  const daemon = new Daemon({
    config,
    log,
    executor,
    audit,
    onChange: options.onChange,
    ...(options.server
      ? { server: (d: DaemonHost) => (options.server as NonNullable<typeof options.server>)(d, config) }
      : {}),
  });
  await daemon.start();
  return { root, config, log, daemon };
}

/** Renames incident number `i` into `<root>/<folder>` (written in a dot folder first), as an alert source does. */
export async function dropIncident(root: string, folder: string, prefix: string, i: number): Promise<void> {
  const tmp = path.join(root, `.tmp-${i}`);
  await mkdir(tmp);
  await writeFile(
    path.join(tmp, 'incident.json'),
    JSON.stringify({
      incidentId: `${prefix}-${i}`,
      cluster: `cluster-${i % 4}`,
      namespace: 'ns',
      resource: { kind: 'Pod', name: `pod-${i}` },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: new Date().toISOString(),
    }),
  );
  await rename(tmp, path.join(root, folder));
}

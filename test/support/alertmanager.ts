import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isCi } from './engine.js';
import { freePort } from './net.js';
import { waitFor } from './incidents.js';

// Real Alertmanager and Prometheus (Debian's packages, installed by .ci/install-test-tools.sh) on
// loopback ports with temp configs. Outside CI a missing binary skips the tests that need it; with
// CI set it is an error, so CI never silently skips them.

/** The first of `names` on PATH (or /usr/bin, /usr/local/bin). */
function which(names: readonly string[]): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/local/bin'].filter(Boolean);
  for (const name of names)
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (existsSync(file)) return file;
    }
  return undefined;
}

/** The binary, or undefined (skip) outside CI; throws with the install step under CI. */
export function requireBinary(names: readonly string[]): string | undefined {
  const found = which(names);
  if (found || !isCi()) return found;
  throw new Error(`${names.join(' / ')} not found on PATH: run bash .ci/install-test-tools.sh`);
}

export const ALERTMANAGER = ['prometheus-alertmanager', 'alertmanager'] as const;
export const PROMETHEUS = ['prometheus'] as const;

export interface Started {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Everything the process printed (for failure messages). */
  output(): string;
}

/** Starts `binary --config.file=CONFIG --web.listen-address=127.0.0.1:PORT ...args` and waits for /-/ready. */
export async function launch(binary: string, config: string, args: string[]): Promise<Started> {
  const port = await freePort();
  const readyPath = '/-/ready';
  let output = '';
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  try {
    await waitFor(
      `${path.basename(binary)} to be ready on ${url}${readyPath}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output.slice(-2000)}`);
        const res = await fetch(`${url}${readyPath}`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      20_000,
      100,
    );
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${output.slice(-2000)}`);
  }
  return { url, port, stop, output: () => output };
}

export interface AlertmanagerOptions {
  dir: string;
  webhookUrl: string;
  token: string;
  groupBy?: string[];
  groupWait?: string;
  groupInterval?: string;
}

/** Alertmanager whose only receiver is the daemon's webhook, with the bearer token and send_resolved. */
export async function startAlertmanager(binary: string, options: AlertmanagerOptions): Promise<Started> {
  await mkdir(path.join(options.dir, 'data'), { recursive: true });
  const config = path.join(options.dir, 'alertmanager.yml');
  await writeFile(
    config,
    [
      'route:',
      '  receiver: triage-runner',
      `  group_by: ${JSON.stringify(options.groupBy ?? ['alertname', 'namespace'])}`,
      `  group_wait: ${options.groupWait ?? '1s'}`,
      `  group_interval: ${options.groupInterval ?? '1s'}`,
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: triage-runner',
      '    webhook_configs:',
      `      - url: ${options.webhookUrl}`,
      '        send_resolved: true',
      '        http_config:',
      '          authorization:',
      `            credentials: ${options.token}`,
      '',
    ].join('\n'),
  );
  return launch(binary, config, [
    `--storage.path=${path.join(options.dir, 'data')}`,
    // No gossip cluster: it would listen on all addresses.
    '--cluster.listen-address=',
  ]);
}

/** Posts alerts to Alertmanager's API v2, as Prometheus does. */
export async function postAlerts(
  alertmanager: Started,
  alerts: {
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    startsAt?: string;
    endsAt?: string;
  }[],
): Promise<void> {
  const res = await fetch(`${alertmanager.url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      alerts.map((a) => ({ annotations: {}, generatorURL: 'http://prometheus.test/graph', ...a })),
    ),
  });
  if (!res.ok) throw new Error(`Alertmanager refused the alerts: ${res.status} ${await res.text()}`);
}

/** Prometheus evaluating `rules` every second and sending to `alertmanager`. */
export async function startPrometheus(
  binary: string,
  options: { dir: string; alertmanager: Started; rules: string },
): Promise<Started> {
  await mkdir(path.join(options.dir, 'tsdb'), { recursive: true });
  await writeFile(path.join(options.dir, 'rules.yml'), options.rules);
  const config = path.join(options.dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - ${path.join(options.dir, 'rules.yml')}`,
      'alerting:',
      '  alertmanagers:',
      '    - static_configs:',
      `        - targets: ['127.0.0.1:${options.alertmanager.port}']`,
      '',
    ].join('\n'),
  );
  return launch(binary, config, [
    `--storage.tsdb.path=${path.join(options.dir, 'tsdb')}`,
    // Alerts found before Alertmanager is discovered (about 5 s) are dropped, and re-sent only
    // after this delay (1 m by default).
    '--rules.alert.resend-delay=1s',
  ]);
}

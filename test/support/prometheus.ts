// A real Prometheus (Debian's package) for the promql tests: it scrapes itself and a small exporter the
// test runs (a node HTTP server serving /metrics text whose values the test sets), behind a recording
// proxy that requires a bearer token and logs every request it is sent — Prometheus keeps no request log
// of its own. The daemon is pointed at the proxy, so the token is needed for every answer and every
// request that reached Prometheus is in the proxy's log.
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { launch, PROMETHEUS, requireBinary, type Started } from './alertmanager.js';
import { eventually } from './wait.js';

export { PROMETHEUS };

/** The binary, or undefined (skip) outside CI. */
export const prometheusBinary = (): string | undefined => requireBinary(PROMETHEUS);

export interface Exporter {
  url: string;
  port: number;
  /** The /metrics text served from now on. */
  set(text: string): void;
  close(): Promise<void>;
}

/** Each sample line of `text` with the time it is served at: Prometheus then keeps the series' last
 * value through a scrape that fails on a busy machine (explicit timestamps get no staleness marker). */
const stamped = (text: string, ms: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' || line.startsWith('#') ? line : `${line} ${ms}`))
    .join('\n');

/** A node HTTP server serving `text` at /metrics in the Prometheus text format. */
export async function startExporter(text: string): Promise<Exporter> {
  let body = text;
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(stamped(body, Date.now()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    set: (next) => (body = next),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Prometheus scraping `exporter` every second, with a TSDB in `dir`; rules' alerts go to `alertmanager`. */
export async function startScrapingPrometheus(
  binary: string,
  options: { dir: string; exporter: Exporter; rules?: string; alertmanager?: Started },
): Promise<Started> {
  await mkdir(path.join(options.dir, 'tsdb'), { recursive: true });
  const config = path.join(options.dir, 'prometheus.yml');
  const rules = path.join(options.dir, 'rules.yml');
  if (options.rules) await writeFile(rules, options.rules);
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      ...(options.rules ? ['rule_files:', `  - ${rules}`] : []),
      ...(options.alertmanager
        ? [
            'alerting:',
            '  alertmanagers:',
            '    - static_configs:',
            `        - targets: ['127.0.0.1:${options.alertmanager.port}']`,
          ]
        : []),
      'scrape_configs:',
      '  - job_name: exporter',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${options.exporter.port}']`,
      '',
    ].join('\n'),
  );
  return launch(binary, config, [
    `--storage.tsdb.path=${path.join(options.dir, 'tsdb')}`,
    // Alerts found before Alertmanager is discovered are re-sent after this delay (1 m by default).
    '--rules.alert.resend-delay=1s',
  ]);
}

/** One request the proxy was sent. */
export interface ProxiedRequest {
  method: string;
  url: string;
  authorized: boolean;
}

export interface RecordingProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Hold every request from now on without answering (a Prometheus that does not answer). */
  stall(on: boolean): void;
  close(): Promise<void>;
}

/** A proxy to `target` that answers 401 without `Authorization: Bearer <token>` and records everything. */
export async function startRecordingProxy(target: string, token: string): Promise<RecordingProxy> {
  const requests: ProxiedRequest[] = [];
  let stalled = false;
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const authorized = req.headers.authorization === `Bearer ${token}`;
    requests.push({ method: req.method ?? '', url: req.url ?? '', authorized });
    if (stalled) return;
    if (!authorized) return void res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized\n');
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    stall: (on) => (stalled = on),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until Prometheus has scraped `expr` to a non-empty answer. */
export async function waitForSeries(prometheus: Started, expr: string, timeoutMs = 30_000): Promise<void> {
  await eventually(
    `Prometheus at ${prometheus.url} to have ${expr}`,
    async () => {
      const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(
        () => undefined,
      );
      const body = (await res?.json().catch(() => undefined)) as
        { data?: { result?: unknown[] } } | undefined;
      return (body?.data?.result?.length ?? 0) > 0 ? true : undefined;
    },
    timeoutMs,
    200,
  );
}

/** Prometheus's own count of requests per HTTP handler (`prometheus_http_requests_total`). */
export async function handlerCounts(prometheus: Started): Promise<Record<string, number>> {
  const res = await fetch(`${prometheus.url}/metrics`);
  const out: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const m = /^prometheus_http_requests_total\{[^}]*handler="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (m?.[1]) out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
  }
  return out;
}

/** An exporter serving `metrics`, Prometheus scraping it and the recording proxy in front of it. */
export interface PrometheusStack {
  exporter: Exporter;
  prometheus: Started;
  /** Requires `Authorization: Bearer <token>`; what the daemon is pointed at. */
  proxy: RecordingProxy;
  close(): Promise<void>;
}

/** Starts the stack in `dir`; with `waitFor`, resolves once Prometheus has scraped that expression. */
export async function startPrometheusStack(
  binary: string,
  options: {
    dir: string;
    metrics: string;
    token: string;
    waitFor?: string;
    rules?: string;
    alertmanager?: Started;
  },
): Promise<PrometheusStack> {
  const exporter = await startExporter(options.metrics);
  const prometheus = await startScrapingPrometheus(binary, {
    dir: options.dir,
    exporter,
    ...(options.rules ? { rules: options.rules } : {}),
    ...(options.alertmanager ? { alertmanager: options.alertmanager } : {}),
  });
  const proxy = await startRecordingProxy(prometheus.url, options.token);
  if (options.waitFor) await waitForSeries(prometheus, options.waitFor);
  return {
    exporter,
    prometheus,
    proxy,
    close: async () => {
      await proxy.close();
      await prometheus.stop();
      await exporter.close();
    },
  };
}

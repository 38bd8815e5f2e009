// The sandbox's `promql` end to end against a real Prometheus (Debian's package) scraping a small
// exporter: the installed `promql` wrapper (the guard's client) asks a real broker, which queries
// Prometheus through a recording proxy that requires a bearer token. Answers come back as tables and
// JSON, every call is in cluster-calls.jsonl / cluster-outputs.jsonl with what Prometheus answered, each
// limit refuses naming itself, and no hostile spelling of a path, a method or a tool reaches anything
// but the read API (the proxy's log and Prometheus's own handler counters show it).
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { startBroker, type RunningBroker } from '../../../src/kubectl/broker/broker.js';
import { CallLog, readCallLog } from '../../../src/kubectl/broker/calls.js';
import { installGuard, TOKEN_FILE } from '../../../src/kubectl/broker/install-guard.js';
import { startPodBroker, type PodBrokerTarget } from '../../../src/kubectl/broker/pod-broker.js';
import { RunTokens } from '../../../src/kubectl/broker/tokens.js';
import { OutputLog, readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { DEFAULT_HELPERS, compilePolicy } from '../../../src/kubectl/policy/policy.js';
import { checkEndpoint } from '../../../src/prometheus/monitor.js';
import { promqlTool } from '../../../src/prometheus/tool.js';
import type { PromqlLimits } from '../../../src/prometheus/types.js';
import type { Started } from '../../support/alertmanager.js';
import {
  handlerCounts,
  prometheusBinary,
  startPrometheusStack,
  type PrometheusStack,
  type RecordingProxy,
} from '../../support/prometheus.js';
import { tempDir } from '../../support/runs.js';

const binary = prometheusBinary();
const TOKEN = 'prometheus-proxy-token-0123456789abcdef';
const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');

/** 300 series of one metric (over max_series) and a gauge the test reads back. */
const METRICS = [
  '# TYPE app_memory_working_set_bytes gauge',
  'app_memory_working_set_bytes{pod="api-1",namespace="shop"} 536870912',
  'app_memory_working_set_bytes{pod="api-2",namespace="shop"} 201326592',
  '# TYPE many_series gauge',
  ...Array.from({ length: 300 }, (_, i) => `many_series{i="${i}"} ${i}`),
  '',
].join('\n');

const LIMITS: PromqlLimits = {
  timeoutMs: 10_000,
  maxRangeMs: 24 * 3_600_000,
  maxPoints: 500,
  maxSeries: 100,
  maxBytes: 1024 * 1024,
};

/** The read API's paths, which are all a request to Prometheus may ask for. */
const READ_PATHS =
  /^\/api\/v1\/(query|query_range|series|labels|label\/[a-zA-Z_][a-zA-Z0-9_]*\/values|metadata|alerts|rules|status\/buildinfo)(\?|$)/;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe.skipIf(!binary)('promql through the broker, against a real Prometheus', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let stack: PrometheusStack;
  let prometheus: Started;
  let proxy: RecordingProxy;
  let broker: RunningBroker;
  let calls: CallLog;
  let outputs: OutputLog;
  let guardDir: string;
  /** The limits the tool reads on every call: a test narrows one and puts it back. */
  const limits: PromqlLimits = { ...LIMITS };

  beforeAll(async () => {
    root = await tempDir('tr-promql-');
    stack = await startPrometheusStack(binary ?? '', {
      dir: path.join(root.dir, 'prom'),
      metrics: METRICS,
      token: TOKEN,
      waitFor: 'app_memory_working_set_bytes',
    });
    ({ prometheus, proxy } = stack);
    const run = path.join(root.dir, 'run');
    await mkdir(run, { recursive: true });
    calls = await CallLog.open(path.join(run, RUN_FILES.clusterCalls));
    outputs = await OutputLog.open(path.join(run, RUN_FILES.clusterOutputs));
    const endpoint = {
      ok: true as const,
      endpoint: { cluster: 'prod', url: new URL(proxy.url), authorization: `Bearer ${TOKEN}`, tls: {} },
    };
    broker = await startBroker({
      socketPath: path.join(run, 'kubectl.sock'),
      policy,
      kubectl: { command: '/bin/false', env: {}, cwd: run },
      callTimeoutMs: 10_000,
      promql: promqlTool({ endpoint, cluster: 'prod', limits, now: () => new Date() }),
      onCall: async (record, output) => {
        const call = await calls.append(record);
        if (output && record.decision === 'allowed') await outputs.append(call, record, output);
      },
    });
    guardDir = path.join(run, 'guard');
    await installGuard(guardDir, {
      socketPath: broker.socketPath,
      nodePath: process.execPath,
      runId: 'run-1',
    });
  }, 60_000);

  afterAll(async () => {
    await broker?.stop();
    await calls?.close();
    await outputs?.close();
    await stack?.close();
    await root?.cleanup();
  });

  const promql = (args: string[]): Promise<Result> =>
    new Promise((resolve) =>
      execFile(
        path.join(guardDir, 'promql'),
        args,
        { env: { PATH: '/usr/bin:/bin' } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  /** One raw request line on the broker's socket, as a hand-written client would send it. */
  const raw = (line: string): Promise<Buffer> =>
    new Promise((resolve) => {
      const socket = net.createConnection(broker.socketPath);
      const chunks: Buffer[] = [];
      socket.on('connect', () => socket.write(`${line}\n`));
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => resolve(Buffer.concat(chunks)));
    });

  it('answers an instant query with the value Prometheus scraped, as a table and as its JSON', async () => {
    const table = await promql(['query', 'app_memory_working_set_bytes{pod="api-1"}']);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /^app_memory_working_set_bytes\{pod="api-1"\} at \d{4}-\d\d-\d\dT[\d:]+Z: 1 series\n/,
    );
    expect(table.stdout).toContain('536870912  app_memory_working_set_bytes{instance="127.0.0.1:');
    const json = await promql(['query', 'app_memory_working_set_bytes{pod="api-1"}', '-o', 'json']);
    const answer = JSON.parse(json.stdout) as {
      status: string;
      data: { result: { value: [number, string] }[] };
    };
    expect(answer.status).toBe('success');
    expect(answer.data.result[0]?.value[1]).toBe('536870912');
  });

  it('answers a range query with timestamped points, and series, labels, alerts, rules and metadata', async () => {
    const range = await promql([
      'range',
      'app_memory_working_set_bytes{pod="api-1"}',
      '--since',
      '5m',
      '--step',
      '1s',
    ]);
    expect(range.code).toBe(0);
    expect(range.stdout).toMatch(
      /^app_memory_working_set_bytes\{pod="api-1"\} from \S+Z to \S+Z, step 1s: 1 series\n/,
    );
    expect(range.stdout).toMatch(
      /\napp_memory_working_set_bytes\{instance="127\.0\.0\.1:\d+", job="exporter", namespace="shop", pod="api-1"\}: \d+ points?, min 536870912 at \S+Z, max 536870912 at \S+Z, last 536870912\n/,
    );
    expect(range.stdout).toMatch(/\n {2}TIMESTAMP +VALUE\n {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +536870912\n/);
    const series = await promql(['series', 'app_memory_working_set_bytes']);
    expect(series.stdout).toContain('2 series');
    expect((await promql(['labels', 'pod'])).stdout).toMatch(/: 2 values\napi-1\napi-2\n$/);
    expect((await promql(['labels'])).stdout).toContain('\nnamespace\n');
    expect((await promql(['alerts'])).stdout).toBe('alerts: none\n');
    expect((await promql(['rules'])).stdout).toBe('rules: none\n');
    expect((await promql(['metadata', 'app_memory_working_set_bytes'])).stdout).toContain(
      'app_memory_working_set_bytes  gauge',
    );
  });

  it('records each call with what Prometheus answered, in the call and output logs', async () => {
    await promql(['query', 'sum(app_memory_working_set_bytes)']);
    const { records } = await readCallLog(calls.file);
    const record = records.find((r) => r.normalized === "promql query 'sum(app_memory_working_set_bytes)'");
    expect(record).toMatchObject({
      tool: 'prometheus',
      by: 'guard',
      decision: 'allowed',
      category: 'read',
      exitCode: 0,
    });
    const output = (await readOutputLog(outputs.file)).find((o) => o.call === record?.call);
    expect(output?.tool).toBe('prometheus');
    expect(output?.stdout).toContain('738197504  {}');
    expect(output?.prometheus).toMatchObject({
      endpoint: 'query',
      httpStatus: 200,
      answer: {
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: {}, value: [expect.any(Number), '738197504'] }] },
      },
    });
    expect(output?.prometheus?.params.map(([k]) => k)).toEqual(['query', 'time', 'timeout']);
    expect(calls.totals('prometheus').calls).toBe(records.filter((r) => r.tool === 'prometheus').length);
  });

  it('refuses over each limit, naming it, and records the refusal', async () => {
    const cases: [string[], string][] = [
      [['range', 'up', '--since', '2d'], 'promql.max_range'],
      [['range', 'up', '--since', '1h', '--step', '1s'], 'promql.max_points'],
      [['query', 'many_series'], 'promql.max_series'],
      [['series', '--since', '30d', 'up'], 'promql.max_range'],
    ];
    for (const [args, limit] of cases) {
      const got = await promql(args);
      expect(got.code, args.join(' ')).toBe(1);
      expect(got.stderr).toMatch(new RegExp(`^promql: refused: .*${limit.replace('.', '\\.')}`));
    }
    limits.maxBytes = 2048;
    const big = await promql(['query', 'many_series', '-o', 'json']);
    limits.maxBytes = LIMITS.maxBytes;
    expect(big.stderr).toMatch(
      /^promql: refused: the answer is \d+ bytes or more, over promql\.max_bytes \(2048\)/,
    );
    proxy.stall(true);
    // reason: the limit is a wall-clock bound of a real HTTP call; 300 ms keeps the wait short.
    limits.timeoutMs = 300;
    const slow = await promql(['query', 'up']);
    proxy.stall(false);
    limits.timeoutMs = LIMITS.timeoutMs;
    expect(slow.stderr).toMatch(
      /^promql: refused: Prometheus at http:\/\/127\.0\.0\.1:\d+ did not answer within 300 ms \(promql\.timeout\)/,
    );
    const { records } = await readCallLog(calls.file);
    const rules = records.filter((r) => r.decision === 'refused').map((r) => r.rule);
    expect(rules).toEqual(
      expect.arrayContaining([
        'promql.max_range',
        'promql.max_points',
        'promql.max_series',
        'promql.max_bytes',
        'promql.timeout',
      ]),
    );
  });

  it('sends nothing but GETs of the read API, whatever path, method or tool a caller writes', async () => {
    const before = proxy.requests.length;
    const hostile: string[][] = [
      ['admin', 'tsdb', 'delete_series'],
      ['ADMIN'],
      ['/api/v1/admin/tsdb/snapshot'],
      ['federate'],
      ['write'],
      ['read'],
      ['labels', '../../admin/tsdb/snapshot'],
      ['labels', '..%2F..%2Fadmin%2Ftsdb%2Fsnapshot'],
      ['labels', 'job/../../admin'],
      ['query', 'up', '--url', 'http://127.0.0.1/federate'],
      ['query', 'up', '-X', 'POST'],
      ['query', 'up', '--time', '../../admin'],
      ['range', 'up', '--step', '1m/../../write'],
    ];
    for (const args of hostile) {
      const got = await promql(args);
      expect(got.code, args.join(' ')).not.toBe(0);
    }
    for (const line of [
      '{"v":1,"tool":"promql","argv":["../api/v1/admin/tsdb/snapshot"]}',
      '{"v":1,"tool":"prometheus","argv":["query","up"]}',
      '{"v":1,"tool":"PROMQL","argv":["query","up"]}',
      '{"v":1,"tool":"promql","argv":["admin"],"path":"/api/v1/admin/tsdb/snapshot","method":"POST"}',
    ])
      expect((await raw(line)).length).toBeGreaterThan(0);
    // No hostile call reached Prometheus at all.
    expect(proxy.requests.slice(before)).toEqual([]);
    // Read calls whose words hold a path travel only as encoded parameters of a read endpoint.
    await promql(['metadata', '../../api/v1/admin/tsdb/snapshot']);
    await promql(['series', '{__name__="up"}', '--since', '1m']);
    await promql(['query', 'up', '--time', 'now-1m']);
    for (const request of proxy.requests) {
      expect(request.method).toBe('GET');
      expect(request.url).toMatch(READ_PATHS);
      expect(request.authorized).toBe(true);
    }
    const counts = await handlerCounts(prometheus);
    for (const handler of Object.keys(counts).filter((h) => /admin|write|read$|federate/.test(h)))
      expect(counts[handler], handler).toBe(0);
  });

  it('holds no credential in the sandbox: the guard folder names only the socket', async () => {
    for (const file of await readdir(guardDir, { recursive: true })) {
      const text = await readFile(path.join(guardDir, file), 'utf8').catch(() => '');
      expect(text, file).not.toContain(TOKEN);
      expect(text, file).not.toContain(proxy.url.replace(/\/$/, ''));
    }
    // Without the daemon's token the proxy (standing for a Prometheus that needs one) answers nothing.
    const res = await fetch(`${proxy.url}api/v1/query?query=up`);
    expect(res.status).toBe(401);
  });

  it("serves an agent pod's promql over the pod broker's port with the run token, like its kubectl", async () => {
    const tokens = new RunTokens<PodBrokerTarget>();
    const quiet = { info: () => undefined, warn: () => undefined };
    const pod = await startPodBroker({ host: '127.0.0.1', port: 0, tokens, log: quiet });
    try {
      const podGuard = path.join(root.dir, 'pod-guard');
      await installGuard(podGuard, {
        socketPath: `http://127.0.0.1:${pod.port}`,
        withToken: true,
        nodePath: process.execPath,
        runId: 'run-pod',
      });
      const token = tokens.issue('run-pod', { socketPath: broker.socketPath }, Date.now() + 60_000);
      await writeFile(path.join(podGuard, TOKEN_FILE), `${token}\n`);
      const run = (dir: string): Promise<Result> =>
        new Promise((resolve) =>
          execFile(
            path.join(dir, 'promql'),
            ['query', 'app_memory_working_set_bytes{pod="api-2"}'],
            { env: { PATH: '/usr/bin:/bin' } },
            (err, stdout, stderr) =>
              resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          ),
        );
      const got = await run(podGuard);
      expect(got.stderr).toBe('');
      expect(got.stdout).toContain('201326592  app_memory_working_set_bytes{instance=');
      // Without a live run token the pod broker refuses before any broker is asked.
      tokens.revoke('run-pod');
      const refused = await run(podGuard);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the run token is not one of a running investigation');
    } finally {
      await pod.close();
    }
  });

  it("checks an endpoint's readiness with its credentials, and says when they are refused", async () => {
    const good = await checkEndpoint('prod', {
      ok: true,
      endpoint: { cluster: 'prod', url: new URL(proxy.url), authorization: `Bearer ${TOKEN}`, tls: {} },
    });
    expect(good).toMatchObject({ cluster: 'prod', reachable: true });
    expect(good.detail).toMatch(/^Prometheus 2\.\d+\.\d+\S* answers at http:\/\/127\.0\.0\.1:\d+$/);
    const refused = await checkEndpoint('prod', {
      ok: true,
      endpoint: {
        cluster: 'prod',
        url: new URL(proxy.url),
        authorization: 'Bearer wrong-token-0000000000',
        tls: {},
      },
    });
    expect(refused.reachable).toBe(false);
    expect(refused.detail).toContain(
      "answered HTTP 401 (Unauthorized): the daemon's credentials for it were refused",
    );
    expect(refused.detail).not.toContain('wrong-token');
  });
});

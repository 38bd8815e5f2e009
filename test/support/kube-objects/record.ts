// What the real kubectl prints for the `shop` scenario: every call of SHOP_CALLS run with Debian's
// kubectl against the stand-in API server serving the scenario (and one against a closed port, one
// that needs no server), recorded as the broker records a call (argv, exit code, stdout, stderr).
// The evidence parsers' tests and the evidence corpus read the recording; it is written by
//   npx tsx test/support/kube-objects/record.ts
// and test/integration/evidence/kubectl-output.test.ts records afresh and checks it is still what
// kubectl prints (ages, dates and the port masked).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startStandInApiServer } from '../stand-in-apiserver.js';
import { serveScenario } from './serve.js';
import { API_POD, shopScenario, WEB_POD, WORKER_POD } from './shop.js';

export const KUBECTL = process.env.TRIAGE_TEST_KUBECTL ?? '/usr/bin/kubectl';
export const SHOP_FIXTURE = path.join(
  import.meta.dirname,
  '..',
  '..',
  'fixtures',
  'kubectl-output',
  'shop.json',
);

export interface RecordedOutput {
  name: string;
  argv: string[];
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ShopRecording {
  kubectl: string;
  calls: RecordedOutput[];
}

type Server = 'scenario' | 'down';
const ns = ['-n', 'shop'];

/** The calls recorded, by name: the verbs and flags the evidence check parses. */
export const SHOP_CALLS: { name: string; argv: string[]; server?: Server }[] = [
  { name: 'get-pods', argv: ['get', 'pods', ...ns] },
  { name: 'get-pods-wide', argv: ['get', 'pods', ...ns, '-o', 'wide'] },
  { name: 'get-pods-all', argv: ['get', 'pods', '-A'] },
  { name: 'get-pod-api', argv: ['get', 'pod', API_POD, ...ns] },
  { name: 'describe-api', argv: ['describe', 'pod', API_POD, ...ns] },
  { name: 'describe-worker', argv: ['describe', 'pod', WORKER_POD, ...ns] },
  { name: 'describe-web', argv: ['describe', 'pod', WEB_POD, ...ns] },
  { name: 'describe-pods', argv: ['describe', 'pods', ...ns] },
  { name: 'get-events', argv: ['get', 'events', ...ns] },
  { name: 'get-events-wide', argv: ['get', 'events', ...ns, '-o', 'wide'] },
  { name: 'events', argv: ['events', ...ns] },
  { name: 'logs-api-previous', argv: ['logs', API_POD, ...ns, '--previous'] },
  { name: 'logs-api', argv: ['logs', API_POD, ...ns] },
  { name: 'logs-worker', argv: ['logs', WORKER_POD, ...ns] },
  { name: 'logs-worker-previous', argv: ['logs', WORKER_POD, ...ns, '--previous'] },
  { name: 'logs-web', argv: ['logs', WEB_POD, ...ns, '-c', 'web'] },
  { name: 'yaml-api', argv: ['get', 'pod', API_POD, ...ns, '-o', 'yaml'] },
  { name: 'json-api', argv: ['get', 'pod', API_POD, ...ns, '-o', 'json'] },
  { name: 'yaml-worker', argv: ['get', 'pod', WORKER_POD, ...ns, '-o', 'yaml'] },
  { name: 'json-pods', argv: ['get', 'pods', ...ns, '-o', 'json'] },
  { name: 'get-pod-missing', argv: ['get', 'pod', 'api-0000', ...ns] },
  { name: 'version-client', argv: ['version', '--client'] },
  { name: 'get-pods-down', argv: ['get', 'pods', ...ns], server: 'down' },
];

function kubeconfig(server: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: shop, cluster: {server: "${server}"}}]`,
    'users: [{name: agent, user: {token: stand-in-token}}]',
    'contexts: [{name: shop, context: {cluster: shop, user: agent, namespace: shop}}]',
    'current-context: shop',
    '',
  ].join('\n');
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function run(argv: string[], env: Record<string, string>): Promise<Omit<RecordedOutput, 'name' | 'argv'>> {
  return new Promise((resolve) => {
    execFile(KUBECTL, argv, { env, timeout: 20_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code =
        err && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 0;
      resolve({ exitCode: err ? code || 1 : 0, stdout, stderr });
    });
  });
}

/** Runs `calls` with the real kubectl and returns what it printed. */
export async function recordShop(calls = SHOP_CALLS): Promise<ShopRecording> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'triage-kubectl-output-'));
  const server = await startStandInApiServer({ answer: serveScenario(shopScenario) });
  try {
    const live = path.join(dir, 'live.yaml');
    const down = path.join(dir, 'down.yaml');
    await writeFile(live, kubeconfig(server.url));
    await writeFile(down, kubeconfig(`https://127.0.0.1:${await closedPort()}`));
    const version = await run(['version', '--client'], { PATH: process.env.PATH ?? '/usr/bin', HOME: dir });
    const out: RecordedOutput[] = [];
    for (const call of calls) {
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dir,
        TZ: 'UTC',
        KUBECONFIG: call.server === 'down' ? down : live,
      };
      out.push({ name: call.name, argv: call.argv, ...(await run(call.argv, env)) });
    }
    return { kubectl: version.stdout.split('\n')[0] ?? '', calls: out };
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Ages, dates, times and the closed port: what differs between two recordings of the same objects. */
export function maskVolatile(text: string): string {
  return text
    .replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>')
    .replace(/\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}/g, '<date>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/^[EWIF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ /gm, '<klog> ')
    .replace(/\b\d+[smhdy](?:\d+[smhd])?\b/g, '<age>')
    .replace(/[ \t]+/g, ' ');
}

/** The committed recording. */
export async function readShopRecording(): Promise<ShopRecording> {
  return JSON.parse(await readFile(SHOP_FIXTURE, 'utf8')) as ShopRecording;
}

/** One recorded call by name (throws for a name the recording does not have). */
export function callOf(recording: ShopRecording, name: string): RecordedOutput {
  const call = recording.calls.find((c) => c.name === name);
  if (!call) throw new Error(`the kubectl recording has no call named ${name}`);
  return call;
}

if (process.argv[1] === import.meta.filename) {
  const recording = await recordShop();
  await writeFile(SHOP_FIXTURE, `${JSON.stringify(recording, null, 2)}\n`);
  process.stdout.write(
    `recorded ${recording.calls.length} calls with ${recording.kubectl} into ${SHOP_FIXTURE}\n`,
  );
}

// What one run's token can make the model gateway hold: the daemon's peak memory (RSS of this process,
// which runs the gateway with the configuration's defaults) while a client sends N request bodies in
// parallel on one token, against its memory at rest before the flood (the baseline). Two floods:
// bodies over gateway.max_request_body (answered 413 unread), and bodies just under it (at most
// gateway.max_calls_in_flight of them read, the rest answered 429). The provider stand-in and the
// client are processes of their own, as in production, so only the gateway's memory is measured.
//   npx tsx bench/gateway-flood.ts  (BENCH_FLOOD_N=16)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { createGatewayHost } from '../src/gateway/host.js';
import { openRunGateway } from '../src/gateway/run.js';
import { printTable } from './table.js';

const N = Number(process.env.BENCH_FLOOD_N ?? 16);

// Reads every body it gets and answers after 2 s, so the calls let through stay under way together.
const PROVIDER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"usage":{"input_tokens":1,"output_tokens":1}}');
  }, 2000));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

// N parallel bodies of the given size on one token; prints each answer's status.
const CLIENT = `
const [url, token, n, bytes] = JSON.parse(process.argv[1]);
const body = Buffer.alloc(bytes, 97);
body.write('{"model":"claude-sonnet-4-5","x":"', 0);
body.write('"}', body.length - 2);
const one = () => fetch(url + '/v1/messages', { method: 'POST', headers: { 'x-api-key': token }, body })
  .then((r) => r.arrayBuffer().then(() => String(r.status)), (e) => 'error ' + (e.cause?.code ?? e.message));
Promise.all(Array.from({ length: n }, one)).then((s) => process.stdout.write(JSON.stringify(s)));
`;

function output(child: ChildProcess, untilNewline: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString();
      if (untilNewline && text.includes('\n')) resolve(text.trim());
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`exited ${String(code)}: ${text}`)),
    );
  });
}

const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;
const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
const tally = (statuses: string[]) =>
  Object.entries(statuses.reduce<Record<string, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${n}× ${s}`)
    .join(', ');

const dir = await mkdtemp(path.join(tmpdir(), 'bench-gateway-flood-'));
const provider = spawn(process.execPath, ['-e', PROVIDER], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const url = `http://127.0.0.1:${await output(provider, true)}`;
  const { config } = loadConfig({ env: {}, cwd: dir, flags: { providers: { anthropic_base_url: url } } });
  const host = createGatewayHost({ config, secrets: { ANTHROPIC_API_KEY: 'sk-ant-bench' }, env: {} });
  const run = openRunGateway({
    gateway: host.gateway,
    runId: 'flood',
    provider: 'anthropic',
    bundleDir: dir,
    route: { kind: 'tcp', url: await host.tcpUrl() },
    redact: (t) => t,
  });
  await run.start();
  const limit = config.gateway.max_request_body;
  const rows: string[][] = [];
  for (const [name, bytes] of [
    [`${N} parallel bodies of ${mib(limit * 4)} (over max_request_body)`, limit * 4],
    [`${N} parallel bodies of ${mib(limit - 1024 * 1024)} (under it)`, limit - 1024 * 1024],
  ] as const) {
    (globalThis as { gc?: () => void }).gc?.();
    const rest = process.memoryUsage().rss;
    let peak = rest;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const client = spawn(
      process.execPath,
      ['-e', CLIENT, JSON.stringify([run.providers.anthropicBaseUrl, run.session.token, N, bytes])],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const statuses = JSON.parse(await output(client, false)) as string[];
    clearInterval(sampler);
    rows.push([`${name}: at rest (baseline)`, mb(rest), '1.00']);
    rows.push([`${name}: peak, answers ${tally(statuses)}`, mb(peak), (peak / rest).toFixed(2)]);
  }
  printTable(
    `model gateway under a flood on one token (max_request_body ${mib(limit)}, max_calls_in_flight ${config.gateway.max_calls_in_flight})`,
    rows,
  );
  await run.stop();
  await host.close();
} finally {
  provider.kill();
  await rm(dir, { recursive: true, force: true });
}

// What the model gateway adds to a model call, as an agent CLI pays it, against a direct connection to
// the same provider stand-in in the same run: per-call latency (p50, p95) of a small JSON answer, and
// streamed answers two ways. At a provider's pace: SSE text deltas of 20–100 bytes on a steady 1 ms
// schedule (a long answer, 2,000 events, 2 s, ~115 KB/s; a provider streams tens of KB/s), timed to
// first and last byte. At loopback saturation: a long stream written as fast as the sockets take
// it, which measures the CPU cost of the extra hop, not anything a model can produce. Three processes,
// as in production: the provider stand-in, the gateway (this process, as in the daemon) and the
// client (as the CLI), which times every call. Paths: direct; the gateway's TCP listener (process
// engine); the container's path, the bridge's loopback port to the gateway's unix socket. Targets:
// ≤ 2 ms added at p50, ≤ 5% less streamed throughput.
//   npx tsx bench/gateway.ts  (BENCH_GATEWAY_CALLS=400, BENCH_GATEWAY_MIB=64,
//                              BENCH_GATEWAY_EVENTS=2000, BENCH_GATEWAY_PACED=5)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ModelGateway } from '../src/gateway/gateway.js';
import { BRIDGE_PORT_ENV, BRIDGE_SOCKET_ENV } from '../src/gateway/install-bridge.js';
import { DEFAULT_PRICES } from '../src/gateway/prices.js';
import { openRunGateway } from '../src/gateway/run.js';
import { freePort } from '../test/support/net.js';
import { printTable } from './table.js';

const CALLS = Number(process.env.BENCH_GATEWAY_CALLS ?? 400);
const MIB = Number(process.env.BENCH_GATEWAY_MIB ?? 64);
const STREAMS = 5;
const EVENTS = Number(process.env.BENCH_GATEWAY_EVENTS ?? 2000);
const PACED = Number(process.env.BENCH_GATEWAY_PACED ?? 5);

// The provider stand-in: a small JSON answer; EVENTS Anthropic-shaped SSE text deltas of 20–100 bytes
// on a 1 ms schedule (`x-bench: paced`); or MIB MiB of 4 KB deltas as fast as the socket takes them
// (`x-bench: stream`). The mode is a header: the gateway passes on only the query an endpoint takes.
const PROVIDER = `
const http = require('node:http');
const delta = 'event: content_block_delta\\ndata: ' + JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x'.repeat(4000) } }) + '\\n\\n';
const start = 'event: message_start\\ndata: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}\\n\\n';
const end = 'event: message_delta\\ndata: {"type":"message_delta","usage":{"output_tokens":99}}\\n\\n';
const small = JSON.stringify({ id: 'm', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 12, output_tokens: 3 } });
const server = http.createServer({ keepAlive: true }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const mode = req.headers['x-bench'] || '';
    if (mode === 'paced') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(start);
      // Event i leaves at t0 + i ms (on schedule, not 1 ms after the previous one), so timer jitter
      // does not add up and every path sees the same ~${EVENTS} ms answer.
      const t0 = performance.now();
      let i = 0;
      const tick = () => {
        while (i < ${EVENTS} && performance.now() - t0 >= i) {
          const text = 'word '.repeat(4 + (i * 7919) % 17);
          res.write('data: {"type":"content_block_delta","delta":{"text":"' + text + '"}}\\n\\n');
          i++;
        }
        if (i === ${EVENTS}) { res.end(end); return; }
        setTimeout(tick, Math.max(0, t0 + i - performance.now()));
      };
      tick();
      return;
    }
    if (mode !== 'stream') { res.writeHead(200, { 'content-type': 'application/json' }); res.end(small); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(start);
    let left = Math.ceil(${MIB} * 1048576 / Buffer.byteLength(delta));
    const pump = () => { while (left > 0) { left--; if (!res.write(delta)) { res.once('drain', pump); return; } } res.end(end); };
    pump();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

// The client: times CALLS small calls per target (interleaved) and STREAMS streamed answers per target.
const CLIENT = `
const http = require('node:http');
const [targets, calls, streams, paced] = JSON.parse(process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const call = (t, mode) => new Promise((resolve, reject) => {
  const u = new URL(t.url + '/v1/messages');
  const t0 = performance.now();
  let bytes = 0;
  let first = 0;
  const req = http.request(u, { method: 'POST', agent, headers: { 'x-api-key': t.key, 'content-type': 'application/json', 'x-bench': mode } }, (res) => {
    res.on('data', (c) => { if (!bytes) first = performance.now() - t0; bytes += c.length; });
    res.on('end', () => resolve({ ms: performance.now() - t0, first, bytes }));
  });
  req.on('error', reject);
  req.end('{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}');
});
(async () => {
  const out = targets.map(() => ({ calls: [], streams: [], paced: [] }));
  for (let w = 0; w < 20; w++) for (const t of targets) await call(t, '');
  for (let i = 0; i < calls; i++) for (const [k, t] of targets.entries()) out[k].calls.push((await call(t, '')).ms);
  for (let i = 0; i < paced; i++) for (const [k, t] of targets.entries()) {
    const r = await call(t, 'paced');
    out[k].paced.push({ first: r.first, last: r.ms, bytes: r.bytes });
  }
  for (let i = 0; i < streams; i++) for (const [k, t] of targets.entries()) {
    const r = await call(t, 'stream');
    out[k].streams.push(r.bytes / 1048576 / (r.ms / 1000));
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString();
      const i = text.indexOf('\n');
      if (i !== -1) resolve(text.slice(0, i));
    });
    child.on('exit', (code) => reject(new Error(`exited ${String(code)} before printing: ${text}`)));
  });
}

const signed = (x: number) => `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(2)}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? 0;

const dir = await mkdtemp(path.join(tmpdir(), 'bench-gateway-'));
const provider = spawn(process.execPath, ['-e', PROVIDER], { stdio: ['ignore', 'pipe', 'inherit'] });
let bridge: ChildProcess | undefined;
try {
  const upstream = `http://127.0.0.1:${await firstLine(provider)}`;
  const gateway = new ModelGateway({
    upstreams: {
      anthropic: { baseUrl: upstream, key: 'sk-ant-bench' },
      openai: { baseUrl: upstream, key: 'sk-bench' },
      gemini: { baseUrl: upstream, key: 'bench' },
    },
    prices: DEFAULT_PRICES,
    recordBodies: false,
    caps: {},
  });
  const tcp = await gateway.listenTcp('127.0.0.1');
  const viaTcp = openRunGateway({
    gateway,
    runId: 'bench-tcp',
    provider: 'anthropic',
    bundleDir: dir,
    route: { kind: 'tcp', url: tcp.address },
    redact: (t) => t,
  });
  await viaTcp.start();
  // The container's path: the bridge (a node process, as in the container) to the run's unix socket.
  const bridgeDir = path.join(dir, 'bridged');
  await import('node:fs/promises').then((fs) => fs.mkdir(bridgeDir));
  const viaBridge = openRunGateway({
    gateway,
    runId: 'bench-bridge',
    provider: 'anthropic',
    bundleDir: bridgeDir,
    route: { kind: 'bridge', port: await freePort(), agentRunDir: bridgeDir },
    redact: (t) => t,
  });
  await viaBridge.install();
  await viaBridge.start();
  const port = new URL(viaBridge.providers.anthropicBaseUrl).port;
  bridge = spawn(
    process.execPath,
    [path.join(bridgeDir, 'gateway-bridge', 'bridge.mjs'), '--', 'sleep', '3600'],
    {
      env: {
        ...process.env,
        [BRIDGE_SOCKET_ENV]: path.join(bridgeDir, 'model.sock'),
        [BRIDGE_PORT_ENV]: port,
      },
      stdio: 'ignore',
    },
  );
  const targets = [
    { name: 'direct to the provider (baseline)', url: upstream, key: 'sk-ant-bench' },
    {
      name: 'through the gateway (TCP listener)',
      url: viaTcp.providers.anthropicBaseUrl,
      key: viaTcp.session.token,
    },
    {
      name: 'through bridge + unix socket + gateway',
      url: viaBridge.providers.anthropicBaseUrl,
      key: viaBridge.session.token,
    },
  ];
  // Wait for the bridge to listen.
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${targets[2]!.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': viaBridge.session.token },
      body: '{}',
    }).then(
      (r) => r.arrayBuffer().then(() => true),
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = spawn(process.execPath, ['-e', CLIENT, JSON.stringify([targets, CALLS, STREAMS, PACED])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  client.stdout.on('data', (c: Buffer) => (text += c.toString()));
  await new Promise((r) => client.on('exit', r));
  const results = JSON.parse(text) as {
    calls: number[];
    streams: number[];
    paced: { first: number; last: number; bytes: number }[];
  }[];
  const base = results[0]!;
  const rows = targets.map((t, k) => {
    const r = results[k]!;
    const added = pct(r.calls, 50) - pct(base.calls, 50);
    return [
      `${t.name}: p50 / p95 ms per call`,
      `${pct(r.calls, 50).toFixed(2)} / ${pct(r.calls, 95).toFixed(2)}${k ? ` (+${added.toFixed(2)})` : ''}`,
      (pct(r.calls, 50) / pct(base.calls, 50)).toFixed(2),
    ];
  });
  const lastByte = (k: number) => median(results[k]!.paced.map((p) => p.last));
  const firstByte = (k: number) => median(results[k]!.paced.map((p) => p.first));
  const pacedKiB = (results[0]!.paced[0]?.bytes ?? 0) / 1024;
  rows.push(
    ...targets.map((t, k) => [
      `${t.name}: paced answer (${EVENTS} events on a 1 ms schedule, ${pacedKiB.toFixed(0)} KiB), ms to first / last byte, median of ${PACED}`,
      `${firstByte(k).toFixed(2)} / ${lastByte(k).toFixed(1)}${k ? ` (${signed(firstByte(k) - firstByte(0))} / ${signed(lastByte(k) - lastByte(0))})` : ''}`,
      // Streamed throughput at a provider's pace: the direct time to last byte over this path's.
      (lastByte(0) / lastByte(k)).toFixed(3),
    ]),
    ...targets.map((t, k) => [
      `${t.name}: saturation MiB/s, as fast as loopback carries it (median of ${STREAMS} × ${MIB} MiB)`,
      median(results[k]!.streams).toFixed(0),
      (median(results[k]!.streams) / median(base.streams)).toFixed(3),
    ]),
  );
  printTable(`model gateway (${CALLS} small calls per path, keep-alive client)`, rows);
  const calls = viaTcp.summary().calls + viaBridge.summary().calls;
  process.stdout.write(`\n${calls} calls recorded by the gateway\n`);
  await viaTcp.stop();
  await viaBridge.stop();
  await tcp.close();
} finally {
  bridge?.kill('SIGTERM');
  provider.kill();
  await rm(dir, { recursive: true, force: true });
}

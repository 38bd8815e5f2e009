import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startPodBroker,
  type PodBroker,
  type PodBrokerTarget,
} from '../../../src/kubectl/broker/pod-broker.js';
import { RunTokens } from '../../../src/kubectl/broker/tokens.js';
import { FRAME_STDOUT, encodeFrame, exitFrame } from '../../../src/kubectl/guard/protocol.js';

// The pod broker's door: a run token opens that run's broker socket (a small unix server standing in
// for the run's broker here), anything else is refused before a broker is contacted. The clock is the
// token registry's, moved by hand.

let dir: string;
let now: number;
let tokens: RunTokens<PodBrokerTarget>;
let broker: PodBroker;
let runSocket: net.Server;
const received: string[] = [];
const quiet = { info: () => undefined, warn: () => undefined };

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pod-broker-'));
  now = 1_000_000;
  tokens = new RunTokens({ now: () => now });
  received.length = 0;
  runSocket = net.createServer({ allowHalfOpen: true }, (s) => {
    s.once('data', (line: Buffer) => {
      received.push(line.toString('utf8'));
      s.write(encodeFrame(FRAME_STDOUT, Buffer.from('pods\n')));
      s.end(exitFrame(0));
    });
  });
  await new Promise<void>((r) => runSocket.listen(path.join(dir, 'kubectl.sock'), r));
  broker = await startPodBroker({ host: '127.0.0.1', port: 0, tokens, log: quiet });
});

afterEach(async () => {
  await broker.close();
  await new Promise<void>((r) => runSocket.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

const REQUEST = `${JSON.stringify({ v: 1, argv: ['get', 'pods'] })}\n`;

async function call(token: string | undefined, init: { method?: string; path?: string } = {}) {
  const res = await fetch(`http://127.0.0.1:${broker.port}${init.path ?? '/v1/kubectl'}`, {
    method: init.method ?? 'POST',
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...((init.method ?? 'POST') === 'POST' ? { body: REQUEST } : {}),
  });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

describe('pod broker and run tokens', () => {
  it("hands a call with a live run token to that run's broker and streams its frames back", async () => {
    const token = tokens.issue('run-1', { socketPath: path.join(dir, 'kubectl.sock') }, now + 60_000);
    const res = await call(token);
    expect(res.status).toBe(200);
    expect(received).toEqual([REQUEST]);
    expect(res.body).toEqual(Buffer.concat([encodeFrame(FRAME_STDOUT, Buffer.from('pods\n')), exitFrame(0)]));
  });

  it('refuses an expired token with 401 and never contacts the broker', async () => {
    const token = tokens.issue('run-1', { socketPath: path.join(dir, 'kubectl.sock') }, now + 60_000);
    now += 60_000;
    const res = await call(token);
    expect(res.status).toBe(401);
    expect(res.body.toString()).toContain('expired');
    expect(received).toEqual([]);
  });

  it('refuses a missing, unknown or revoked token with 401', async () => {
    const token = tokens.issue('run-1', { socketPath: path.join(dir, 'kubectl.sock') }, now + 60_000);
    expect((await call(undefined)).status).toBe(401);
    expect((await call('x'.repeat(43))).status).toBe(401);
    tokens.revoke('run-1');
    const revoked = await call(token);
    expect(revoked.status).toBe(401);
    expect(revoked.body.toString()).toContain('not one of a running investigation');
    expect(received).toEqual([]);
  });

  it("one run's token does not open another run's broker, and re-registering replaces a run's token", async () => {
    const first = tokens.issue('run-1', { socketPath: path.join(dir, 'kubectl.sock') }, now + 60_000);
    tokens.register(
      'run-1',
      'adopted-token-of-run-1',
      { socketPath: path.join(dir, 'kubectl.sock') },
      now + 60_000,
    );
    expect(tokens.check(first)).toMatchObject({ ok: false, reason: 'unknown' });
    expect(tokens.check('adopted-token-of-run-1')).toMatchObject({ ok: true, runId: 'run-1' });
    expect(tokens.size).toBe(1);
  });

  it('answers 405 to another method, 404 to another path and 503 when the run broker is gone', async () => {
    const token = tokens.issue('run-1', { socketPath: path.join(dir, 'gone.sock') }, now + 60_000);
    expect((await call(token, { method: 'GET' })).status).toBe(405);
    expect((await call(token, { path: '/v1/other' })).status).toBe(404);
    const gone = await call(token);
    expect(gone.status).toBe(503);
    expect(gone.body.toString()).toContain('not listening');
  });
});

describe('pod broker with the model gateway on the same port', () => {
  it("hands the gateway's prefixes to the gateway's handler, and everything else to the kubectl door", async () => {
    const seen: string[] = [];
    const shared = await startPodBroker({
      host: '127.0.0.1',
      port: 0,
      tokens,
      log: quiet,
      gateway: {
        prefixes: ['anthropic', 'openai'],
        listener: (req, res) => {
          seen.push(req.url ?? '');
          res.writeHead(200).end('gateway');
        },
      },
    });
    try {
      const at = (p: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${shared.port}${p}`, init);
      const model = await at('/anthropic/v1/messages?beta=true', { method: 'POST', body: '{}' });
      expect([model.status, await model.text()]).toEqual([200, 'gateway']);
      expect(seen).toEqual(['/anthropic/v1/messages?beta=true']);
      // Not a gateway prefix (nor one that merely starts like one): the kubectl door answers.
      for (const p of ['/anthropicx/v1/messages', '/gemini/v1beta/models', '/v1/kubectl']) {
        const res = await at(p, { method: 'POST', body: REQUEST });
        await res.arrayBuffer();
        expect(res.status, p).toBe(p === '/v1/kubectl' ? 401 : 404);
      }
      expect(seen).toHaveLength(1);
      expect(received).toEqual([]);
    } finally {
      await shared.close();
    }
  });
});

// What the gateway takes in, over real HTTP: a body over gateway.max_request_body is answered 413
// without being read; a call refused at a spent cap is answered before its body arrives; a run's calls
// over gateway.max_calls_in_flight are answered 429; and every listener that serves it (a run's unix
// socket, the TCP listener, the pod broker's port) holds at most max_connections and closes one whose
// headers or body do not arrive in time. Timeouts are configured short and awaited with vi.waitFor.
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { startPodBroker } from '../../../src/kubectl/broker/pod-broker.js';
import { RunTokens } from '../../../src/kubectl/broker/tokens.js';
import type { RunGateway } from '../../../src/gateway/run.js';
import { PROVIDER_IDS } from '../../../src/gateway/types.js';
import type { ListenerLimits } from '../../../src/util/http-limits.js';
import {
  rawRequest,
  useHeldGateway,
  type GatewayHarness,
  type HeldProvider,
} from '../../support/gateway/harness.js';

const fixture = useHeldGateway('triage-gateway-limits-');
let provider: HeldProvider;
let h: GatewayHarness;

const BODY = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [] });

async function gateway(options: Parameters<typeof fixture.start>[0], held = false): Promise<void> {
  ({ h, provider } = await fixture.start(options, held));
}

/** A raw connection that sends `head` (and keeps the rest back); its answer and whether it closed. */
function partial(connect: () => net.Socket, head: string) {
  const state = { answer: '', closed: false, connected: false };
  const socket = connect();
  socket.on('data', (c: Buffer) => (state.answer += c.toString('utf8')));
  socket.on('close', () => (state.closed = true));
  socket.on('error', () => undefined);
  socket.on('connect', () => {
    state.connected = true;
    socket.write(head);
  });
  fixture.onClose(async () => void socket.destroy());
  return state;
}

const tcpConnect = (url: string) => () => net.connect(Number(new URL(url).port), '127.0.0.1');

describe("the gateway's limits on what it takes in", () => {
  it('answers a body declared over gateway.max_request_body 413 at once, without reading it, and records it', async () => {
    await gateway({ limits: { maxRequestBytes: 64 * 1024 } });
    const run = await h.open();
    // 1 GiB announced, a few bytes sent: the answer comes without waiting for the rest.
    const sent = partial(
      tcpConnect(h.tcp.address),
      `POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${run.session.token}\r\ncontent-length: ${2 ** 30}\r\n\r\n{"model":`,
    );
    await vi.waitFor(() => expect(sent.answer).toMatch(/^HTTP\/1\.1 413 /));
    expect(sent.answer).toContain('gateway.max_request_body (65536 bytes)');
    await vi.waitFor(() => expect(sent.closed).toBe(true));
    expect(provider.received).toHaveLength(0);
    await run.stop();
    expect((await h.calls(run)).map((r) => [r.status, r.refused])).toEqual([
      [413, 'gateway.max_request_body'],
    ]);
  });

  it('answers a chunked body 413 once it passes gateway.max_request_body; a body under it still goes', async () => {
    await gateway({ limits: { maxRequestBytes: 64 * 1024 } });
    const run = await h.open();
    const big = await fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': run.session.token },
      // A stream has no content-length: it is sent chunked.
      body: new Blob([BODY.slice(0, -1), ',"pad":"', 'x'.repeat(100 * 1024), '"}']).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(big.status).toBe(413);
    await big.text();
    const ok = await fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': run.session.token },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', pad: 'x'.repeat(60 * 1024) }),
    });
    expect(ok.status).toBe(200);
    await ok.text();
    expect(provider.received.map((r) => r.bytes)).toEqual([expect.any(Number)]);
    await run.stop();
    expect(run.summary()).toMatchObject({ calls: 1, refused: 1 });
  });

  it('refuses a call at a spent cap before its body arrives', async () => {
    await gateway({ caps: { maxModelCalls: 1 } });
    const run = await h.open();
    const first = await fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': run.session.token },
      body: BODY,
    });
    expect(first.status).toBe(200);
    await first.text();
    const sent = partial(
      tcpConnect(h.tcp.address),
      `POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${run.session.token}\r\ncontent-length: ${10 * 2 ** 20}\r\n\r\n`,
    );
    await vi.waitFor(() => expect(sent.answer).toMatch(/^HTTP\/1\.1 400 /));
    expect(sent.answer).toContain('budget.max_model_calls (1) reached');
    expect(provider.received).toHaveLength(1);
  });

  it("answers a run's calls over gateway.max_calls_in_flight 429 with a retry-after, and takes calls again once they end", async () => {
    await gateway({ limits: { maxCallsInFlight: 2 } }, true);
    const run = await h.open();
    const post = () =>
      fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': run.session.token },
        body: BODY,
      });
    const answers = Array.from({ length: 5 }, () => post());
    const early: Response[] = [];
    for (const a of answers) void a.then((r) => early.push(r));
    await vi.waitFor(() => {
      expect(provider.received).toHaveLength(2);
      expect(early).toHaveLength(3);
    });
    for (const r of early) {
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(await r.text()).toContain('gateway.max_calls_in_flight');
    }
    // Another run is not held up by this one's calls.
    const other = await h.open();
    const again = post();
    expect((await again).status).toBe(429);
    provider.release();
    expect((await Promise.all(answers)).filter((r) => r.status === 200)).toHaveLength(2);
    const next = await post();
    expect(next.status).toBe(200);
    await next.text();
    const theirs = await fetch(`${other.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': other.session.token },
      body: BODY,
    });
    expect(theirs.status).toBe(200);
    await run.stop();
    expect(run.summary()).toMatchObject({ calls: 3, refused: 4 });
  });
});

const LISTENER_LIMITS: ListenerLimits = { maxConnections: 4, headersTimeoutMs: 300, requestTimeoutMs: 600 };

/** Each listener that serves the gateway, opened with LISTENER_LIMITS, and how to connect to it. */
const LISTENERS: { name: string; open: (run: RunGateway) => Promise<() => net.Socket> }[] = [
  { name: 'the TCP listener', open: async () => tcpConnect(h.tcp.address) },
  {
    name: "a run's unix socket",
    open: async (run) => {
      const socketPath = path.join(fixture.root(), `${run.session.runId}.sock`);
      const listening = await h.gateway.listenUnix(socketPath, run.session, { mode: 0o600 });
      fixture.onClose(() => listening.close());
      return () => net.connect(socketPath);
    },
  },
  {
    name: "the pod broker's port",
    open: async () => {
      const broker = await startPodBroker({
        host: '127.0.0.1',
        port: 0,
        tokens: new RunTokens(),
        log: { info: () => undefined, warn: () => undefined },
        gateway: { prefixes: PROVIDER_IDS, listener: h.gateway.requestListener() },
        limits: LISTENER_LIMITS,
      });
      fixture.onClose(() => broker.close());
      return () => net.connect(broker.port, '127.0.0.1');
    },
  },
];

describe.each(LISTENERS)('$name', ({ open }) => {
  it('holds at most max_connections, and closes one whose headers or body are too slow (408)', async () => {
    await gateway({ listeners: LISTENER_LIMITS });
    const run = await h.open();
    const connect = await open(run);
    const idle = partial(connect, '');
    const slowHeaders = partial(connect, 'POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\n');
    const slowBody = partial(
      connect,
      `POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${run.session.token}\r\ncontent-length: 1000\r\n\r\n{"model":`,
    );
    const fourth = partial(connect, '');
    // The four are in the listener's queue before the next ones knock.
    await vi.waitFor(() =>
      expect([idle, slowHeaders, slowBody, fourth].every((s) => s.connected)).toBe(true),
    );
    // Over the cap: closed as it opens, with nothing read.
    const over = [partial(connect, ''), partial(connect, '')];
    await vi.waitFor(() => expect(over.every((s) => s.closed)).toBe(true));
    expect(over.map((s) => s.answer)).toEqual(['', '']);
    // Each slow one gets 408 and is closed within its timeout.
    await vi.waitFor(
      () => {
        for (const s of [idle, slowHeaders, slowBody, fourth]) {
          expect(s.closed).toBe(true);
          expect(s.answer).toMatch(/^HTTP\/1\.1 408 /);
        }
      },
      { timeout: 5000 },
    );
    expect(provider.received).toHaveLength(0);
    // With the slow ones gone, a call goes through the same listener.
    const ok = partial(
      connect,
      `POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-api-key: ${run.session.token}\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
    );
    await vi.waitFor(() => expect(ok.answer).toMatch(/^HTTP\/1\.1 200 /));
  });
});

describe('a request line the gateway answers itself', () => {
  it('answers an unknown key 401 without reading its body', async () => {
    await gateway({});
    const sent = partial(
      tcpConnect(h.tcp.address),
      `POST /anthropic/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: trg-nobody\r\ncontent-length: ${2 ** 30}\r\n\r\n`,
    );
    await vi.waitFor(() => expect(sent.answer).toMatch(/^HTTP\/1\.1 401 /));
    await vi.waitFor(() => expect(sent.closed).toBe(true));
    const raw = await rawRequest({ url: h.tcp.address }, { path: '/anthropic/v1/messages', body: BODY });
    expect(raw.status).toBe(401);
  });
});

// A model gateway over real HTTP for integration tests: the real ModelGateway on a loopback TCP
// listener in front of local provider stand-ins, runs opened on it with their call logs in temp
// folders, and a stand-in that holds its answers until released (calls kept in flight).
import { mkdir } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { readModelCalls } from '../../../src/gateway/calls.js';
import { ModelGateway, type GatewayOptions, type Listening } from '../../../src/gateway/gateway.js';
import { DEFAULT_PRICES } from '../../../src/gateway/prices.js';
import { openRunGateway, type RunGateway } from '../../../src/gateway/run.js';
import type { ModelCallRecord, ProviderId } from '../../../src/gateway/types.js';
import { tempDir } from '../runs.js';

export const KEYS: Record<ProviderId, string> = {
  anthropic: 'sk-ant-real-0123456789',
  openai: 'sk-openai-real-0123456789',
  gemini: 'AIza-real-0123456789',
};

export interface GatewayHarness {
  gateway: ModelGateway;
  tcp: Listening;
  open(provider?: ProviderId): Promise<RunGateway>;
  /** The run's model-calls.jsonl as written. */
  calls(run: RunGateway): Promise<ModelCallRecord[]>;
  close(): Promise<void>;
}

/** A gateway whose providers are at `urls` (base URLs, the OpenAI one ending in /v1), runs' bundles under `root`. */
export async function startGateway(
  root: string,
  urls: Record<ProviderId, string>,
  options: Partial<Pick<GatewayOptions, 'caps' | 'limits' | 'listeners' | 'prices'>> = {},
): Promise<GatewayHarness> {
  const gateway = new ModelGateway({
    upstreams: {
      anthropic: { baseUrl: urls.anthropic, key: KEYS.anthropic },
      openai: { baseUrl: urls.openai, key: KEYS.openai },
      gemini: { baseUrl: urls.gemini, key: KEYS.gemini },
    },
    prices: options.prices ?? DEFAULT_PRICES,
    recordBodies: false,
    caps: options.caps ?? {},
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.listeners ? { listeners: options.listeners } : {}),
    sleep: () => Promise.resolve(),
  });
  const tcp = await gateway.listenTcp('127.0.0.1');
  const runs: RunGateway[] = [];
  let n = 0;
  const bundleOf = (run: RunGateway) => path.join(root, run.session.runId);
  return {
    gateway,
    tcp,
    open: async (provider = 'anthropic') => {
      const runId = `run-${++n}-${Math.random().toString(36).slice(2, 8)}`;
      await mkdir(path.join(root, runId), { recursive: true });
      const run = openRunGateway({
        gateway,
        runId,
        provider,
        bundleDir: path.join(root, runId),
        route: { kind: 'tcp', url: tcp.address },
        redact: (t) => t,
      });
      await run.start();
      runs.push(run);
      return run;
    },
    calls: (run) => readModelCalls(path.join(bundleOf(run), 'model-calls.jsonl')),
    close: async () => {
      for (const run of runs) await run.stop();
      await tcp.close();
    },
  };
}

/** A provider stand-in that answers every call with Anthropic-shaped usage, but only once released. */
export interface HeldProvider {
  url: string;
  /** Requests that reached it (their bodies read). */
  received: { url: string; headers: Record<string, string | string[] | undefined>; bytes: number }[];
  /** Answers every call held so far and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

export async function startHeldProvider(): Promise<HeldProvider> {
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  const received: HeldProvider['received'] = [];
  const server: Server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, bytes });
      void released.then(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            model: 'claude-sonnet-4-5',
            content: [{ type: 'text', text: 'ok' }],
            usage: { input_tokens: 100, output_tokens: 10 },
          }),
        );
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    release,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface HeldGateway {
  h: GatewayHarness;
  provider: HeldProvider;
}

/**
 * For a test file: a temp root for its runs, and `start()` for a gateway in front of one held provider
 * (every provider id goes to it), both closed after each test; `onClose` adds what else a test opened.
 */
export function useHeldGateway(prefix: string) {
  let root: { dir: string; cleanup: () => Promise<void> } | undefined;
  let current: HeldGateway | undefined;
  const closing: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    root = await tempDir(prefix);
  });
  afterAll(async () => {
    await root?.cleanup();
  });
  afterEach(async () => {
    current?.provider.release();
    for (const close of closing.splice(0)) await close();
    await current?.h.close();
    await current?.provider.close();
    current = undefined;
  });
  return {
    root: (): string => root?.dir ?? '',
    onClose: (close: () => Promise<void>): void => void closing.push(close),
    /** A gateway with `options`; its provider answers at once unless `held`. */
    start: async (options: Parameters<typeof startGateway>[2] = {}, held = false): Promise<HeldGateway> => {
      const provider = await startHeldProvider();
      if (!held) provider.release();
      const urls = { anthropic: provider.url, openai: provider.url, gemini: provider.url };
      const h = await startGateway(root?.dir ?? '', urls, options);
      current = { h, provider };
      return current;
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request with its path exactly as given (no URL normalisation: `..`, `%2F`, `\` reach the gateway as
 * written), to a TCP URL or a unix socket.
 */
export function rawRequest(
  target: { url: string } | { socketPath: string },
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawAnswer> {
  const where =
    'url' in target
      ? { host: new URL(target.url).hostname, port: Number(new URL(target.url).port) }
      : { socketPath: target.socketPath };
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...where,
        method: options.method ?? 'POST',
        path: options.path,
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

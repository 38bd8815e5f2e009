import { createHash, randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createLimitedServer, type ListenerLimits } from '../util/http-limits.js';
import { listenUnix, type SocketAccess } from '../util/unix-socket.js';
import type { Price } from './prices.js';
import { createProxy } from './proxy.js';
import type { Upstream } from './upstream.js';
import { DailyLedger } from './ledger.js';
import { RunSession, type SessionHooks } from './session.js';
import type { CapReached, Caps, GatewayLimits, ProviderId } from './types.js';

// The daemon's model gateway: one identity per run. A run gets a random token that its agent uses as
// its API key; the gateway accepts only live tokens, swaps in the real key and forwards. Listeners are
// pluggable: a unix socket per run (bound to that run's token; a container reaches it through its
// bridge) or one TCP listener keyed by token (the process engine; pods over the cluster network). A
// token opens only its run's provider and that provider's model endpoints.

export interface GatewayOptions {
  upstreams: Record<ProviderId, Upstream>;
  prices: Readonly<Record<string, Price>>;
  recordBodies: boolean;
  caps: Caps;
  /** Body size, calls in flight, output reserve (config `gateway.*`); a limit left out is not applied. */
  limits?: Partial<GatewayLimits>;
  /** Connections and header/body timeouts of every listener the gateway opens. */
  listeners?: ListenerLimits;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Where the day's spend across runs is kept (`budget.daily_usd`); in memory without one. */
  spendFile?: string;
  /** A spend file that could not be read or written. */
  onSpendProblem?: (message: string) => void;
  /** Counted by the daemon's metrics. */
  onCap?: (cap: CapReached) => void;
  onRetry?: (provider: string) => void;
}

export interface Listening {
  /** `http://host:port` for a TCP listener; the socket path for a unix one. */
  address: string;
  close(): Promise<void>;
}

/** A run token: 256 random bits, with a prefix that says what it is when it turns up somewhere. */
export const newRunToken = (): string => `trg-${randomBytes(32).toString('base64url')}`;

/** What the gateway keys a run by, and what a run folder keeps so that a restarted daemon can adopt it. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

function serve(server: http.Server): () => Promise<void> {
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Streams in flight end with the listener (the run is over).
      for (const s of sockets) s.destroy();
    });
}

export class ModelGateway {
  /** Live runs by their token's hash. */
  private readonly sessions = new Map<string, RunSession>();
  private readonly keys = new WeakMap<RunSession, string>();
  private readonly ledger: DailyLedger;
  private readonly proxy: ReturnType<typeof createProxy>;

  constructor(private readonly options: GatewayOptions) {
    this.ledger = new DailyLedger(options.now ?? (() => new Date()), {
      ...(options.spendFile ? { file: options.spendFile } : {}),
      ...(options.onSpendProblem ? { onProblem: options.onSpendProblem } : {}),
    });
    this.proxy = createProxy({
      upstreams: options.upstreams,
      prices: options.prices,
      recordBodies: options.recordBodies,
      ...(options.limits ? { limits: options.limits } : {}),
      lookup: (token) => this.sessions.get(tokenHash(token)),
      ready: () => this.ledger.ready(),
      ...(options.now ? { now: options.now } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  /** Issues a run's token, good for `provider` only; its calls go to `hooks.onCall`. */
  openRun(
    runId: string,
    provider: ProviderId,
    hooks: Pick<SessionHooks, 'onCall'>,
    caps: Caps = this.options.caps,
  ): RunSession {
    return this.register({ runId, provider, token: newRunToken(), hooks, caps });
  }

  /**
   * Takes back a run a dead daemon launched, by its token's hash (the agent still holds the token);
   * `session.token` is then empty: the daemon never learns the token again.
   */
  resumeRun(
    runId: string,
    provider: ProviderId,
    hash: string,
    hooks: Pick<SessionHooks, 'onCall'>,
  ): RunSession {
    return this.register({ runId, provider, token: '', hooks, caps: this.options.caps }, hash);
  }

  private register(
    run: {
      runId: string;
      provider: ProviderId;
      token: string;
      hooks: Pick<SessionHooks, 'onCall'>;
      caps: Caps;
    },
    hash = tokenHash(run.token),
  ): RunSession {
    const max = this.options.limits?.maxCallsInFlight;
    const session = new RunSession({
      runId: run.runId,
      token: run.token,
      provider: run.provider,
      caps: run.caps,
      ledger: this.ledger,
      hooks: {
        onCall: run.hooks.onCall,
        ...(this.options.onCap ? { onCap: this.options.onCap } : {}),
        ...(this.options.onRetry ? { onRetry: this.options.onRetry } : {}),
      },
      ...(max !== undefined ? { maxCallsInFlight: max } : {}),
    });
    this.keys.set(session, hash);
    this.sessions.set(hash, session);
    return session;
  }

  /** The token dies with its run: later calls with it are refused. */
  closeRun(session: RunSession): void {
    session.live = false;
    const hash = this.keys.get(session);
    if (hash !== undefined) this.sessions.delete(hash);
  }

  /** Resolves once the day's spend so far is on disk. */
  flushSpend(): Promise<void> {
    return this.ledger.flush();
  }

  /** Live runs (for tests and the status of the gateway). */
  get liveRuns(): number {
    return this.sessions.size;
  }

  private handler(bound?: RunSession): http.RequestListener {
    return (req, res) => {
      this.proxy(req, res, bound).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    };
  }

  /** The TCP listener's handler (every run, keyed by token), for a server that serves more than the gateway. */
  requestListener(): http.RequestListener {
    return this.handler();
  }

  private server(bound?: RunSession): http.Server {
    return createLimitedServer(this.options.listeners ?? {}, this.handler(bound), { keepAlive: true });
  }

  /** One run's unix socket: only that run's token is accepted on it. */
  async listenUnix(socketPath: string, session: RunSession, access: SocketAccess): Promise<Listening> {
    const server = this.server(session);
    const stop = serve(server);
    await listenUnix(server, socketPath, access);
    const close = async () => {
      await stop();
      await unlink(socketPath).catch(() => undefined);
    };
    return { address: socketPath, close };
  }

  /** One TCP listener for every run, keyed by token. */
  async listenTcp(host: string, port = 0): Promise<Listening> {
    const server = this.server();
    const close = serve(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return { address: `http://${shown}:${addr.port}`, close };
  }
}

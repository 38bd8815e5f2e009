import { closeSync, openSync, constants as fsConstants } from 'node:fs';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { createLimitedServer, readLimitedBody, type ListenerLimits } from '../../util/http-limits.js';
import { MAX_REQUEST_BYTES } from '../guard/protocol.js';
import { checkBearer, type RunTokens } from './tokens.js';

// The kubectl broker for agents that cannot reach a unix socket in their run bundle (Kubernetes Jobs on
// other nodes): one HTTP listener on a port of the daemon's Service. A call is `POST /v1/kubectl` with
// `Authorization: Bearer <run token>` and the guard's JSON request as its body. The token names the run;
// the call is handed to that run's own broker (its unix socket, src/kubectl/broker/broker.ts) byte for
// byte, so it is decided by the persona's policy and recorded in cluster-calls.jsonl exactly as under
// docker, and the answer streams back as the same frames. A missing, unknown or expired token gets 401
// and never reaches a broker. The same port serves the model gateway to pods (`gateway`): a request
// under one of its prefixes (`/anthropic/…`) goes to it, and it checks the run's gateway token itself;
// and an agent pod's run files (`files`, `/v1/run-files/…`), which check the run's files token.

export const POD_BROKER_PATH = '/v1/kubectl';
const REQUEST_TIMEOUT_MS = 10_000;
/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;

/** What a run token opens: the run's own broker socket. */
export interface PodBrokerTarget {
  socketPath: string;
}

export interface PodBrokerOptions {
  host: string;
  port: number;
  tokens: RunTokens<PodBrokerTarget>;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  /** Served on the same port: requests whose first path segment is one of `prefixes` go to `listener`. */
  gateway?: { prefixes: readonly string[]; listener: RequestListener };
  /** Served on the same port: requests whose path begins with `prefix` go to `handle` (an agent pod's run files). */
  files?: { prefix: string; handle: RequestListener };
  /** Connections and header/body timeouts of the port (the model gateway's, when it serves one). */
  limits?: ListenerLimits;
}

export interface PodBroker {
  readonly port: number;
  readonly tokens: RunTokens<PodBrokerTarget>;
  close(): Promise<void>;
}

/** Connects to a unix socket; a path too long for an address is reached through its folder's descriptor. */
function connectUnix(socketPath: string): net.Socket {
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return net.createConnection(socketPath);
  const fd = openSync(path.dirname(socketPath), fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
  const socket = net.createConnection(`/proc/self/fd/${fd}/${path.basename(socketPath)}`);
  const release = () => closeSync(fd);
  socket.once('connect', release);
  socket.once('error', () => socket.connecting && release());
  return socket;
}

function refuse(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close', ...extra });
  res.end(`kubectl guard: ${message}\n`);
}

const WHY: Record<'missing' | 'unknown' | 'expired', string> = {
  missing:
    'the call carries no run token (Authorization: Bearer …); only the agent of a running investigation may call',
  unknown: 'the run token is not one of a running investigation; the call was refused',
  expired: 'the run token has expired (its run is over or past its time limit); the call was refused',
};

export async function startPodBroker(options: PodBrokerOptions): Promise<PodBroker> {
  const { tokens, log } = options;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://broker');
    if (url.pathname !== POD_BROKER_PATH)
      return refuse(res, 404, `no such endpoint ${url.pathname}; use POST ${POD_BROKER_PATH}`);
    if (req.method !== 'POST') return refuse(res, 405, `use POST ${POD_BROKER_PATH}`, { allow: 'POST' });
    const check = checkBearer(tokens, req, log, 'kubectl broker call refused: bad run token');
    if (!check.ok) return refuse(res, 401, WHY[check.reason], { 'www-authenticate': 'Bearer' });
    const body = await readLimitedBody(req, MAX_REQUEST_BYTES, REQUEST_TIMEOUT_MS);
    if (body === undefined)
      return refuse(res, 408, `the request was not read within ${REQUEST_TIMEOUT_MS} ms`);
    if (body === 'too large')
      return refuse(res, 413, `the request is longer than ${MAX_REQUEST_BYTES} bytes`);
    const socket = connectUnix(check.target.socketPath);
    let answered = false;
    socket.on('connect', () => {
      answered = true;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
      res.flushHeaders();
      // The broker reads one line: the request, then keeps its side open while the call runs.
      socket.write(body.at(-1) === 0x0a ? body : Buffer.concat([body, Buffer.from('\n')]));
      socket.pipe(res);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (answered) return void res.destroy();
      log.warn(
        { runId: check.runId, err: err.code ?? err.message },
        "the run's kubectl broker cannot be reached",
      );
      refuse(
        res,
        503,
        `the run's kubectl broker is not listening (${err.code ?? err.message}); the run may be ending`,
      );
    });
    // The caller went away (its kubectl was interrupted): the broker reads our end as that and stops the call.
    res.on('close', () => {
      if (!socket.destroyed) socket.end();
    });
  };

  const gatewayPrefixes = new Set(options.gateway?.prefixes ?? []);
  // A kubectl call's body is read within REQUEST_TIMEOUT_MS by its handler; the limits given bound
  // every connection, a model call's included.
  const limits = { headersTimeoutMs: REQUEST_TIMEOUT_MS, requestTimeoutMs: 0, ...options.limits };
  const server: Server = createLimitedServer(limits, (req, res) => {
    const first = (req.url ?? '/').split(/[/?]/)[1] ?? '';
    if (options.gateway && gatewayPrefixes.has(first)) return options.gateway.listener(req, res);
    if (options.files && (req.url ?? '').startsWith(options.files.prefix))
      return options.files.handle(req, res);
    handle(req, res).catch(() => refuse(res, 500, 'the broker failed to handle the call'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  log.info(
    { host: options.host, port, modelGateway: options.gateway !== undefined },
    'kubectl broker for agent pods listening',
  );
  return {
    port,
    tokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

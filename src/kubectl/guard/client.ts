import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import {
  FRAME_EXIT,
  FRAME_STDERR,
  FRAME_STDOUT,
  FrameReader,
  PROTOCOL_VERSION,
  encodeRequest,
  exitCodeOf,
  type GuardTool,
} from './protocol.js';

// The guard's `kubectl` (and `promql`, the same client for Prometheus): first on the agent's PATH, it
// sends its arguments to the run's broker and plays back what the real kubectl (or the daemon's
// Prometheus client) printed and its exit code. It holds no credentials and decides nothing: the
// broker does both. The broker is a unix socket in the run folder (docker, process)
// or, for an agent pod, an http(s):// URL of the daemon's Service, called with the run's token
// (`POST /v1/kubectl`, same request and frames). Imports node builtins and protocol.js only, because it
// is installed on its own into the agent's environment.

/** Set by the generated `kubectl` wrapper: the broker's socket as the agent sees it, or its URL. */
export const SOCKET_ENV = 'TRIAGE_KUBECTL_BROKER';
/** With a URL: the file holding the run token (next to the wrapper, readable by the agent only). */
export const TOKEN_FILE_ENV = 'TRIAGE_KUBECTL_BROKER_TOKEN_FILE';
/** The pod broker's endpoint under the URL. */
export const BROKER_HTTP_PATH = '/v1/kubectl';
/** Bytes of a refusal's text shown to the caller. */
const MAX_REFUSAL_BYTES = 4096;

export interface ClientIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;

/** Connects to a unix socket; a path too long for an address is reached from its folder. */
function connectUnix(socketPath: string): net.Socket {
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return net.createConnection(socketPath);
  process.chdir(path.dirname(socketPath));
  return net.createConnection(path.basename(socketPath));
}

/** How the client names itself in its own messages. */
const who = (tool: GuardTool): string => (tool === 'kubectl' ? 'kubectl guard' : tool);

/** Runs one kubectl (or promql) call through the broker; resolves with the exit code to exit with. */
export function runClient(
  argv: string[],
  env: Record<string, string | undefined>,
  io: ClientIo,
  connect: (socketPath: string) => net.Socket = connectUnix,
  tool: GuardTool = 'kubectl',
): Promise<number> {
  const socketPath = env[SOCKET_ENV];
  const me = who(tool);
  if (!socketPath) {
    io.stderr.write(`${me}: ${SOCKET_ENV} is not set, so there is no broker to ask\n`);
    return Promise.resolve(1);
  }
  if (/^https?:\/\//.test(socketPath)) return runOverHttp(socketPath, argv, env, io, tool);
  const socket = connect(socketPath);
  socket.on('connect', () => {
    // The write side stays open: the broker reads its end as the caller going away.
    socket.write(encodeRequest(requestOf(argv, env, tool)));
  });
  return playFrames(
    socket,
    io,
    socketPath,
    tool,
    (err) =>
      `${me}: cannot reach the broker at ${socketPath} (${err.code ?? err.message}); ` +
      'the run may be ending, or this environment has no cluster access\n',
  );
}

const requestOf = (argv: string[], env: Record<string, string | undefined>, tool: GuardTool) =>
  tool === 'kubectl'
    ? { v: PROTOCOL_VERSION, argv, ...(env.KUBECONFIG !== undefined ? { kubeconfig: env.KUBECONFIG } : {}) }
    : { v: PROTOCOL_VERSION, tool, argv };

/** Plays frames from a stream to stdout/stderr; resolves with the exit code (1 when none came). */
function playFrames(
  source: NodeJS.ReadableStream & { destroy(): void; pause(): void; resume(): void },
  io: ClientIo,
  where: string,
  tool: GuardTool,
  /** What to say when the stream fails before any answer (a socket that cannot connect). */
  unreachable?: (err: NodeJS.ErrnoException) => string,
): Promise<number> {
  const me = who(tool);
  return new Promise((resolve) => {
    const reader = new FrameReader();
    let exitCode: number | undefined;
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      source.destroy();
      resolve(code);
    };
    const write = (out: NodeJS.WritableStream, payload: Buffer) => {
      // Slow readers (a pipe into `less`) hold the broker back instead of filling memory.
      if (!out.write(payload)) {
        source.pause();
        out.once('drain', () => source.resume());
      }
    };
    source.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = reader.push(chunk);
      } catch (err) {
        io.stderr.write(`${me}: the broker sent something unreadable (${(err as Error).message})\n`);
        return finish(1);
      }
      for (const frame of frames) {
        if (frame.type === FRAME_STDOUT) write(io.stdout, frame.payload);
        else if (frame.type === FRAME_STDERR) write(io.stderr, frame.payload);
        else if (frame.type === FRAME_EXIT) exitCode = exitCodeOf(frame);
      }
    });
    const ended = () => {
      if (done) return;
      if (exitCode !== undefined) return finish(exitCode);
      io.stderr.write(`${me}: the broker at ${where} closed the connection before ${tool} finished\n`);
      finish(1);
    };
    source.on('end', ended);
    source.on('close', ended);
    source.on('error', (err: NodeJS.ErrnoException) => {
      if (exitCode !== undefined || !unreachable) return ended();
      io.stderr.write(unreachable(err));
      finish(1);
    });
    // Output that cannot be delivered (`kubectl logs … | head`) ends the call.
    for (const out of [io.stdout, io.stderr]) out.on('error', () => finish(exitCode ?? 1));
  });
}

/** One call to the pod broker over HTTP with the run token. */
function runOverHttp(
  base: string,
  argv: string[],
  env: Record<string, string | undefined>,
  io: ClientIo,
  tool: GuardTool,
): Promise<number> {
  const me = who(tool);
  const tokenFile = env[TOKEN_FILE_ENV];
  let token: string;
  try {
    if (!tokenFile) throw new Error(`${TOKEN_FILE_ENV} is not set`);
    token = readFileSync(tokenFile, 'utf8').trim();
    if (!token) throw new Error(`${tokenFile} is empty`);
  } catch (err) {
    io.stderr.write(`${me}: no run token for the broker (${(err as Error).message})\n`);
    return Promise.resolve(1);
  }
  const url = new URL(BROKER_HTTP_PATH, base.endsWith('/') ? base : `${base}/`);
  const body = encodeRequest(requestOf(argv, env, tool));
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
      },
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      io.stderr.write(
        `${me}: cannot reach the broker at ${url.origin} (${err.code ?? err.message}); ` +
          'the run may be ending, or this pod may not reach the daemon\n',
      );
      resolve(1);
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_REFUSAL_BYTES) chunks.push(c);
          size += c.length;
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_REFUSAL_BYTES).trim();
          io.stderr.write(`${text || `${me}: the broker answered HTTP ${res.statusCode}`}\n`);
          resolve(1);
        });
        res.on('error', () => resolve(1));
        return;
      }
      void playFrames(res, io, url.origin, tool).then(resolve);
    });
    req.end(body);
  });
}

import { constants as osConstants } from 'node:os';
import { closeSync, openSync, constants as fsConstants } from 'node:fs';
import { chmod, chown, lstat, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { runProcessGroup, type GroupResult } from '../../util/process-group.js';
import type { ClusterCallRecord } from './calls.js';
import { Capture, OUTPUT_PER_CALL_BYTES, type CapturedOutput } from './outputs.js';
import { decideCall, type CallDecision } from '../policy/decide.js';
import { redactArgv } from '../flags.js';
import { errorMessage } from '../../util/errors.js';
import {
  FRAME_STDERR,
  FRAME_STDOUT,
  MAX_REQUEST_BYTES,
  decodeRequest,
  encodeFrame,
  exitFrame,
  type GuardRequest,
} from '../guard/protocol.js';
import type { ToolPolicy } from '../policy/policy.js';

// The kubectl broker of one run: a unix socket the daemon listens on, which the guard's `kubectl`
// (the agent's) connects to. Each call is decided with the shared parser and the persona's policy; an
// allowed call runs the real kubectl (or the eval's frozen-cluster kubectl) with the daemon's cluster
// access, which the agent never holds, and streams its output and exit code back. Every call, allowed
// or refused, is reported to `onCall`.

/** The exit code of a refused call (kubectl's own for a Forbidden answer). */
export const REFUSED_EXIT = 1;
const REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_CONCURRENT = 8;
/** Output buffered for a client that does not read is capped: past it, the call is stopped. */
const MAX_UNREAD_BYTES = 16 * 1024 * 1024;
/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;

export interface BrokerOptions {
  /** Host path of the socket (in the run bundle). */
  socketPath: string;
  policy: ToolPolicy;
  /** What an allowed call runs: the daemon-side kubectl, its environment and working directory. */
  kubectl: {
    command: string;
    env: Record<string, string>;
    cwd: string;
    /** Global flags put before every allowed call's arguments (`--as=<user>` from kubectl.as). */
    prefixArgs?: readonly string[];
  };
  callTimeoutMs: number;
  killGraceMs?: number;
  maxConcurrent?: number;
  /** Who may connect: the socket is chowned to this user when given (a root daemon, a container user). */
  owner?: { uid: number; gid: number };
  /** Default 0o600 with an owner, else 0o666 (a container user the daemon cannot chown to). */
  mode?: number;
  /** Each call's record, and for an allowed call what it returned (bounded per call). */
  onCall: (record: ClusterCallRecord, output?: CapturedOutput) => Promise<unknown> | void;
  /** Bytes of each stream kept per call for `onCall` (default OUTPUT_PER_CALL_BYTES). */
  captureBytes?: number;
  /** Who the calls are recorded as made by (the triage script's broker says `triage`). */
  by?: 'guard' | 'triage';
  now?: () => Date;
}

export interface RunningBroker {
  readonly socketPath: string;
  /** Calls waiting for a free slot (over `maxConcurrent`); what a test awaits instead of a pause. */
  queued(): number;
  /** Stops accepting calls, stops the calls in flight, waits for their records, removes the socket. */
  stop(): Promise<void>;
}

interface Call {
  abort: AbortController;
  done: Promise<void>;
}

/** A socket path short enough for bind(2): a long one is reached through the folder's descriptor. */
function bindablePath(socketPath: string): { path: string; release: () => void } {
  if (Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH_BYTES) return { path: socketPath, release: () => {} };
  const fd = openSync(path.dirname(socketPath), fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
  return { path: `/proc/self/fd/${fd}/${path.basename(socketPath)}`, release: () => closeSync(fd) };
}

/** Removes a socket a previous daemon left at `socketPath`; anything else there is an error. */
async function clearStale(socketPath: string): Promise<void> {
  const info = await lstat(socketPath).catch(() => undefined);
  if (!info) return;
  if (!info.isSocket()) {
    throw new Error(
      `${socketPath} exists and is not a socket; the kubectl broker cannot listen there (remove it and retry the run)`,
    );
  }
  await unlink(socketPath);
}

const signalExit = (signal: string | null): number =>
  signal ? 128 + (osConstants.signals[signal as NodeJS.Signals] ?? 0) : 1;

export async function startBroker(options: BrokerOptions): Promise<RunningBroker> {
  const now = options.now ?? (() => new Date());
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT;
  const calls = new Set<Call>();
  const sockets = new Set<net.Socket>();
  const waiting: (() => void)[] = [];
  let running = 0;
  let stopping = false;

  /** A slot for one kubectl process: at once when one is free, else in turn; false when the call goes away first. */
  const acquire = (signal: AbortSignal): Promise<boolean> => {
    if (signal.aborted) return Promise.resolve(false);
    if (running < maxConcurrent) {
      running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', giveUp);
        running++;
        resolve(true);
      };
      const giveUp = () => {
        const i = waiting.indexOf(wake);
        if (i !== -1) waiting.splice(i, 1);
        resolve(false);
      };
      waiting.push(wake);
      signal.addEventListener('abort', giveUp, { once: true });
    });
  };
  const release = () => {
    running--;
    waiting.shift()?.();
  };

  const by = options.by ?? 'guard';
  const record = async (r: ClusterCallRecord, output?: CapturedOutput) => {
    try {
      await options.onCall(r, output);
    } catch {
      // Recording is the caller's concern; a failed record never changes what the agent got.
    }
  };

  const refusedRecord = (
    at: Date,
    argv: string[],
    decision: Pick<CallDecision, 'shown' | 'rule' | 'message'> & { category: ClusterCallRecord['category'] },
    stderrBytes: number,
  ): ClusterCallRecord => ({
    at: at.toISOString(),
    tool: 'kubectl',
    by,
    argv,
    normalized: decision.shown,
    category: decision.category,
    decision: 'refused',
    rule: decision.rule,
    ...(decision.message ? { message: decision.message } : {}),
    exitCode: REFUSED_EXIT,
    durationMs: 0,
    stdoutBytes: 0,
    stderrBytes,
  });

  const handle = async (socket: net.Socket, request: GuardRequest | string, abort: AbortController) => {
    const at = now();
    const started = performance.now();
    const send = (frame: Buffer) => {
      if (!socket.destroyed) socket.write(frame);
    };
    if (typeof request === 'string') {
      const message = `kubectl guard: the broker could not read the request (${request})`;
      send(encodeFrame(FRAME_STDERR, Buffer.from(`${message}\n`)));
      send(exitFrame(REFUSED_EXIT));
      socket.end();
      await record(
        refusedRecord(
          at,
          [],
          { shown: '', rule: 'guard: malformed request', message, category: 'unknown' },
          Buffer.byteLength(message) + 1,
        ),
      );
      return;
    }
    const argv = redactArgv(request.argv);
    const decision = decideCall(request, options.policy);
    if (!decision.allowed) {
      const text = Buffer.from(`${decision.message ?? 'kubectl guard: refused'}\n`);
      send(encodeFrame(FRAME_STDERR, text));
      send(exitFrame(REFUSED_EXIT));
      socket.end();
      await record(
        refusedRecord(at, argv, { ...decision, category: decision.command.category }, text.length),
      );
      return;
    }
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let overflow = false;
    const captured = {
      stdout: new Capture(options.captureBytes ?? OUTPUT_PER_CALL_BYTES),
      stderr: new Capture(options.captureBytes ?? OUTPUT_PER_CALL_BYTES),
    };
    let result: GroupResult | undefined;
    if (await acquire(abort.signal)) {
      try {
        result = await runProcessGroup({
          command: options.kubectl.command,
          args: [...(options.kubectl.prefixArgs ?? []), ...request.argv],
          cwd: options.kubectl.cwd,
          env: options.kubectl.env,
          timeoutMs: options.callTimeoutMs,
          killGraceMs: options.killGraceMs ?? 2_000,
          signal: abort.signal,
          onData: (chunk, stream) => {
            if (stream === 'stdout') stdoutBytes += chunk.length;
            else stderrBytes += chunk.length;
            captured[stream].add(chunk);
            send(encodeFrame(stream === 'stdout' ? FRAME_STDOUT : FRAME_STDERR, chunk));
            if (socket.writableLength > MAX_UNREAD_BYTES && !overflow) {
              overflow = true;
              abort.abort();
            }
          },
        });
      } finally {
        release();
      }
    }
    let exitCode: number | null = result?.exitCode ?? null;
    let note: string | undefined;
    if (!result) note = 'the call was stopped before kubectl started (the run is ending)';
    else if (result.error) note = `kubectl could not be started (${result.error})`;
    else if (result.timedOut)
      note = `kubectl did not finish within ${options.callTimeoutMs} ms (kubectl.call_timeout) and was stopped`;
    else if (overflow)
      note = `more than ${MAX_UNREAD_BYTES} bytes of output were not read; kubectl was stopped`;
    if (note) {
      const text = Buffer.from(`kubectl guard: ${note}\n`);
      stderrBytes += text.length;
      captured.stderr.add(text);
      send(encodeFrame(FRAME_STDERR, text));
    }
    const code = exitCode ?? (result?.error ? 127 : signalExit(result?.signal ?? null));
    send(exitFrame(code));
    socket.end();
    if (result?.error) exitCode = 127;
    const output: CapturedOutput = {
      stdout: captured.stdout.bytes(),
      stderr: captured.stderr.bytes(),
      droppedStdout: captured.stdout.dropped,
      droppedStderr: captured.stderr.dropped,
    };
    await record(
      {
        at: at.toISOString(),
        tool: 'kubectl',
        by,
        argv,
        normalized: decision.shown,
        category: decision.command.category,
        decision: 'allowed',
        rule: decision.rule,
        exitCode,
        ...(result?.signal ? { signal: result.signal } : {}),
        ...(result?.timedOut ? { timedOut: true } : {}),
        durationMs: Math.round(performance.now() - started),
        stdoutBytes,
        stderrBytes,
      },
      output,
    );
  };

  /** A handler that threw: the caller is told, and the call is recorded as refused. */
  const failed = async (socket: net.Socket, request: GuardRequest | string, err: unknown) => {
    const message = `kubectl guard: the call failed in the broker and was not run (${errorMessage(err)})`;
    try {
      if (!socket.destroyed) {
        socket.write(encodeFrame(FRAME_STDERR, Buffer.from(`${message}\n`)));
        socket.write(exitFrame(REFUSED_EXIT));
        socket.end();
      }
    } catch {
      socket.destroy();
    }
    const argv = typeof request === 'string' ? [] : redactArgv(request.argv);
    await record(
      refusedRecord(
        now(),
        argv,
        { shown: argv.join(' '), rule: 'guard: broker failure', message, category: 'unknown' },
        Buffer.byteLength(message) + 1,
      ),
    );
  };

  /** Reads the one request line (bounded in size and time), then handles the call. */
  const onConnection = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const abort = new AbortController();
    let done!: () => void;
    const call: Call = { abort, done: new Promise<void>((r) => (done = r)) };
    calls.add(call);
    const end = () => {
      calls.delete(call);
      done();
    };
    if (stopping) {
      socket.destroy();
      return end();
    }
    let buffered = Buffer.alloc(0);
    let started = false;
    const begin = (request: GuardRequest | string) => {
      if (started) return;
      started = true;
      socket.setTimeout(0);
      // Whatever fails while handling a call is answered as a refusal; nothing reaches the daemon.
      handle(socket, request, abort)
        .catch((err: unknown) => failed(socket, request, err))
        .finally(end);
    };
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => {
      if (!started) {
        socket.destroy();
        started = true;
        end();
      }
    });
    socket.on('error', () => abort.abort());
    socket.on('data', (chunk: Buffer) => {
      if (started) return;
      buffered = Buffer.concat([buffered, chunk]);
      // The size limit holds before anything is decoded, also when the newline came in this chunk.
      const newline = buffered.indexOf(0x0a);
      const length = newline === -1 ? buffered.length : newline;
      if (length > MAX_REQUEST_BYTES) begin(`longer than ${MAX_REQUEST_BYTES} bytes`);
      else if (newline !== -1) begin(decodeRequest(buffered.subarray(0, newline).toString('utf8')));
    });
    socket.on('end', () => {
      // The client keeps its side open while it waits: its end means it went away (Ctrl-C, a tool
      // timeout, killed), which stops its kubectl.
      if (started) abort.abort();
      // A connection that sent nothing asked for nothing (a probe): no call, no record.
      else if (buffered.length === 0) {
        started = true;
        socket.destroy();
        end();
      } else if (buffered.length > MAX_REQUEST_BYTES) begin(`longer than ${MAX_REQUEST_BYTES} bytes`);
      else begin(decodeRequest(buffered.toString('utf8')));
    });
    socket.on('close', () => abort.abort());
  };

  await clearStale(options.socketPath);
  const server = net.createServer({ allowHalfOpen: true }, onConnection);
  const bind = bindablePath(options.socketPath);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(bind.path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    bind.release();
  }
  await chmod(options.socketPath, options.mode ?? (options.owner ? 0o600 : 0o666));
  if (options.owner) await chown(options.socketPath, options.owner.uid, options.owner.gid);

  return {
    socketPath: options.socketPath,
    queued: () => waiting.length,
    stop: async () => {
      if (stopping) return;
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const left = [...calls];
      for (const call of left) call.abort.abort();
      await Promise.all(left.map((c) => c.done));
      // A caller that keeps its end open must not hold the stop.
      for (const socket of sockets) socket.destroy();
      await closed;
      await unlink(options.socketPath).catch(() => undefined);
    },
  };
}

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
import { handleToolCall, type BrokeredTool, type ToolCallContext } from './tool-call.js';
import { SlotPool } from './slots.js';

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
  /** The sandbox's `promql`, served on the same socket (absent: its calls are answered "not served"). */
  promql?: BrokeredTool;
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

/** What every call of one broker shares. */
interface BrokerContext {
  options: BrokerOptions;
  by: 'guard' | 'triage';
  slots: SlotPool;
  now: () => Date;
}

/** Reports a call; a failed record never changes what the agent got (recording is the caller's concern). */
async function record(ctx: BrokerContext, r: ClusterCallRecord, output?: CapturedOutput): Promise<void> {
  try {
    await ctx.options.onCall(r, output);
  } catch {
    // See above.
  }
}

function refusedRecord(
  ctx: BrokerContext,
  at: Date,
  argv: string[],
  decision: Pick<CallDecision, 'shown' | 'rule' | 'message'> & { category: ClusterCallRecord['category'] },
  stderrBytes: number,
  tool: ClusterCallRecord['tool'] = 'kubectl',
): ClusterCallRecord {
  return {
    at: at.toISOString(),
    tool,
    by: ctx.by,
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
  };
}

/** Answers a refusal (stderr text, then the exit frame) and closes the caller's side. */
function answerRefused(socket: net.Socket, text: Buffer): void {
  if (socket.destroyed) return;
  socket.write(encodeFrame(FRAME_STDERR, text));
  socket.write(exitFrame(REFUSED_EXIT));
  socket.end();
}

/** What an allowed call's kubectl did, as streamed to the caller. */
interface KubectlRun {
  result: GroupResult | undefined;
  stdoutBytes: number;
  stderrBytes: number;
  /** The caller did not read its output: kubectl was stopped. */
  overflow: boolean;
  captured: { stdout: Capture; stderr: Capture };
}

/** Runs the allowed call's kubectl in a slot, streaming its output to the caller as it comes. */
async function runKubectl(
  ctx: BrokerContext,
  socket: net.Socket,
  argv: readonly string[],
  abort: AbortController,
): Promise<KubectlRun> {
  const { options } = ctx;
  const bytes = options.captureBytes ?? OUTPUT_PER_CALL_BYTES;
  const run: KubectlRun = {
    result: undefined,
    stdoutBytes: 0,
    stderrBytes: 0,
    overflow: false,
    captured: { stdout: new Capture(bytes), stderr: new Capture(bytes) },
  };
  if (!(await ctx.slots.acquire(abort.signal))) return run;
  try {
    run.result = await runProcessGroup({
      command: options.kubectl.command,
      args: [...(options.kubectl.prefixArgs ?? []), ...argv],
      cwd: options.kubectl.cwd,
      env: options.kubectl.env,
      timeoutMs: options.callTimeoutMs,
      killGraceMs: options.killGraceMs ?? 2_000,
      signal: abort.signal,
      onData: (chunk, stream) => {
        if (stream === 'stdout') run.stdoutBytes += chunk.length;
        else run.stderrBytes += chunk.length;
        run.captured[stream].add(chunk);
        if (!socket.destroyed)
          socket.write(encodeFrame(stream === 'stdout' ? FRAME_STDOUT : FRAME_STDERR, chunk));
        if (socket.writableLength > MAX_UNREAD_BYTES && !run.overflow) {
          run.overflow = true;
          abort.abort();
        }
      },
    });
  } finally {
    ctx.slots.release();
  }
  return run;
}

/** Why an allowed call has no ordinary exit, told to the caller on stderr; undefined when it has one. */
function runNote(run: KubectlRun, callTimeoutMs: number): string | undefined {
  const { result } = run;
  if (!result) return 'the call was stopped before kubectl started (the run is ending)';
  if (result.error) return `kubectl could not be started (${result.error})`;
  if (result.timedOut)
    return `kubectl did not finish within ${callTimeoutMs} ms (kubectl.call_timeout) and was stopped`;
  if (run.overflow) return `more than ${MAX_UNREAD_BYTES} bytes of output were not read; kubectl was stopped`;
  return undefined;
}

/** One call: decided by the policy, refused or run, answered and recorded. */
async function handleCall(
  ctx: BrokerContext,
  socket: net.Socket,
  request: GuardRequest | string,
  abort: AbortController,
): Promise<void> {
  const at = ctx.now();
  const started = performance.now();
  if (typeof request === 'string') {
    const message = `kubectl guard: the broker could not read the request (${request})`;
    answerRefused(socket, Buffer.from(`${message}\n`));
    const decision = { shown: '', rule: 'guard: malformed request', message, category: 'unknown' as const };
    await record(ctx, refusedRecord(ctx, at, [], decision, Buffer.byteLength(message) + 1));
    return;
  }
  if (request.tool === 'promql') return handleToolCall(toolContext(ctx), socket, request.argv, abort);
  const argv = redactArgv(request.argv);
  const decision = decideCall(request, ctx.options.policy);
  if (!decision.allowed) {
    const text = Buffer.from(`${decision.message ?? 'kubectl guard: refused'}\n`);
    answerRefused(socket, text);
    const refused = { ...decision, category: decision.command.category };
    await record(ctx, refusedRecord(ctx, at, argv, refused, text.length));
    return;
  }
  const run = await runKubectl(ctx, socket, request.argv, abort);
  const { result } = run;
  const note = runNote(run, ctx.options.callTimeoutMs);
  if (note) {
    const text = Buffer.from(`kubectl guard: ${note}\n`);
    run.stderrBytes += text.length;
    run.captured.stderr.add(text);
    if (!socket.destroyed) socket.write(encodeFrame(FRAME_STDERR, text));
  }
  const code = result?.exitCode ?? (result?.error ? 127 : signalExit(result?.signal ?? null));
  if (!socket.destroyed) socket.write(exitFrame(code));
  socket.end();
  const output: CapturedOutput = {
    stdout: run.captured.stdout.bytes(),
    stderr: run.captured.stderr.bytes(),
    droppedStdout: run.captured.stdout.dropped,
    droppedStderr: run.captured.stderr.dropped,
  };
  await record(
    ctx,
    {
      at: at.toISOString(),
      tool: 'kubectl',
      by: ctx.by,
      argv,
      normalized: decision.shown,
      category: decision.command.category,
      decision: 'allowed',
      rule: decision.rule,
      exitCode: result?.error ? 127 : (result?.exitCode ?? null),
      ...(result?.signal ? { signal: result.signal } : {}),
      ...(result?.timedOut ? { timedOut: true } : {}),
      durationMs: Math.round(performance.now() - started),
      stdoutBytes: run.stdoutBytes,
      stderrBytes: run.stderrBytes,
    },
    output,
  );
}

/** What a promql call shares with the broker's kubectl calls: the policy, the slots, the records. */
function toolContext(ctx: BrokerContext): ToolCallContext {
  return {
    tool: ctx.options.promql,
    policy: ctx.options.policy,
    by: ctx.by,
    now: ctx.now,
    acquire: (signal) => ctx.slots.acquire(signal),
    release: () => ctx.slots.release(),
    record: (r, output) => record(ctx, r, output),
  };
}

/** A handler that threw: the caller is told, and the call is recorded as refused. */
async function failedCall(
  ctx: BrokerContext,
  socket: net.Socket,
  request: GuardRequest | string,
  err: unknown,
): Promise<void> {
  const message = `kubectl guard: the call failed in the broker and was not run (${errorMessage(err)})`;
  try {
    answerRefused(socket, Buffer.from(`${message}\n`));
  } catch {
    socket.destroy();
  }
  const argv = typeof request === 'string' ? [] : redactArgv(request.argv);
  const decision = {
    shown: argv.join(' '),
    rule: 'guard: broker failure',
    message,
    category: 'unknown' as const,
  };
  const tool = typeof request !== 'string' && request.tool === 'promql' ? 'prometheus' : 'kubectl';
  await record(ctx, refusedRecord(ctx, ctx.now(), argv, decision, Buffer.byteLength(message) + 1, tool));
}

/**
 * Reads a connection's one request line (bounded in size and time) and hands it to `begin` once; a
 * connection that sends nothing asks for nothing (a probe: no call, no record), and `end` is called
 * then. The client keeps its side open while it waits: its end means it went away (Ctrl-C, a tool
 * timeout, killed), which aborts its call.
 */
function readRequest(
  socket: net.Socket,
  abort: AbortController,
  begin: (request: GuardRequest | string) => void,
  end: () => void,
): void {
  let buffered = Buffer.alloc(0);
  let started = false;
  const start = (request: GuardRequest | string) => {
    if (started) return;
    started = true;
    socket.setTimeout(0);
    begin(request);
  };
  const drop = () => {
    started = true;
    socket.destroy();
    end();
  };
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => {
    if (!started) drop();
  });
  socket.on('error', () => abort.abort());
  socket.on('data', (chunk: Buffer) => {
    if (started) return;
    buffered = Buffer.concat([buffered, chunk]);
    // The size limit holds before anything is decoded, also when the newline came in this chunk.
    const newline = buffered.indexOf(0x0a);
    const length = newline === -1 ? buffered.length : newline;
    if (length > MAX_REQUEST_BYTES) start(`longer than ${MAX_REQUEST_BYTES} bytes`);
    else if (newline !== -1) start(decodeRequest(buffered.subarray(0, newline).toString('utf8')));
  });
  socket.on('end', () => {
    if (started) abort.abort();
    else if (buffered.length === 0) drop();
    else if (buffered.length > MAX_REQUEST_BYTES) start(`longer than ${MAX_REQUEST_BYTES} bytes`);
    else start(decodeRequest(buffered.toString('utf8')));
  });
  socket.on('close', () => abort.abort());
}

/** Listens on the socket path (a stale socket replaced), with the mode and owner the caller needs. */
async function listen(
  options: BrokerOptions,
  onConnection: (socket: net.Socket) => void,
): Promise<net.Server> {
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
  return server;
}

export async function startBroker(options: BrokerOptions): Promise<RunningBroker> {
  const ctx: BrokerContext = {
    options,
    by: options.by ?? 'guard',
    slots: new SlotPool(options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT),
    now: options.now ?? (() => new Date()),
  };
  const calls = new Set<Call>();
  const sockets = new Set<net.Socket>();
  let stopping = false;

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
    // Whatever fails while handling a call is answered as a refusal; nothing reaches the daemon.
    const begin = (request: GuardRequest | string) =>
      void handleCall(ctx, socket, request, abort)
        .catch((err: unknown) => failedCall(ctx, socket, request, err))
        .finally(end);
    readRequest(socket, abort, begin, end);
  };

  const server = await listen(options, onConnection);
  return {
    socketPath: options.socketPath,
    queued: () => ctx.slots.queued,
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

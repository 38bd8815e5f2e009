// The wire format between the guard's `kubectl` and `promql` (the client, on the agent's side) and the
// run's broker (on the daemon's side), over a unix socket. The client sends one JSON line; the broker answers with
// frames: a type byte, a 4-byte big-endian length and the payload (stdout and stderr chunks as they
// come, then the exit code). Imports node builtins only: the client is installed next to it on its own.

export const PROTOCOL_VERSION = 1;
/** A request line longer than this is refused (kubectl's own argument limit is far below it). */
export const MAX_REQUEST_BYTES = 256 * 1024;
export const MAX_ARGS = 4096;
/**
 * One argument's bytes, and all arguments' together: below Linux's 128 KiB per-string limit
 * (MAX_ARG_STRLEN) and far below ARG_MAX, so that an allowed call can always be started (E2BIG).
 */
export const MAX_ARG_BYTES = 32 * 1024;
export const MAX_ARGV_BYTES = 128 * 1024;

export const FRAME_STDOUT = 1;
export const FRAME_STDERR = 2;
export const FRAME_EXIT = 3;
const HEADER_BYTES = 5;
/** A frame longer than this is a protocol error (the broker sends at most one read chunk per frame). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The tools the broker serves: kubectl, and the sandbox's `promql` (Prometheus, read-only). */
export const GUARD_TOOLS = ['kubectl', 'promql'] as const;
export type GuardTool = (typeof GUARD_TOOLS)[number];

export interface GuardRequest {
  v: number;
  /** The tool called; absent means kubectl (what every guard before `promql` sent). */
  tool?: GuardTool;
  /** The arguments after the tool's name. */
  argv: string[];
  /** KUBECONFIG as the caller's environment has it (the broker refuses a call that sets one). */
  kubeconfig?: string;
}

export interface Frame {
  type: number;
  payload: Buffer;
}

export function encodeRequest(request: GuardRequest): Buffer {
  return Buffer.from(`${JSON.stringify(request)}\n`, 'utf8');
}

/** The request, or why it is not one. */
export function decodeRequest(line: string): GuardRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'the request is not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'the request is not a JSON object';
  const r = value as Record<string, unknown>;
  if (r.v !== PROTOCOL_VERSION) return `protocol version ${String(r.v)}, expected ${PROTOCOL_VERSION}`;
  if (!Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string'))
    return 'argv must be an array of strings';
  if (r.argv.length > MAX_ARGS) return `${r.argv.length} arguments, at most ${MAX_ARGS}`;
  let total = 0;
  for (const [i, arg] of (r.argv as string[]).entries()) {
    const bytes = Buffer.byteLength(arg);
    if (bytes > MAX_ARG_BYTES) return `argument ${i + 1} is ${bytes} bytes, at most ${MAX_ARG_BYTES}`;
    total += bytes + 1;
  }
  if (total > MAX_ARGV_BYTES) return `the arguments are ${total} bytes together, at most ${MAX_ARGV_BYTES}`;
  if (r.kubeconfig !== undefined && typeof r.kubeconfig !== 'string') return 'kubeconfig must be a string';
  if (r.tool !== undefined && !GUARD_TOOLS.includes(r.tool as GuardTool))
    return `tool ${JSON.stringify(r.tool)} is not one the broker serves (${GUARD_TOOLS.join(', ')})`;
  return {
    v: PROTOCOL_VERSION,
    ...(r.tool === 'promql' ? { tool: 'promql' as const } : {}),
    argv: r.argv as string[],
    ...(typeof r.kubeconfig === 'string' ? { kubeconfig: r.kubeconfig } : {}),
  };
}

export function encodeFrame(type: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

export function exitFrame(code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeInt32BE(code, 0);
  return encodeFrame(FRAME_EXIT, payload);
}

export const exitCodeOf = (frame: Frame): number =>
  frame.payload.length >= 4 ? frame.payload.readInt32BE(0) : 1;

/** Splits a byte stream into frames; throws on a frame no broker sends. */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Frame[] = [];
    while (this.buffer.length >= HEADER_BYTES) {
      const type = this.buffer.readUInt8(0);
      const length = this.buffer.readUInt32BE(1);
      if (type < FRAME_STDOUT || type > FRAME_EXIT || length > MAX_FRAME_BYTES)
        throw new Error(`unexpected frame (type ${type}, ${length} bytes)`);
      if (this.buffer.length < HEADER_BYTES + length) break;
      frames.push({ type, payload: this.buffer.subarray(HEADER_BYTES, HEADER_BYTES + length) });
      this.buffer = this.buffer.subarray(HEADER_BYTES + length);
    }
    return frames;
  }

  /** Bytes of an unfinished frame. */
  get pending(): number {
    return this.buffer.length;
  }
}

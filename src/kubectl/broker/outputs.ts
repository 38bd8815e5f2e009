import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { fileModeFor } from '../../util/fs.js';
import type { ClusterCallRecord } from './calls.js';

// What each allowed cluster call returned (`cluster-outputs.jsonl`, beside `cluster-calls.jsonl`): one
// JSON line per call with its stdout and stderr, redacted, bounded per call and per run. A cut is
// recorded in the line (how many bytes were dropped, and whether the call's or the run's bound cut it),
// so a reader knows the record is partial. Written by the daemon only, through one handle opened
// without following a link.

/** Bytes of each stream kept per call. */
export const OUTPUT_PER_CALL_BYTES = 256 * 1024;
/** Bytes kept over the whole run (all calls, both streams). */
export const OUTPUT_PER_RUN_BYTES = 16 * 1024 * 1024;

/**
 * What a `promql` call asked Prometheus and what it answered: the API's own JSON, kept beside the text
 * the agent saw so that readers (the evidence check, `eval promote`) read values as fields.
 */
export interface PrometheusExchange {
  /** The read endpoint asked (`query`, `query_range`, …) and its parameters as sent (absolute times). */
  endpoint: string;
  label?: string;
  params: [string, string][];
  /** The HTTP status of the answer and the API's JSON (`{status, data}` or `{status: "error", …}`). */
  httpStatus: number;
  answer: unknown;
}

/** One call's output as the broker captured it (up to its per-call bound). */
export interface CapturedOutput {
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes the broker did not keep past the per-call bound. */
  droppedStdout: number;
  droppedStderr: number;
  /** A Prometheus call's exchange (tool `prometheus`). */
  prometheus?: PrometheusExchange;
}

export interface CallOutputRecord {
  /** The call's number in `cluster-calls.jsonl` (1-based), which holds its decision and exit code. */
  call: number;
  /** Absent for kubectl (every record before `promql`); `prometheus` for a promql call. */
  tool?: 'prometheus';
  by: ClusterCallRecord['by'];
  normalized: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Present when bytes were dropped: how many, and which bound. */
  cut?: { stdoutBytes: number; stderrBytes: number; by: 'call' | 'run'; answerDropped?: true };
  /** A promql call's exchange with Prometheus (absent when it did not fit the bounds: `cut.answerDropped`). */
  prometheus?: PrometheusExchange;
}

/** Keeps the first `max` bytes of what a stream sends, counts the rest. */
export class Capture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;

  constructor(private readonly max: number = OUTPUT_PER_CALL_BYTES) {}

  add(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
    this.dropped += chunk.length - part.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** An open `cluster-outputs.jsonl`: one line per allowed call, within the run's bound. */
export class OutputLog {
  private closed = false;
  private used = 0;

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly redact: (text: string) => string,
    private readonly perRun: number,
  ) {}

  static async open(
    file: string,
    redact: (text: string) => string = (t) => t,
    perRun: number = OUTPUT_PER_RUN_BYTES,
  ): Promise<OutputLog> {
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    const handle = await open(file, flags, fileModeFor(file));
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      throw new Error(
        `${file} is not a regular file; remove it so the run can record its cluster call outputs`,
      );
    }
    const log = new OutputLog(file, handle, redact, perRun);
    log.used = info.size;
    return log;
  }

  async append(
    call: number,
    record: Pick<ClusterCallRecord, 'by' | 'normalized' | 'exitCode'> & { tool?: ClusterCallRecord['tool'] },
    output: CapturedOutput,
  ): Promise<void> {
    if (this.closed) return;
    let stdout = output.stdout;
    let stderr = output.stderr;
    let cutBy: 'call' | 'run' | undefined =
      output.droppedStdout + output.droppedStderr > 0 ? 'call' : undefined;
    const room = Math.max(0, this.perRun - this.used);
    let droppedStdout = output.droppedStdout;
    let droppedStderr = output.droppedStderr;
    if (stdout.length + stderr.length > room) {
      // stderr says why a call failed: it keeps its place first.
      const keepErr = Math.min(stderr.length, room);
      const keepOut = Math.min(stdout.length, room - keepErr);
      droppedStderr += stderr.length - keepErr;
      droppedStdout += stdout.length - keepOut;
      stderr = stderr.subarray(0, keepErr);
      stdout = stdout.subarray(0, keepOut);
      cutBy = 'run';
    }
    this.used += stdout.length + stderr.length;
    const exchange = this.exchangeWithin(output.prometheus, room - stdout.length - stderr.length);
    const line: CallOutputRecord = {
      call,
      ...(record.tool === 'prometheus' ? { tool: 'prometheus' as const } : {}),
      by: record.by,
      normalized: record.normalized,
      exitCode: record.exitCode,
      stdout: this.redact(stdout.toString('utf8')),
      stderr: this.redact(stderr.toString('utf8')),
      ...(cutBy || exchange.dropped
        ? {
            cut: {
              stdoutBytes: droppedStdout,
              stderrBytes: droppedStderr,
              by: cutBy ?? exchange.dropped ?? 'call',
              ...(exchange.dropped ? { answerDropped: true as const } : {}),
            },
          }
        : {}),
    };
    await this.handle.write(`${this.withExchange(line, exchange.text)}\n`);
  }

  /**
   * A Prometheus exchange as redacted JSON text, when it fits the call's bound and the run's room;
   * otherwise which bound dropped it.
   */
  private exchangeWithin(
    exchange: PrometheusExchange | undefined,
    room: number,
  ): { text?: string; dropped?: 'call' | 'run' } {
    if (!exchange) return {};
    const text = JSON.stringify(exchange);
    const bytes = Buffer.byteLength(text);
    if (bytes > OUTPUT_PER_CALL_BYTES * 4) return { dropped: 'call' };
    if (bytes > room) return { dropped: 'run' };
    this.used += bytes;
    return { text: this.redact(text) };
  }

  /** The record's JSON line with the exchange in it (left out when redaction left it unreadable). */
  private withExchange(line: CallOutputRecord, exchange: string | undefined): string {
    const json = JSON.stringify(line);
    if (exchange === undefined) return json;
    try {
      JSON.parse(exchange);
    } catch {
      return JSON.stringify({
        ...line,
        cut: { ...(line.cut ?? { stdoutBytes: 0, stderrBytes: 0, by: 'call' }), answerDropped: true },
      });
    }
    return `${json.slice(0, -1)},"prometheus":${exchange}}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/** Reads a `cluster-outputs.jsonl` back; lines that are not records are skipped. */
export async function readOutputLog(file: string): Promise<CallOutputRecord[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const out: CallOutputRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line) as Partial<CallOutputRecord> | null;
      if (
        value &&
        Number.isInteger(value.call) &&
        typeof value.stdout === 'string' &&
        typeof value.stderr === 'string' &&
        typeof value.normalized === 'string' &&
        (value.exitCode === null || Number.isInteger(value.exitCode))
      )
        out.push(value as CallOutputRecord);
    } catch {
      // A torn last line (a daemon killed mid-write) is not a record.
    }
  }
  return out;
}

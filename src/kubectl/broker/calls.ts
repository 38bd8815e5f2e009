import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { fileModeFor } from '../../util/fs.js';
import type { KubectlCategory } from '../policy/classify.js';

// The run bundle's record of every cluster call the agent made (`cluster-calls.jsonl`): one JSON line
// per call, allowed or refused, written by the daemon (never by the agent). The file is created before
// the agent starts and written through that one handle, so nothing the agent plants at its name is
// ever written through.

export interface ClusterCallRecord {
  at: string;
  /** kubectl; helm only in the CLI's own refusals (the guard brokers kubectl); prometheus for `promql`. */
  tool: 'kubectl' | 'helm' | 'prometheus';
  /** Who decided: the kubectl guard (the broker), the agent CLI's own permission rules, or the triage script's calls through the broker. */
  by: 'guard' | 'cli' | 'triage';
  /** Arguments after the tool's name, credential flag values redacted. */
  argv: string[];
  /** The command as the shared parser normalises it (redacted), or the shell text a CLI refused. */
  normalized: string;
  category: KubectlCategory;
  decision: 'allowed' | 'refused';
  /** The rule that decided (`exclude "kubectl @mutate"`, `guard: --server`, `claude permission rules`). */
  rule: string;
  /** What the agent was told when refused. */
  message?: string;
  /** kubectl's exit code (allowed), or the guard's (refused); null when kubectl was killed. */
  exitCode: number | null;
  signal?: string;
  timedOut?: boolean;
  durationMs: number;
  stdoutBytes: number;
  stderrBytes: number;
  /** The cluster registry entry the call was made against (absent without a registry entry for the run). */
  cluster?: string;
  /** The record's number in the log (1-based), set when written; its output in `cluster-outputs.jsonl` carries it. */
  call?: number;
}

export interface CallCounts {
  calls: number;
  refused: number;
}

/** An open `cluster-calls.jsonl`: appends one line per record, counts them (kubectl and Prometheus apart). */
export class CallLog {
  private closed = false;
  /** Every record's number: its place in the log. */
  private numbered = 0;
  private readonly counts: CallCounts = { calls: 0, refused: 0 };
  private readonly prometheus: CallCounts = { calls: 0, refused: 0 };

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly redact: (text: string) => string,
  ) {}

  /**
   * Opens `file` for appending without following a symlink at its place; it must be a regular file
   * (created when missing, kept and counted when a daemon takes over a run).
   */
  static async open(file: string, redact: (text: string) => string = (t) => t): Promise<CallLog> {
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    const handle = await open(file, flags, fileModeFor(file));
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      throw new Error(`${file} is not a regular file; remove it so the run can record its cluster calls`);
    }
    const log = new CallLog(file, handle, redact);
    for (const record of parseCallLog(await handle.readFile('utf8')).records) log.count(record);
    return log;
  }

  private count(record: Pick<ClusterCallRecord, 'decision' | 'tool'>): void {
    this.numbered++;
    const counts = record.tool === 'prometheus' ? this.prometheus : this.counts;
    counts.calls++;
    if (record.decision === 'refused') counts.refused++;
  }

  /** Appends the record; returns its number in the log (1-based), which its recorded output carries. */
  async append(record: ClusterCallRecord): Promise<number> {
    this.count(record);
    const call = this.numbered;
    if (this.closed) return call;
    await this.handle.write(`${this.redact(JSON.stringify({ ...record, call }))}\n`);
    return call;
  }

  /** The cluster tools' calls (kubectl, and helm refused by a CLI), or the `promql` calls to Prometheus. */
  totals(tool: 'kubectl' | 'prometheus' = 'kubectl'): CallCounts {
    return { ...(tool === 'prometheus' ? this.prometheus : this.counts) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/** Reads a `cluster-calls.jsonl` back; lines that are not records are skipped and counted. */
export async function readCallLog(
  file: string,
): Promise<{ records: ClusterCallRecord[]; unreadable: number }> {
  return parseCallLog(await readFile(file, 'utf8').catch(() => ''));
}

function parseCallLog(text: string): { records: ClusterCallRecord[]; unreadable: number } {
  const records: ClusterCallRecord[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line) as Partial<ClusterCallRecord> | null;
      // What the evidence check and the result read of each call: a line without it is unreadable.
      if (
        value &&
        typeof value.normalized === 'string' &&
        typeof value.decision === 'string' &&
        typeof value.by === 'string' &&
        Array.isArray(value.argv) &&
        value.argv.every((a) => typeof a === 'string') &&
        (value.exitCode === null || Number.isInteger(value.exitCode))
      )
        records.push(value as ClusterCallRecord);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { records, unreadable };
}

import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { fileModeFor } from '../util/fs.js';
import type { ModelCallRecord } from './types.js';

// The run bundle's `model-calls.jsonl`: one JSON line per model call, written by the daemon through one
// handle opened without following a link (the agent can write in the bundle, never through this file).

export class ModelCallLog {
  private closed = false;
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly redact: (text: string) => string,
  ) {}

  static async open(file: string, redact: (text: string) => string = (t) => t): Promise<ModelCallLog> {
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
    const handle = await open(file, flags, fileModeFor(file));
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      throw new Error(`${file} is not a regular file; remove it so the run can record its model calls`);
    }
    return new ModelCallLog(file, handle, redact);
  }

  /** Appends in call order (calls that end together are written one after the other). */
  append(record: ModelCallRecord): Promise<void> {
    const line = `${this.redact(JSON.stringify(record))}\n`;
    this.chain = this.chain.then(async () => {
      if (!this.closed) await this.handle.write(line);
    });
    return this.chain;
  }

  async close(): Promise<void> {
    await this.chain.catch(() => undefined);
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * Whether a parsed line is a record as ModelCallLog writes it, with every field the totals and the
 * result read (`at` a date, counts finite): the file sits in the run bundle, where a damaged or
 * edited line must not fail a restored run or its result.
 */
function isModelCallRecord(value: unknown): value is ModelCallRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<Record<keyof ModelCallRecord, unknown>>;
  const tokens = r.tokens as Partial<Record<keyof ModelCallRecord['tokens'], unknown>> | null;
  return (
    Number.isInteger(r.status) &&
    typeof r.provider === 'string' &&
    typeof r.at === 'string' &&
    !Number.isNaN(Date.parse(r.at)) &&
    isCount(r.latencyMs) &&
    typeof tokens === 'object' &&
    tokens !== null &&
    isCount(tokens.input) &&
    isCount(tokens.output) &&
    isCount(tokens.cacheRead) &&
    isCount(tokens.cacheWrite) &&
    (r.costUsd === undefined || isCount(r.costUsd)) &&
    (r.refused === undefined || typeof r.refused === 'string') &&
    (r.toolUse === undefined || typeof r.toolUse === 'boolean')
  );
}

/** Reads a `model-calls.jsonl` back; lines that are not records (see isModelCallRecord) are skipped. */
export async function readModelCalls(file: string): Promise<ModelCallRecord[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      const value: unknown = JSON.parse(line);
      return isModelCallRecord(value) ? [value] : [];
    } catch {
      return [];
    }
  });
}

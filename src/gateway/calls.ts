import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { ModelCallRecord } from './types.js';

// The run bundle's `model-calls.jsonl`: one JSON line per model call, written by the daemon through one
// handle opened without following a link (the agent can write in the bundle, never through this file).

export const MODEL_CALLS_FILE = 'model-calls.jsonl';

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
    const handle = await open(file, flags, 0o644);
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

/** Reads a `model-calls.jsonl` back; lines that are not records are skipped. */
export async function readModelCalls(file: string): Promise<ModelCallRecord[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      const value = JSON.parse(line) as ModelCallRecord;
      return value && typeof value.status === 'number' && typeof value.provider === 'string' ? [value] : [];
    } catch {
      return [];
    }
  });
}

import { field, isRecord, num, tryParseJson, type JsonRecord } from './json.js';

// Reading a CLI's streamed events as they arrive (Claude's and Gemini's stream-json, Codex's --json lines): turns,
// tokens and the last tool so far, and an authentication failure the CLI would otherwise retry for
// minutes. What an adapter's `progress()` returns.

export interface ProgressUpdate {
  turns?: number;
  tokens?: { input: number; output: number };
  lastTool?: string;
  /** The model API refused the credentials: stop the run now, with this reason. */
  authFailure?: string;
  /** The CLI is retrying the model API ("retrying the model API: could not connect, attempt 3 of 10"). */
  retrying?: string;
}

export interface ProgressReader {
  /** A chunk of the CLI's stdout; returns what changed, if anything. */
  push(chunk: Buffer): ProgressUpdate | undefined;
}

/** Longest event line looked at (a longer one is skipped, not buffered without bound). */
const MAX_LINE_CHARS = 1024 * 1024;

/** A reader that splits stdout into JSON lines and hands each object to `onEvent`. */
export function jsonLineReader(onEvent: (event: JsonRecord, update: ProgressUpdate) => void): ProgressReader {
  let pending = '';
  let skipping = false;
  return {
    push(chunk) {
      pending += chunk.toString('utf8');
      const update: ProgressUpdate = {};
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (skipping) {
          skipping = false;
          continue;
        }
        const value = line.startsWith('{') ? tryParseJson(line) : undefined;
        if (isRecord(value)) onEvent(value, update);
      }
      if (pending.length > MAX_LINE_CHARS) {
        pending = '';
        skipping = true;
      }
      return Object.keys(update).length > 0 ? update : undefined;
    },
  };
}

/** HTTP statuses that mean the credentials were refused. */
export const isAuthStatus = (status: unknown): boolean => status === 401 || status === 403;

/** Adds usage to a running total (fields may be missing or null). */
export function addTokens(
  total: { input: number; output: number },
  usage: unknown,
  inputKeys: string[],
  outputKey: string,
): { input: number; output: number } {
  return {
    input: total.input + inputKeys.reduce((sum, k) => sum + num(field(usage, k)), 0),
    output: total.output + num(field(usage, outputKey)),
  };
}

import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { KubectlCategory } from '../../kubectl/policy/classify.js';
import type { AnsweredFrom } from './output.js';

// The run bundle's record of every kubectl call (`kubectl-calls.jsonl`): one JSON line per call,
// appended with a single write so parallel calls never interleave. The scorer reads it back.

export const CALLS_FILE = 'kubectl-calls.jsonl';
/** The violation of a call that reached another of the case's frozen clusters than the incident's. */
export const WRONG_CLUSTER = 'wrong-cluster';

export interface KubectlCallRecord {
  at: string;
  /** Who called: the triage script (preload) or the agent. */
  stage: 'triage' | 'agent';
  /** Arguments after `kubectl`, credential flag values redacted. */
  argv: string[];
  normalized: string;
  category: KubectlCategory;
  exitCode: number;
  answeredFrom: AnsweredFrom;
  /** A forbidden call, or `wrong-cluster`: answered from a frozen cluster that is not the incident's. */
  violation?: { category: KubectlCategory | typeof WRONG_CLUSTER; reason: string };
  /** The frozen cluster that answered, when the case holds more than one. */
  cluster?: string;
  durationMs: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/**
 * Where calls are recorded: `kubectl-calls.jsonl` in $TRIAGE_NOTES_DIR (an agent's, the one folder of
 * its run it may write), else in $TRIAGE_RUN_DIR (a triage script's), else next to the shim.
 */
export function callsFile(env: Record<string, string | undefined>, shimDir: string): string {
  return path.join(env.TRIAGE_NOTES_DIR || env.TRIAGE_RUN_DIR || shimDir, CALLS_FILE);
}

/** Appends one record; returns the error text when the file cannot be written. */
export function appendCall(file: string, record: KubectlCallRecord): string | undefined {
  try {
    appendFileSync(file, `${JSON.stringify(record)}\n`, { flag: 'a' });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

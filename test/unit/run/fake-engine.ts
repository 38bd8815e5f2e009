// A scripted Engine for executor unit tests: it plays an agent (writes the report into the host folder
// mounted at /workspace/output, prints output) and records what the pipeline asked of it.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WaitTimeoutError } from '../../../src/engines/labels.js';
import { StartGate } from '../../../src/engines/start-gate.js';
import type { Engine, RunExit, RunHandle, RunInfo, RunSpec, StopSignal } from '../../../src/engines/types.js';
import { TransientError } from '../../../src/util/errors.js';

export interface FakeBehaviour {
  exitCode?: number;
  stdout?: string;
  stderr?: string;
  /** Report text written to output/investigation.md (undefined: none). */
  report?: string;
  /** Never exits by itself; signals in `honour` end it with 128+n. */
  hang?: boolean;
  honour?: StopSignal[];
  startError?: Error;
  pingError?: Error;
}

const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 };

export const GOOD_REPORT = `# Investigation Report\n\n## 🔎 Summary\nThe pod crash-loops because its config map is missing.\n\n## Root Cause (confirmed)\nA missing key.\n`;

export class FakeEngine implements Engine {
  readonly name = 'docker' as const;
  readonly placement = 'container' as const;
  readonly capabilities = {
    reattachOutput: true,
    reportsOom: true,
    signals: ['SIGINT', 'SIGTERM', 'SIGKILL'] as StopSignal[],
  };
  specs: RunSpec[] = [];
  signals: StopSignal[] = [];
  removed: string[] = [];
  attached: string[] = [];
  listed: RunInfo[] = [];
  private exits = new Map<string, { resolve: (e: RunExit) => void; promise: Promise<RunExit> }>();

  constructor(public behaviour: FakeBehaviour = {}) {}

  async ping(): Promise<void> {
    if (this.behaviour.pingError) throw this.behaviour.pingError;
  }

  private track(id: string) {
    let resolve!: (e: RunExit) => void;
    const promise = new Promise<RunExit>((r) => (resolve = r));
    this.exits.set(id, { resolve, promise });
    return resolve;
  }

  async start(spec: RunSpec): Promise<RunHandle> {
    // As the real engines: beforeStart begins with the start, and a failed start waits for it to end.
    const gate = new StartGate(spec.beforeStart);
    if (this.behaviour.startError) {
      await gate.settled();
      throw this.behaviour.startError;
    }
    await gate.passed();
    this.specs.push(spec);
    const id = `fake-${spec.runId}`;
    const resolve = this.track(id);
    const output = spec.mounts.find((m) => m.target === '/workspace/output');
    if (this.behaviour.report !== undefined && output)
      await writeFile(path.join(output.source, 'investigation.md'), this.behaviour.report);
    if (this.behaviour.stdout) spec.onStdout(Buffer.from(this.behaviour.stdout));
    if (this.behaviour.stderr) spec.onStderr(Buffer.from(this.behaviour.stderr));
    if (!this.behaviour.hang)
      setImmediate(() => resolve({ exitCode: this.behaviour.exitCode ?? 0, signal: null, oomKilled: false }));
    return { engine: 'docker', id, runId: spec.runId };
  }

  async wait(handle: RunHandle, timeoutMs: number): Promise<RunExit> {
    const entry = this.exits.get(handle.id);
    if (!entry) return { exitCode: null, signal: null, oomKilled: false, error: 'unknown' };
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        entry.promise,
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(() => reject(new WaitTimeoutError(handle.id, timeoutMs)), timeoutMs)),
        ),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async signal(handle: RunHandle, signal: StopSignal): Promise<void> {
    this.signals.push(signal);
    const honour = this.behaviour.honour ?? ['SIGINT', 'SIGTERM', 'SIGKILL'];
    if (signal === 'SIGKILL' || honour.includes(signal)) {
      this.exits
        .get(handle.id)
        ?.resolve({ exitCode: 128 + SIGNAL_NUMBERS[signal], signal: null, oomKilled: false });
    }
  }

  async remove(handle: RunHandle): Promise<void> {
    this.removed.push(handle.id);
  }

  async list(labels: Record<string, string>): Promise<RunInfo[]> {
    return this.listed.filter((r) => Object.entries(labels).every(([k, v]) => r.labels[k] === v));
  }

  async find(runId: string): Promise<RunInfo | undefined> {
    return (await this.list({ 'io.triage-runner/run': runId }))[0];
  }

  /** Makes a run "left by a previous daemon" visible to list/wait. */
  orphan(info: RunInfo, exit?: RunExit): void {
    this.listed.push(info);
    const resolve = this.track(info.handle.id);
    if (exit) resolve(exit);
  }

  finish(id: string, exit: RunExit): void {
    this.exits.get(id)?.resolve(exit);
  }

  async attach(handle: RunHandle, onStdout: (c: Buffer) => void): Promise<void> {
    this.attached.push(handle.id);
    if (this.behaviour.stdout) onStdout(Buffer.from(this.behaviour.stdout));
  }

  async close(): Promise<void> {}
}

export const unreachable = () =>
  new TransientError('container engine unreachable at unix:///nowhere.sock (ECONNREFUSED)', {
    code: 'ECONNREFUSED',
  });

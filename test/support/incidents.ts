import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readState, type StateFile } from '../../src/workspace/state.js';
import { eventually } from './wait.js';

// Helpers for intake tests: temp roots, incidents written the way producers write them, polling.

export async function tempRoot(
  prefix = 'triage-intake-',
): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  return { root, cleanup: () => rm(root, { recursive: true, force: true }) };
}

let counter = 0;

export function incidentJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    incidentId: `inc-${process.pid}-${counter}`,
    faultId: `fault-${counter}`,
    cluster: 'prod-1',
    namespace: 'shop',
    resource: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: `web-${counter}`,
      namespace: 'shop',
      uid: `uid-${counter}`,
    },
    faultType: 'CrashLoop',
    severity: 'high',
    context: { restarts: 5 },
    timestamp: '2026-11-22T01:00:00Z',
    ...overrides,
  };
}

/** The producer's atomic path: write a temp file in the folder, rename it to incident.json. */
export async function dropByRename(root: string, folder: string, incident: unknown): Promise<string> {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, 'incident.json.tmp');
  await writeFile(tmp, JSON.stringify(incident, null, 2));
  await rename(tmp, path.join(dir, 'incident.json'));
  return dir;
}

/** The producer's naive path: write incident.json in place, in chunks, with pauses between them. */
export async function dropInChunks(
  root: string,
  folder: string,
  incident: unknown,
  chunks = 3,
  pauseMs = 100,
): Promise<string> {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  const text = JSON.stringify(incident, null, 2);
  const size = Math.ceil(text.length / chunks);
  const { open } = await import('node:fs/promises');
  const handle = await open(path.join(dir, 'incident.json'), 'w');
  try {
    for (let i = 0; i < text.length; i += size) {
      await handle.write(text.slice(i, i + size));
      await handle.sync();
      if (i + size < text.length) await new Promise((r) => setTimeout(r, pauseMs));
    }
  } finally {
    await handle.close();
  }
  return dir;
}

/** Polls until `check` returns a value, or throws after `timeoutMs` saying what it waited for. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<T> {
  return eventually(what, check, timeoutMs, intervalMs);
}

/** Waits until the workspace's state.json is in one of `states`. */
export function waitForState(
  dir: string,
  states: StateFile['state'][],
  timeoutMs = 10_000,
): Promise<StateFile> {
  let last: StateFile | undefined;
  return waitFor(
    `${path.basename(dir)} to reach ${states.join('|')}`,
    async () => {
      const s = (last = await readState(dir));
      return s && states.includes(s.state) ? s : undefined;
    },
    timeoutMs,
  ).catch((err: unknown) => {
    const seen = last
      ? `last seen ${last.state}${last.reason ? ` (${last.reason})` : ''}, ${last.runs.length} run(s)`
      : 'no state.json seen';
    throw new Error(`${(err as Error).message}; ${seen}`);
  });
}

/** Waits until the daemon has let go of the workspace (its lease file is gone): safe to delete it then. */
export function waitForReleased(dir: string, timeoutMs = 10_000): Promise<true> {
  return waitFor(
    `${path.basename(dir)} lease to be released`,
    async () => ((await stat(path.join(dir, '.triage', 'lease')).catch(() => undefined)) ? undefined : true),
    timeoutMs,
  );
}

/** How many times the fake agent (sleep-agent.sh) started in a workspace. */
export async function agentExecutions(dir: string): Promise<number> {
  return (await readFile(path.join(dir, 'agent-executions.log'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.startsWith('start')).length;
}

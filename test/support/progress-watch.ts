// Watches a workspace's state.json while its run goes on and keeps each progress snapshot seen while
// the incident is `running`: what the end-to-end tests check the daemon reports during a run.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface SeenProgress {
  turns: number;
  lastTool?: string;
  elapsedMs: number;
  tokens: { input: number; output: number };
}

/** Polls `<ws>/.triage/state.json` every 100 ms until `stop()`, which resolves with what was seen. */
export function watchProgress(ws: string): { stop: () => Promise<SeenProgress[]> } {
  const seen: SeenProgress[] = [];
  let done = false;
  const loop = (async () => {
    while (!done) {
      const state = await readFile(path.join(ws, '.triage', 'state.json'), 'utf8')
        .then((t) => JSON.parse(t) as { state: string; progress?: SeenProgress })
        .catch(() => undefined);
      if (state?.state === 'running' && state.progress) seen.push(state.progress);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      done = true;
      await loop;
      return seen;
    },
  };
}

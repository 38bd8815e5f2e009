import { readFile } from 'node:fs/promises';
import { z } from '../shared/zod.js';
import type { NotifySinkConfig } from '../config/schema.js';
import { sinkHistoryPath } from '../workspace/layout.js';
import { writeFileAtomic } from '../util/fs.js';

// When each configured sink was first seen, kept under the workspaces root. The start-up catch-up
// delivers a finished incident only to the sinks that were configured when it finished: adding a sink
// must not post every result of the last day to it.

const historySchema = z.object({
  version: z.literal(1),
  sinks: z.record(z.string(), z.object({ type: z.string(), since: z.string() })),
});

type History = z.infer<typeof historySchema>;

/** Sink name → the time (ms) since which it has been configured with its current type. */
export type SinkSince = ReadonlyMap<string, number>;

/**
 * Reads the history, adds the sinks configured now (since `now`), drops the ones no longer configured
 * or whose type changed, and writes it back when it changed. An unreadable history is started afresh:
 * every sink counts as new, so nothing old is posted to it.
 */
export async function recordSinks(
  root: string,
  sinks: readonly Pick<NotifySinkConfig, 'name' | 'type'>[],
  now: number,
): Promise<{ since: SinkSince; problem?: string }> {
  const file = sinkHistoryPath(root);
  let old: History = { version: 1, sinks: {} };
  let problem: string | undefined;
  try {
    const parsed = historySchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
    if (parsed.success) old = parsed.data;
    else problem = `${file} is not a sink history; started afresh`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      problem = `${file} could not be read (${err instanceof Error ? err.message : String(err)}); started afresh`;
  }
  const next: History = { version: 1, sinks: {} };
  for (const sink of sinks) {
    const before = old.sinks[sink.name];
    next.sinks[sink.name] =
      before && before.type === sink.type && !Number.isNaN(Date.parse(before.since))
        ? before
        : { type: sink.type, since: new Date(now).toISOString() };
  }
  if (JSON.stringify(next) !== JSON.stringify(old))
    await writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`);
  const since = new Map(Object.entries(next.sinks).map(([name, s]) => [name, Date.parse(s.since)]));
  return problem === undefined ? { since } : { since, problem };
}

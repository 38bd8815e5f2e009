// A notifier in a process of its own, for crash tests: `finish <workspace>` records and delivers a
// finished incident's notifications as the daemon does when a run ends; `resume <workspace>` does what
// the daemon does at start-up. The configuration comes as JSON in NOTIFY_CHILD_CONFIG.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { listEntries } from '../../src/workspace/outbox.js';
import type { FinalStateRecord } from '../../src/notify/types.js';
import { buildNotifier, notifyConfig, type NotifyConfigInput } from './notify.js';

const [mode, dir] = process.argv.slice(2);
if ((mode !== 'finish' && mode !== 'resume') || !dir) {
  process.stderr.write('usage: notify-child.ts finish|resume <workspace>\n');
  process.exit(2);
}
const { config, env } = notifyConfig(
  JSON.parse(process.env.NOTIFY_CHILD_CONFIG ?? '{}') as NotifyConfigInput,
);
const { notifier } = buildNotifier(config, env);
let keys: string[];
if (mode === 'finish') {
  // As the daemon does once it has written the final state.
  const state = JSON.parse(
    await readFile(path.join(dir, '.triage', 'state.json'), 'utf8'),
  ) as FinalStateRecord;
  const plan = await notifier.notifyFinished(dir, state, state.runs.at(-1)!.id);
  keys = plan.deliveries.map((d) => d.key);
} else {
  await notifier.resumeWorkspace(dir, { catchUp: true });
  keys = (await listEntries(dir)).entries.map((e) => e.key);
}
process.stdout.write(`recorded ${keys.join(',')}\n`);
const entries = await notifier.settle(dir, keys, 30_000);
process.stdout.write(`${JSON.stringify(entries.map((e) => [e.sink, e.status]))}\n`);
await notifier.close();

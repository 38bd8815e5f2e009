import type { AuditLog } from '../audit/log.js';
import { pruneRoot } from '../audit/prune.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';

// memory.retention, as the daemon runs it: a pass over the root at start and every six hours.

/** How often retention runs over the root (and once at start). */
const PRUNE_INTERVAL_MS = 6 * 3600 * 1000;

/** memory.retention: recorded outputs of runs past it are removed, the audit chain recording each. */
export function startPruning(root: string, retentionMs: number, audit: AuditLog, log: Logger) {
  let running: Promise<void> | undefined;
  const pass = () => {
    running ??= pruneRoot(root, { retentionMs, now: Date.now(), audit })
      .then((r) => {
        if (r.runs > 0)
          log.info({ runs: r.runs, files: r.files }, 'retention: recorded outputs of old runs removed');
        for (const problem of r.problems) log.warn({ problem }, 'retention: a workspace could not be pruned');
      })
      .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'retention pass failed'))
      .finally(() => (running = undefined));
  };
  pass();
  const timer = setInterval(pass, PRUNE_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

import { triageDir } from '../workspace/layout.js';
import type { AuditEventType, AuditLog } from '../audit/log.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import type { RunRequest } from './types.js';
import type { AuditFn } from './env.js';

/**
 * A run's audit events: appended in order without waiting for each, held back to share the folder's
 * next write (at most AUDIT_LINGER_MS); the `finished` event waits until every event before it is
 * durable.
 */
export const auditFor =
  (log: AuditLog) =>
  (request: Omit<RunRequest, 'attempt'>) =>
  (runLog: Logger): AuditFn => {
    const pending = new Set<Promise<void>>();
    return (type: AuditEventType, fields: Record<string, unknown> = {}): Promise<void> => {
      const written = log
        .append(
          triageDir(request.workspace.dir),
          {
            type,
            incidentId: request.workspace.incident.incidentId,
            runId: request.runId,
            ...fields,
          },
          // Stage events share the next write; `finished` writes at once, with every event before it.
          { linger: type !== 'finished' },
        )
        .then(
          () => undefined,
          (err: unknown) =>
            runLog.error({ err: errorMessage(err), type }, 'audit event could not be written'),
        );
      pending.add(written);
      void written.then(() => pending.delete(written));
      return type === 'finished' ? Promise.all([...pending]).then(() => undefined) : Promise.resolve();
    };
  };

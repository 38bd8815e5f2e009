import type { Registry } from 'prom-client';
import type { AuditEvent } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { hasVerdict } from '../incident/queries.js';
import type { StateChange } from '../incident/store.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { errorMessage } from '../util/errors.js';
import { registerNotifyMetrics } from './metrics.js';
import { NotifyInputError } from './input.js';
import { Notifier } from './notifier.js';

// Results out, as the daemon wires them: a run that starts is announced to the sinks that keep one
// message per incident (Slack); every incident a run ends with a verdict, one rejected before any run
// and one resolved before its run is recorded in its outbox and delivered to the sinks whose `on`
// lists it; a rating updates the incident's message; at start-up, interrupted deliveries resume.

export interface ResultsOut {
  /** The store applied a change (DaemonDeps.onChange): a launched or finished run is notified. */
  onChange(change: StateChange): void;
  /** Every alert behind an incident whose run already finished resolved: sinks that had it are told. */
  onResolvedAfterRun(dir: string): void;
  /** A responder rated the answer: the incident's one message (Slack's parent) shows it at once. */
  onFeedback(dir: string): void;
  /** Deliveries a crash interrupted, and incidents that finished without one recorded, go out now. */
  resume(root: string): void;
  /** What is not delivered in time stays in the outbox for the next start. */
  close(timeoutMs: number): Promise<void>;
}

export interface ResultsOutDeps {
  secrets: Record<string, string>;
  redactor: Redactor;
  audit: { append(triageDir: string, event: AuditEvent): Promise<unknown> };
  log: Logger;
  registry: Registry;
}

/** Undefined when no sink is configured. */
export function createResultsOut(config: Config, deps: ResultsOutDeps): ResultsOut | undefined {
  if (config.notify.sinks.length === 0) return undefined;
  const { log } = deps;
  const notifier = new Notifier({
    notify: config.notify,
    ...(config.http.public_url ? { publicUrl: config.http.public_url } : {}),
    secrets: deps.secrets,
    redactor: deps.redactor,
    audit: deps.audit,
    log: log.child({ component: 'notify' }),
    metrics: registerNotifyMetrics(deps.registry),
    maxIncidentBytes: config.intake.max_incident_bytes,
  });
  // An incident.json that cannot be read as an incident has nothing to show: said once, not an error.
  const unannounced = (err: unknown, dir: string, msg: string) => {
    if (err instanceof NotifyInputError)
      log.info({ workspace: dir, why: err.message }, 'nothing to notify for this incident');
    else log.error({ err: errorMessage(err), workspace: dir }, msg);
  };
  return {
    onChange({ dir, record, event, run }) {
      if (event.type === 'Launched') {
        void notifier
          .runStarted(dir, record, event.runId, run?.incident)
          .catch((err: unknown) =>
            log.error({ err: errorMessage(err), workspace: dir }, 'start notification could not be recorded'),
          );
        return;
      }
      // Refused before any run (an alert for an unknown cluster): told with its reason. A duplicate is
      // not: the incident it duplicates is the one told.
      if (event.type === 'Invalid' && record.state === 'rejected') {
        void notifier
          .incidentRejected(dir, record)
          .catch((err: unknown) => unannounced(err, dir, 'rejection notification could not be recorded'));
        return;
      }
      if (event.type === 'Resolved' && record.state === 'resolved') {
        void notifier
          .resolvedBeforeRun(dir, record)
          .catch((err: unknown) => unannounced(err, dir, 'resolution notification could not be recorded'));
        return;
      }
      if (event.type !== 'Finished' || !hasVerdict(record.state)) return;
      // What the run produced is in memory; a run recorded without it (none today) is read back.
      void (
        run
          ? notifier.runFinished(dir, record, event.runId, run)
          : notifier.notifyFinished(dir, record, event.runId)
      ).catch((err: unknown) =>
        log.error({ err: errorMessage(err), workspace: dir }, 'notification could not be recorded'),
      );
    },
    onResolvedAfterRun(dir) {
      void notifier
        .incidentResolved(dir)
        .catch((err: unknown) =>
          log.error(
            { err: errorMessage(err), workspace: dir },
            'resolution notification could not be recorded',
          ),
        );
    },
    onFeedback(dir) {
      void notifier
        .feedbackGiven(dir)
        .catch((err: unknown) => unannounced(err, dir, 'feedback update could not be recorded'));
    },
    resume(root) {
      void notifier
        .resumeAll(root, { catchUp: true })
        .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'resuming notifications failed'));
    },
    close: (timeoutMs) => notifier.close(timeoutMs),
  };
}

import { Counter, type Registry } from 'prom-client';

// `notifications_total{sink,outcome}`: delivered and failed count deliveries, retried counts attempts
// that failed and were scheduled again.

export type NotifyOutcome = 'delivered' | 'retried' | 'failed';

export interface NotifyMetrics {
  notification(sink: string, outcome: NotifyOutcome): void;
}

/** Registers the counter on the daemon's registry (never prom-client's global one). */
export function registerNotifyMetrics(registry: Registry, prefix = 'triage_runner_'): NotifyMetrics {
  const counter = new Counter({
    name: `${prefix}notifications_total`,
    help: 'Notification deliveries by sink and outcome (delivered, retried, failed)',
    labelNames: ['sink', 'outcome'],
    registers: [registry],
  });
  return { notification: (sink, outcome) => counter.inc({ sink, outcome }) };
}

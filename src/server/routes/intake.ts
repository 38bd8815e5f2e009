import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalCluster, clusterRegistry } from '../../clusters/registry.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { describeIssues, incidentSchema } from '../../workspace/incident-schema.js';
import {
  mapAlertmanager,
  parseAlertmanager,
  type GroupingOptions,
} from '../../intake/webhooks/alertmanager.js';
import { mapPagerDuty, parsePagerDuty, verifyPagerDutySignature } from '../../intake/webhooks/pagerduty.js';
import type { IntakeHooks } from '../../intake/webhooks/hooks.js';
import { IntakeStore, type IntakeOutcome } from '../../intake/webhooks/store.js';
import type { LeaseIdentity } from '../../workspace/lease.js';
import { errorMessage, isTransient } from '../../util/errors.js';
import type { IntakeMetrics } from '../metrics.js';
import type { RouteModule } from '../types.js';

// POST /v1/alerts/alertmanager, /v1/alerts/pagerduty and /v1/incidents: validate, map, hand to the
// intake store, answer 202 {incidentId, workspace} (and every incident the delivery touched), or a
// 4xx saying what is wrong.
//
// Alerts are answered one by one. Alertmanager counts any 2xx as delivered and retries only a 5xx
// (its notify.Retrier; a 4xx is logged as failed, with our body, and dropped), and it sends every alert
// of a group in one notification. So an alert that cannot become an incident never makes the answer
// 5xx (that would be retried forever into the same answer, holding back the good alerts sent with
// it): the others are taken and the answer is 207 naming the refused ones; when none could be taken
// it is 422, which Alertmanager logs with our message and does not retry. Only a failure of ours (a
// full disk, a replica's lock) is 503, which it retries.

export interface IntakeRoutesOptions {
  store: IntakeStore;
  config: Config;
  /** The PAGERDUTY_WEBHOOK_SECRET value; without it the PagerDuty endpoint answers 503. */
  pagerDutySecret?: string;
  log?: Logger;
  /** Counts what reaches each endpoint and what is refused (/metrics); nothing counted without. */
  metrics?: IntakeMetrics;
}

/**
 * Body of an answered delivery. `incidentId`/`workspace` name the first incident it touched;
 * `incidents` holds one outcome per alert, in order (a refused one says which and why); `message`
 * sums up the refused ones.
 */
export interface IntakeReply {
  incidentId: string | null;
  workspace: string | null;
  incidents: IntakeOutcome[];
  message?: string;
  error?: string;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

const problem = (reply: FastifyReply, status: number, error: string, message: string) =>
  reply.code(status).send({ error, message });

/** Some alerts refused, others taken (207, Multi-Status: a 2xx, so not sent again). */
const PARTLY_TAKEN = 207;
/** Every alert of the delivery refused (a 4xx: the sender logs it and does not send it again). */
const NONE_TAKEN = 422;

/** One line for the refused alerts of a delivery of `total`. */
function refusedMessage(refused: readonly IntakeOutcome[], total: number): string {
  const each = refused.map((o) => {
    const a = o.alert;
    const which = a
      ? `alert ${a.index} (${a.source === 'alertmanager' ? 'fingerprint' : `${a.source} id`} ${a.id}, alertname ${a.alertname})`
      : 'an alert';
    return `${which}: ${o.reason ?? 'refused'}`;
  });
  const others = total - refused.length;
  const taken =
    others === 0 ? 'none was taken' : `the other ${others} ${others === 1 ? 'was' : 'were'} taken`;
  return `${refused.length} of ${total} alert${total === 1 ? '' : 's'} refused, ${taken}: ${each.join('; ')}. Fix the labels of the alerting rule that sends ${refused.length === 1 ? 'it' : 'them'}; sending the same alerts again changes nothing for those taken`;
}

type IntakeSource = 'alertmanager' | 'pagerduty' | 'incident';

function accepted(
  reply: FastifyReply,
  outcomes: IntakeOutcome[],
  counted: { source: IntakeSource; log?: Logger | undefined; metrics?: IntakeMetrics | undefined },
): FastifyReply {
  const { source, log, metrics } = counted;
  const first = outcomes.find((o) => o.workspace !== undefined);
  const body: IntakeReply = {
    incidentId: first?.incidentId ?? null,
    workspace: first?.workspace ?? null,
    incidents: outcomes,
  };
  const refused = outcomes.filter((o) => o.status === 'refused');
  if (refused.length === 0) return reply.code(202).send(body);
  for (const o of refused) {
    metrics?.refused(source, 'invalid_alert');
    log?.warn(
      {
        source: o.alert?.source,
        index: o.alert?.index,
        id: o.alert?.id,
        alertname: o.alert?.alertname,
        reason: o.reason,
      },
      'alert refused: it cannot become an incident',
    );
  }
  const message = refusedMessage(refused, outcomes.length);
  if (refused.length < outcomes.length) return reply.code(PARTLY_TAKEN).send({ ...body, message });
  return reply.code(NONE_TAKEN).send({ error: 'invalid_alerts', message, ...body });
}

export function groupingOptions(config: Config): GroupingOptions {
  const w = config.intake.webhooks;
  return {
    faultTypes: w.fault_types,
    clusterLabels: w.cluster_labels,
    defaultCluster: w.default_cluster,
    canonicalCluster: canonicalCluster(clusterRegistry(config)),
    groupBy: w.group_by,
    stormBy: w.storm_by,
  };
}

export function intakeRoutes(options: IntakeRoutesOptions): RouteModule {
  const { store, config, log, metrics } = options;
  const grouping = groupingOptions(config);
  /** A 4xx of ours, counted as refused under its error word. */
  const refuse = (
    reply: FastifyReply,
    source: IntakeSource,
    status: number,
    error: string,
    message: string,
  ) => {
    metrics?.refused(source, error);
    return problem(reply, status, error, message);
  };
  const taken = (reply: FastifyReply, source: IntakeSource, outcomes: IntakeOutcome[]) =>
    accepted(reply, outcomes, { source, log, metrics });

  /** Writing failed: transient (disk full, a replica's lock) → 503 + Retry-After; else a 500 that is logged. */
  const failed = (reply: FastifyReply, request: FastifyRequest, source: IntakeSource, err: unknown) => {
    metrics?.refused(source, isTransient(err) ? 'unavailable' : 'internal');
    if (isTransient(err))
      return problem(
        reply.header('retry-after', '5'),
        503,
        'unavailable',
        `could not record the delivery now (${errorMessage(err)}): retry later; nothing was lost`,
      );
    log?.error({ url: request.url, err: errorMessage(err) }, 'intake failed');
    return problem(reply, 500, 'internal', `could not record the delivery: ${errorMessage(err)}`);
  };

  return {
    name: 'intake',
    plugin: async (app) => {
      app.addHook('onClose', async () => store.close());

      app.post('/v1/alerts/alertmanager', async (request, reply) => {
        const parsed = parseAlertmanager(request.body);
        if (!parsed.ok) return refuse(reply, 'alertmanager', 400, 'invalid_payload', parsed.message);
        const alerts = mapAlertmanager(parsed.value, grouping);
        metrics?.received('alertmanager', alerts.length);
        try {
          return taken(reply, 'alertmanager', await store.submitAlerts(alerts));
        } catch (err) {
          return failed(reply, request, 'alertmanager', err);
        }
      });

      app.post('/v1/alerts/pagerduty', { config: { auth: 'signature' } }, async (request, reply) => {
        if (!options.pagerDutySecret)
          return refuse(
            reply,
            'pagerduty',
            503,
            'not_configured',
            'PagerDuty intake is off: the PAGERDUTY_WEBHOOK_SECRET secret is not set on this server (secrets.PAGERDUTY_WEBHOOK_SECRET), so signatures cannot be verified',
          );
        const signature = request.headers['x-pagerduty-signature'];
        const check = verifyPagerDutySignature(
          request.rawBody ?? Buffer.alloc(0),
          Array.isArray(signature) ? signature.join(',') : signature,
          options.pagerDutySecret,
        );
        if (!check.ok) return refuse(reply, 'pagerduty', 401, 'invalid_signature', check.message);
        const parsed = parsePagerDuty(request.body);
        if (!parsed.ok) return refuse(reply, 'pagerduty', 400, 'invalid_payload', parsed.message);
        const event = mapPagerDuty(parsed.value, grouping);
        if (event.kind === 'invalid')
          return refuse(reply, 'pagerduty', 400, 'invalid_payload', event.message);
        if (event.kind === 'ignored')
          return reply
            .code(200)
            .send({ incidentId: null, workspace: null, incidents: [], ignored: event.reason });
        metrics?.received('pagerduty');
        try {
          return taken(reply, 'pagerduty', await store.submitAlerts([event.alert]));
        } catch (err) {
          return failed(reply, request, 'pagerduty', err);
        }
      });

      app.post('/v1/incidents', async (request, reply) => {
        const size = request.rawBody?.length ?? 0;
        const max = config.intake.max_incident_bytes;
        if (size > max)
          return refuse(
            reply,
            'incident',
            413,
            'incident_too_large',
            `incident is ${size} bytes, over the ${max}-byte limit for incident.json (intake.max_incident_bytes): shrink it (move bulky context into a file the agent can read)`,
          );
        const parsed = incidentSchema.safeParse(request.body);
        if (!parsed.success)
          return refuse(
            reply,
            'incident',
            400,
            'invalid_incident',
            `body does not match the incident schema (${describeIssues(parsed.error.issues)}): send incident.json as a file drop would`,
          );
        const header = request.headers['idempotency-key'];
        if (header !== undefined && (Array.isArray(header) || !IDEMPOTENCY_KEY.test(header)))
          return refuse(
            reply,
            'incident',
            400,
            'invalid_idempotency_key',
            'Idempotency-Key must be one value of 1 to 200 visible ASCII characters',
          );
        const incident = parsed.data;
        metrics?.received('incident');
        try {
          return taken(reply, 'incident', [
            await store.submitIncident(incident, header ?? `id:${incident.incidentId}`),
          ]);
        } catch (err) {
          return failed(reply, request, 'incident', err);
        }
      });
    },
  };
}

export interface IntakeWiring {
  config: Config;
  /** Resolved secrets by name (PAGERDUTY_WEBHOOK_SECRET is read from them). */
  secrets: Readonly<Record<string, string>>;
  hooks: IntakeHooks;
  identity: LeaseIdentity;
  log?: Logger;
  metrics?: IntakeMetrics;
}

/** The intake store and its routes, from configuration: what the daemon command registers. */
export function createIntakeRoutes(wiring: IntakeWiring): RouteModule {
  const { config } = wiring;
  const w = config.intake.webhooks;
  const store = new IntakeStore({
    root: config.workspaces_root,
    windowMs: config.scheduling.dedup_window,
    idempotencyTtlMs: w.idempotency_ttl,
    stormLimit: w.storm_limit,
    maxAlertsPerIncident: w.max_alerts_per_incident,
    hooks: wiring.hooks,
    identity: wiring.identity,
    ...(wiring.log ? { log: wiring.log } : {}),
  });
  return intakeRoutes({
    store,
    config,
    ...(wiring.secrets.PAGERDUTY_WEBHOOK_SECRET
      ? { pagerDutySecret: wiring.secrets.PAGERDUTY_WEBHOOK_SECRET }
      : {}),
    ...(wiring.log ? { log: wiring.log } : {}),
    ...(wiring.metrics ? { metrics: wiring.metrics } : {}),
  });
}

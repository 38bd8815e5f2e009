import { lstat } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import path from 'node:path';
import type { IncidentStore } from '../../incident/store.js';
import type { LeaseOptions } from '../../workspace/lease.js';
import type { Logger } from '../../log/logger.js';
import { Redactor } from '../../log/redact.js';
import { readIncidentDetail, readIncidentReport } from '../../status/detail.js';
import type { IncidentIndex } from '../../status/incident-index.js';
import { MAX_LIMIT, PageQueryError } from '../../status/pages.js';
import { retryIncident, type RetryOutcome } from '../../status/retry.js';
import { resolveIncident, resolutionProblem } from '../../status/resolve.js';
import type { RetryReply } from '../../status/client.js';
import type { IndexEvent } from '../../status/types.js';
import { errorMessage } from '../../util/errors.js';
import type { RouteModule } from '../types.js';
import { statusPageRoutes } from './status-page.js';
import { folderParam, intParam, problem, readOnly, stateParam } from './status-params.js';

// The status API: GET /v1/incidents (from the daemon's in-memory index), GET /v1/incidents/{id} and
// /report (read from the workspace, never through a link), POST /v1/incidents/{id}/retry, and
// GET /v1/events (server-sent events from the index). {id} is the workspace folder's name, or the
// incidentId notifications show (resolved through the index).

/** Concurrent event streams; more are refused with 503 (each holds a socket and a listener). */
const MAX_EVENT_CLIENTS = 64;
/** Concurrent event streams from one client address: one browser cannot take every slot. */
const MAX_EVENT_CLIENTS_PER_ADDRESS = 8;
/** A client that has not read this much of its stream is dropped (it reconnects and starts afresh). */
const MAX_BUFFERED_BYTES = 1 << 20;
const PING_MS = 15_000;

/** What retry needs of the daemon: its store, its lease identity, and a way to look at a folder now. */
export interface RetryHost {
  store: IncidentStore;
  daemonId: string;
  reconsider(dir: string): Promise<void>;
}

export interface StatusRoutesOptions {
  index: IncidentIndex;
  /** What a report is passed through before it is served (default: shapes and pairs, no configured values). */
  redactor?: Redactor;
  /** Re-queues the incident in `dir` (absent: POST .../retry answers 503). */
  retry?: (dir: string, by: string) => Promise<RetryOutcome>;
  now?: () => number;
  log?: Logger;
  maxEventClients?: number;
  maxEventClientsPerAddress?: number;
}

/** Retry through the daemon: the event under the workspace lease, then the daemon looks at the folder. */
export function daemonRetry(host: RetryHost, lease: LeaseOptions, log?: Logger) {
  return async (dir: string, by: string): Promise<RetryOutcome> => {
    const outcome = await retryIncident(dir, by, {
      store: host.store,
      identity: { daemonId: host.daemonId },
      lease,
      waitMs: 2000,
    });
    if (outcome.kind === 'queued')
      void host
        .reconsider(dir)
        .catch((err: unknown) =>
          log?.error(
            { workspace: path.basename(dir), err: errorMessage(err) },
            'looking at a retried incident failed',
          ),
        );
    return outcome;
  };
}

export function statusApiRoutes(options: StatusRoutesOptions): RouteModule {
  const { index, log } = options;
  const redactor = options.redactor ?? new Redactor();
  const now = options.now ?? Date.now;
  const maxClients = options.maxEventClients ?? MAX_EVENT_CLIENTS;
  const maxPerAddress = options.maxEventClientsPerAddress ?? MAX_EVENT_CLIENTS_PER_ADDRESS;
  const streams = new Set<() => void>();
  const perAddress = new Map<string, number>();

  return {
    name: 'status-api',
    plugin: async (app) => {
      app.addHook('onClose', async () => {
        for (const end of [...streams]) end();
      });

      app.get('/v1/incidents', readOnly, async (request, reply) => {
        const q = request.query as Record<string, unknown>;
        const state = stateParam(q.state, reply);
        if (!state.ok) return reply;
        const limit = intParam('limit', q.limit, 1, MAX_LIMIT);
        const offset = intParam('offset', q.offset, 0, Number.MAX_SAFE_INTEGER);
        for (const bad of [limit, offset])
          if (typeof bad === 'string') return problem(reply, 400, 'invalid_query', bad);
        if (q.cursor !== undefined && typeof q.cursor !== 'string')
          return problem(reply, 400, 'invalid_query', 'give cursor once');
        if (q.cluster !== undefined && typeof q.cluster !== 'string')
          return problem(reply, 400, 'invalid_query', 'give cluster once (one cluster name, or an alias)');
        const cluster = typeof q.cluster === 'string' && q.cluster !== '' ? q.cluster : undefined;
        await index.whenLoaded();
        try {
          const body = index.listJson(
            {
              ...(state.state ? { state: state.state } : {}),
              ...(cluster !== undefined ? { cluster } : {}),
              ...(typeof limit === 'number' ? { limit } : {}),
              ...(typeof offset === 'number' ? { offset } : {}),
              ...(typeof q.cursor === 'string' ? { cursor: q.cursor } : {}),
            },
            { root: index.root },
          );
          return reply.type('application/json; charset=utf-8').header('cache-control', 'no-store').send(body);
        } catch (err) {
          if (err instanceof PageQueryError) return problem(reply, 400, 'invalid_cursor', err.message);
          throw err;
        }
      });

      /** The folder `{id}` names (a folder under the root, else an incidentId), or a 4xx sent. */
      const folderOf = async (request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> => {
        const id = folderParam(request, reply);
        if (id === undefined) return undefined;
        const info = await lstat(path.join(index.root, id)).catch(() => undefined);
        if (info?.isDirectory()) return id;
        await index.whenLoaded();
        const found = resolveIncident(index.views(), id);
        if (found.kind === 'found') return found.folder;
        const message = resolutionProblem(found, id, index.root);
        if (found.kind === 'unknown') void problem(reply, 404, 'not_found', message);
        else
          void reply
            .code(409)
            .header('cache-control', 'no-store')
            .send({ error: 'ambiguous_id', message, folders: found.folders });
        return undefined;
      };

      app.get('/v1/incidents/:id', readOnly, async (request, reply) => {
        const folder = await folderOf(request, reply);
        if (folder === undefined) return reply;
        const detail = await readIncidentDetail(index.root, folder, now());
        if (!detail)
          return problem(
            reply,
            404,
            'not_found',
            `no incident ${folder} under ${index.root} (no readable .triage/state.json)`,
          );
        return reply.header('cache-control', 'no-store').send(detail);
      });

      app.get('/v1/incidents/:id/report', readOnly, async (request, reply) => {
        const folder = folderParam(request, reply);
        if (folder === undefined) return reply;
        const report = await readIncidentReport(index.root, folder, now(), redactor);
        if (report.kind === 'none') return problem(reply, 404, 'no_report', report.why);
        return reply
          .type('text/markdown; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox")
          .send(report.text);
      });

      app.post('/v1/incidents/:id/retry', async (request, reply) => {
        if (!options.retry)
          return problem(
            reply,
            503,
            'not_available',
            'retry is not available on this server (no daemon behind it)',
          );
        const folder = await folderOf(request, reply);
        if (folder === undefined) return reply;
        const dir = path.join(index.root, folder);
        const outcome = await options.retry(dir, `http ${request.ip}`);
        if (outcome.kind === 'busy')
          return problem(reply.header('retry-after', '2'), 409, 'busy', outcome.message);
        if (outcome.kind === 'refused')
          return reply
            .code(409)
            .header('cache-control', 'no-store')
            .send({ error: 'not_retryable', message: outcome.message, state: outcome.state ?? null });
        const body: RetryReply = {
          incidentId: outcome.record.incidentId,
          workspace: folder,
          state: outcome.record.state,
          previousState: outcome.previousState,
          attempts: outcome.record.attempts,
        };
        return reply.code(202).header('cache-control', 'no-store').send(body);
      });

      app.get('/v1/events', { ...readOnly, exposeHeadRoute: false }, async (request, reply) => {
        // A refused client's connection is closed, so that refusals hold no descriptor either.
        if (streams.size >= maxClients)
          return problem(
            reply.header('retry-after', '10').header('connection', 'close'),
            503,
            'too_many_streams',
            `${maxClients} event streams are open already: close one, or poll GET /v1/incidents`,
          );
        const address = request.ip;
        const mine = perAddress.get(address) ?? 0;
        if (mine >= maxPerAddress)
          return problem(
            reply.header('retry-after', '10').header('connection', 'close'),
            429,
            'too_many_streams',
            `${maxPerAddress} event streams are open from ${address} already: close one, or poll GET /v1/incidents`,
          );
        perAddress.set(address, mine + 1);
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
          'x-content-type-options': 'nosniff',
        });
        const write = (text: string) => {
          if (res.writableLength > MAX_BUFFERED_BYTES) return end();
          res.write(text);
        };
        const send = (event: IndexEvent) =>
          write(
            event.type === 'upsert'
              ? `event: incident\ndata: ${JSON.stringify({ view: event.view, totals: index.totals() })}\n\n`
              : `event: remove\ndata: ${JSON.stringify({ folder: event.folder, totals: index.totals() })}\n\n`,
          );
        const unsubscribe = index.subscribe(send);
        const ping = setInterval(() => write(': ping\n\n'), PING_MS);
        ping.unref();
        let ended = false;
        function end(): void {
          if (ended) return;
          ended = true;
          clearInterval(ping);
          unsubscribe();
          streams.delete(end);
          const left = (perAddress.get(address) ?? 1) - 1;
          if (left > 0) perAddress.set(address, left);
          else perAddress.delete(address);
          if (!res.writableEnded) res.end();
        }
        streams.add(end);
        res.on('close', end);
        res.on('error', (err) => {
          log?.debug({ err: errorMessage(err) }, 'event stream closed with an error');
          end();
        });
        write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ totals: index.totals() })}\n\n`);
      });
    },
  };
}

export interface StatusWiring {
  index: IncidentIndex;
  /** The daemon's redaction (its configured secret values among them), for the reports served. */
  redactor: Redactor;
  /** The daemon (retry applies its events through its store and has it look at the folder). */
  host: RetryHost;
  lease: LeaseOptions;
  log?: Logger;
}

/** The status API and the status page, as the daemon command registers them. */
export function createStatusRoutes(wiring: StatusWiring): RouteModule[] {
  const { index, log, redactor } = wiring;
  return [
    statusApiRoutes({
      index,
      redactor,
      retry: daemonRetry(wiring.host, wiring.lease, log),
      ...(log ? { log } : {}),
    }),
    statusPageRoutes({ index, redactor }),
  ];
}

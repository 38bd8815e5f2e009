import { readFile } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import { Redactor } from '../../log/redact.js';
import {
  accuracyOverall,
  answerConfidence,
  type AccuracyRow,
  type GradedAnswer,
} from '../../feedback/accuracy.js';
import { readIncidentDetail, readIncidentReport } from '../../status/detail.js';
import type { IncidentIndex } from '../../status/incident-index.js';
import { PageQueryError } from '../../status/pages.js';
import { folderNameProblem } from '../../status/read.js';
import { resolveIncident } from '../../status/resolve.js';
import { renderMarkdown } from '../page/report-html.js';
import { renderIncidentPage, renderListPage, renderProblemPage } from '../page/render.js';
import type { RouteModule } from '../types.js';
import { pageRoute, stateParam } from './status-params.js';

// The status page: GET / (the incidents, updated live by /assets/status.js from GET /v1/events) and
// GET /incidents/{id} (one incident: its report rendered from markdown, context tokens, timeline).
// Read-only. Every page forbids inline script and style and anything from another origin.

/** Rows on one page of the list. */
const PAGE_SIZE = 100;

/** What every page may load: its own script, stylesheet and event stream; nothing inline, nothing else. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const ASSETS: Record<string, string> = {
  'status.js': 'text/javascript; charset=utf-8',
  'status.css': 'text/css; charset=utf-8',
};
const ASSET_DIR = new URL('../page/assets/', import.meta.url);

/** An HTML page with the page's security headers. */
export const pageReply = (reply: FastifyReply, status: number, body: string): FastifyReply =>
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    // same-origin, not no-referrer: with no-referrer a browser posts the feedback form with
    // `Origin: null`, which the cross-site check refuses. Other sites still get no referrer.
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store')
    .send(body);

/** Responders' verdicts over every answered incident in the index (not only this page of the list). */
function accuracyOf(index: IncidentIndex): AccuracyRow {
  const answers: GradedAnswer[] = [];
  for (const v of index.views()) {
    if (v.answer === null) continue;
    const confidence = answerConfidence(v);
    answers.push({
      folder: v.folder,
      agent: v.agent ?? '(none)',
      ...(confidence ? { confidence } : {}),
      ...(v.feedback ? { verdict: v.feedback.verdict } : {}),
    });
  }
  return accuracyOverall(answers);
}

export interface StatusPageOptions {
  index: IncidentIndex;
  now?: () => number;
  /** What a report is passed through before it is shown (default: shapes and pairs, no configured values). */
  redactor?: Redactor;
}

export function statusPageRoutes(options: StatusPageOptions): RouteModule {
  const { index } = options;
  const redactor = options.redactor ?? new Redactor();
  const now = options.now ?? Date.now;
  const assets = new Map<string, Buffer>();
  const asset = async (name: string): Promise<Buffer> => {
    let data = assets.get(name);
    if (!data) {
      data = await readFile(new URL(name, ASSET_DIR));
      assets.set(name, data);
    }
    return data;
  };

  return {
    name: 'status-page',
    plugin: async (app) => {
      app.get('/', pageRoute, async (request, reply) => {
        const q = request.query as Record<string, unknown>;
        const state = stateParam(q.state, reply);
        if (!state.ok) return reply;
        const cursor = typeof q.cursor === 'string' && q.cursor !== '' ? q.cursor : undefined;
        await index.whenLoaded();
        try {
          const list = index.list({
            limit: PAGE_SIZE,
            ...(state.state ? { state: state.state } : {}),
            ...(cursor ? { cursor } : {}),
          });
          return pageReply(
            reply,
            200,
            renderListPage({
              page: list,
              ...(state.state ? { state: state.state } : {}),
              first: !cursor,
              now: now(),
              accuracy: accuracyOf(index),
            }),
          );
        } catch (err) {
          if (err instanceof PageQueryError)
            return pageReply(reply, 400, renderProblemPage('Bad page address', err.message));
          throw err;
        }
      });

      app.get('/incidents/:id', pageRoute, async (request, reply) => {
        const id = (request.params as { id: string }).id;
        const why = folderNameProblem(id);
        if (why) return pageReply(reply, 400, renderProblemPage('Not an incident', why));
        const t = now();
        const detail = await readIncidentDetail(index.root, id, t);
        if (!detail)
          return pageReply(
            reply,
            404,
            renderProblemPage('No such incident', `No incident ${id} under ${index.root}.`),
          );
        const report = await readIncidentReport(index.root, id, t, redactor);
        return pageReply(
          reply,
          200,
          renderIncidentPage({
            detail,
            report: report.kind === 'ok' ? { html: renderMarkdown(report.text) } : { why: report.why },
            now: t,
          }),
        );
      });

      // "duplicate of <incidentId>" links here: the page of the (first) incident with that id.
      app.get('/by-id/:incidentId', pageRoute, async (request, reply) => {
        const incidentId = (request.params as { incidentId: string }).incidentId;
        await index.whenLoaded();
        const found = resolveIncident(
          [...index.views()].filter((v) => v.incidentId === incidentId),
          incidentId,
        );
        // Several copies and none stands out: the first of them.
        const folder =
          found.kind === 'found' ? found.folder : found.kind === 'ambiguous' ? found.folders[0] : undefined;
        if (folder === undefined)
          return pageReply(
            reply,
            404,
            renderProblemPage(
              'No such incident',
              `No incident with incidentId ${incidentId} under ${index.root}.`,
            ),
          );
        return reply
          .code(303)
          .header('location', `/incidents/${encodeURIComponent(folder)}`)
          .send();
      });

      // Browsers ask for it on every page; there is none.
      app.get('/favicon.ico', { config: { auth: 'none' } }, async (_request, reply) =>
        reply.code(204).header('cache-control', 'max-age=86400').send(),
      );

      app.get('/assets/:name', { config: { auth: 'none' } }, async (request, reply) => {
        const name = (request.params as { name: string }).name;
        const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
        if (!type)
          return reply.code(404).send({
            error: 'not_found',
            message: `no asset ${name}: there are ${Object.keys(ASSETS).join(', ')}`,
          });
        return reply
          .type(type)
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'no-cache')
          .send(await asset(name));
      });
    },
  };
}

import path from 'node:path';
import type { AuditLog } from '../../audit/log.js';
import { parseFeedbackInput, recordFeedback } from '../../feedback/feedback.js';
import { type FeedbackInput, type FeedbackSource } from '../../workspace/feedback.js';
import { parseSlackInteraction, verifySlackSignature } from '../../feedback/slack-interaction.js';
import { readState } from '../../workspace/state.js';
import type { Logger } from '../../log/logger.js';
import { folderNameProblem } from '../../status/read.js';
import { errorMessage } from '../../util/errors.js';
import { renderProblemPage } from '../page/render.js';
import type { RouteModule } from '../types.js';
import { pageReply } from './status-page.js';
import { folderParam, problem } from './status-params.js';

// Responders' verdicts on an investigation: `POST /v1/incidents/{id}/feedback` (bearer token) with
// `{verdict: correct | partly | wrong, cause?, by?}`, and the Slack feedback buttons, which Slack posts
// to `POST /v1/slack/interactions` signed with the app's signing secret (checked here, five-minute
// window; a bad or stale signature is refused with 401).

export interface FeedbackRoutesOptions {
  root: string;
  audit: Pick<AuditLog, 'append'>;
  /** The SLACK_SIGNING_SECRET value; without it the Slack endpoint answers 503. */
  slackSigningSecret?: string;
  /** Called after feedback on `folder` was recorded (the status index reads it again). */
  onRecorded?: (folder: string) => void;
  now?: () => number;
  log?: Logger;
}

type Applied =
  | { kind: 'recorded' | 'unchanged'; body: Record<string, unknown> }
  | { kind: 'missing'; message: string }
  | { kind: 'no_run'; message: string };

async function apply(
  options: FeedbackRoutesOptions,
  folder: string,
  input: FeedbackInput,
  source: FeedbackSource,
): Promise<Applied> {
  const dir = path.join(options.root, folder);
  const state = await readState(dir).catch(() => undefined);
  if (!state) return { kind: 'missing', message: `no incident ${folder} under ${options.root}` };
  const run = state.runs.at(-1);
  if (!run)
    return {
      kind: 'no_run',
      message: `${folder} has not been investigated yet (${state.state}): feedback grades an answer, give it after a run`,
    };
  const now = options.now ?? Date.now;
  const outcome = await recordFeedback(dir, input, source, {
    audit: options.audit,
    now: () => new Date(now()),
    incidentId: state.incidentId,
    runId: run.id,
  });
  if (outcome.kind === 'recorded') options.onRecorded?.(folder);
  return {
    kind: outcome.kind,
    body: {
      workspace: folder,
      incidentId: state.incidentId,
      recorded: outcome.kind === 'recorded',
      feedback: outcome.feedback,
    },
  };
}

export function feedbackRoutes(options: FeedbackRoutesOptions): RouteModule {
  const { log } = options;
  const now = options.now ?? Date.now;
  return {
    name: 'feedback',
    plugin: async (app) => {
      app.post('/v1/incidents/:id/feedback', async (request, reply) => {
        const folder = folderParam(request, reply);
        if (folder === undefined) return reply;
        const parsed = parseFeedbackInput(request.body);
        if (!parsed.ok) return problem(reply, 400, 'invalid_feedback', parsed.message);
        const applied = await apply(options, folder, parsed.input, 'api');
        if (applied.kind === 'missing') return problem(reply, 404, 'not_found', applied.message);
        if (applied.kind === 'no_run') return problem(reply, 409, 'no_answer_yet', applied.message);
        return reply
          .code(applied.kind === 'recorded' ? 201 : 200)
          .header('cache-control', 'no-store')
          .send(applied.body);
      });

      // Slack sends interactions as a form body; the signature covers its exact bytes.
      app.addContentTypeParser(
        /^application\/x-www-form-urlencoded\s*(;|$)/,
        { parseAs: 'buffer' },
        (request, body, done) => {
          request.rawBody = body as Buffer;
          done(null, {});
        },
      );
      // The status page's feedback form: a plain HTML form POST (no script), answered with a redirect
      // back to the incident. The session cookie counts only on a same-origin post (session-write).
      app.post('/incidents/:id/feedback', { config: { auth: 'session-write' } }, async (request, reply) => {
        const folder = folderParam(request, reply);
        if (folder === undefined) return reply;
        const form = new URLSearchParams((request.rawBody ?? Buffer.alloc(0)).toString('utf8'));
        const field = (name: string) => {
          const value = form.get(name)?.trim();
          return value ? value : undefined;
        };
        const parsed = parseFeedbackInput({
          verdict: field('verdict'),
          ...(field('cause') ? { cause: field('cause') } : {}),
          ...(field('by') ? { by: field('by') } : {}),
        });
        const back = `/incidents/${encodeURIComponent(folder)}`;
        const answer = (status: number, title: string, message: string) =>
          pageReply(
            reply,
            status,
            renderProblemPage(title, message, { href: back, label: '← back to the incident' }),
          );
        if (!parsed.ok) return answer(400, 'Feedback not recorded', parsed.message);
        try {
          const applied = await apply(options, folder, parsed.input, 'page');
          if (applied.kind === 'missing') return answer(404, 'No such incident', applied.message);
          if (applied.kind === 'no_run') return answer(409, 'No answer yet', applied.message);
          return reply
            .code(303)
            .header('location', `${back}#feedback`)
            .header('cache-control', 'no-store')
            .send();
        } catch (err) {
          log?.error({ workspace: folder, err: errorMessage(err) }, 'recording page feedback failed');
          return answer(500, 'Feedback not recorded', `feedback was not recorded: ${errorMessage(err)}`);
        }
      });

      app.post('/v1/slack/interactions', { config: { auth: 'signature' } }, async (request, reply) => {
        const secret = options.slackSigningSecret;
        if (!secret)
          return problem(
            reply,
            503,
            'not_configured',
            'Slack interactions are off: the SLACK_SIGNING_SECRET secret is not set on this server (secrets.SLACK_SIGNING_SECRET), so signatures cannot be verified',
          );
        const raw = request.rawBody ?? Buffer.alloc(0);
        const header = (name: string) => {
          const value = request.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const check = verifySlackSignature(
          secret,
          { signature: header('x-slack-signature'), timestamp: header('x-slack-request-timestamp') },
          raw,
          now(),
        );
        if (!check.ok) {
          log?.warn({ ip: request.ip, why: check.message }, 'Slack interaction refused');
          return problem(reply, 401, 'bad_signature', check.message);
        }
        const interaction = parseSlackInteraction(raw.toString('utf8'));
        if (interaction.kind === 'invalid')
          return problem(reply, 400, 'invalid_interaction', interaction.message);
        if (interaction.kind === 'ignored') return reply.code(200).send({ ignored: interaction.why });
        const { folder, verdict, by } = interaction.action;
        const bad = folderNameProblem(folder);
        if (bad) return problem(reply, 400, 'invalid_interaction', bad);
        try {
          const applied = await apply(options, folder, { verdict, by }, 'slack');
          if (applied.kind === 'missing' || applied.kind === 'no_run')
            return reply.code(200).send({ response_type: 'ephemeral', text: applied.message });
          return reply.code(200).send({
            response_type: 'ephemeral',
            replace_original: false,
            text: `Thanks: recorded "${verdict}" for ${folder}.`,
          });
        } catch (err) {
          log?.error({ workspace: folder, err: errorMessage(err) }, 'recording Slack feedback failed');
          return problem(reply, 500, 'not_recorded', `feedback was not recorded: ${errorMessage(err)}`);
        }
      });
    },
  };
}

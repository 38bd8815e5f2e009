import type { FastifyReply, FastifyRequest } from 'fastify';
import { INCIDENT_STATES, type IncidentState } from '../../workspace/state.js';
import { folderNameProblem } from '../../status/read.js';

// Request parameters of the status API and page, checked with a 400 that says what is expected.

/** Routes a browser may read with the status page's session cookie (GET/HEAD only). */
export const readOnly = { config: { auth: 'session' as const } };
/** The status page's own addresses: also where `?token=` is exchanged for the session cookie. */
export const pageRoute = { config: { auth: 'page' as const } };

export const problem = (reply: FastifyReply, status: number, error: string, message: string): FastifyReply =>
  reply.code(status).header('cache-control', 'no-store').send({ error, message });

/** The `:id` of a request as a folder name, or a 400 sent. */
export function folderParam(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const id = (request.params as { id?: string }).id ?? '';
  const why = folderNameProblem(id);
  if (!why) return id;
  void problem(reply, 400, 'invalid_id', `${why}: the id is the incident's workspace folder name`);
  return undefined;
}

/** `?state=` as a state, or a 400 sent (undefined and not sent when absent). */
export function stateParam(
  value: unknown,
  reply: FastifyReply,
): { ok: true; state?: IncidentState } | { ok: false } {
  if (value === undefined || value === '') return { ok: true };
  if (typeof value === 'string' && (INCIDENT_STATES as readonly string[]).includes(value))
    return { ok: true, state: value as IncidentState };
  void problem(
    reply,
    400,
    'invalid_state',
    `state ${JSON.stringify(value)} is not an incident state: use one of ${INCIDENT_STATES.join(', ')}`,
  );
  return { ok: false };
}

export function intParam(
  name: string,
  value: unknown,
  min: number,
  max: number,
): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(n) || n < min || n > max)
    return `${name} ${JSON.stringify(value)} is not a whole number from ${min} to ${max}`;
  return n;
}

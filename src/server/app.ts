import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { errorMessage } from '../util/errors.js';
import { readinessWithin } from './readiness.js';
import { exposureProblem, isLoopbackHost } from './exposure.js';
import type { HttpServerOptions } from './types.js';
import { parseJsonBody } from './json.js';
import { renderSignInPage } from './page/render.js';
import { crossSiteProblem, hostProblem, provablySameOrigin } from './request-guard.js';
import { PAGE_CSP } from './routes/status-page.js';
import { checkSession, cookieValue, validSession } from './session.js';
import { DEFAULT_LIMITS, type HttpLimits } from './types.js';

// The daemon's HTTP server on fastify: limits (body size, JSON depth, rate, connections), auth decided
// by the matched route (bearer unless the route declares otherwise, so every spelling of a path gets the
// same answer), cross-site and Host checks, health and metrics without credentials, route modules as
// plugins, and 4xx bodies that say what is wrong. Loaded only by http.ts, on demand, so that commands other than `daemon` never load fastify.

/** Every error body: a stable code to branch on and a message for people. */
export interface ProblemBody {
  error: string;
  message: string;
}

const sendProblem = (reply: FastifyReply, status: number, error: string, message: string): FastifyReply =>
  reply
    .code(status)
    .header('cache-control', 'no-store')
    .send({ error, message } satisfies ProblemBody);

class HttpProblem extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Builds the app (not listening). Throws when exposed beyond loopback without a token. */
export async function buildApp(options: HttpServerOptions): Promise<FastifyInstance> {
  const problem = exposureProblem(options.host, options.token);
  if (problem) throw Object.assign(new Error(problem), { code: 'ERR_HTTP_TOKEN_REQUIRED' });
  const limits: HttpLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const app = Fastify({
    logger: false,
    bodyLimit: limits.bodyBytes,
    requestTimeout: limits.requestTimeoutMs,
    forceCloseConnections: true,
    // A connection that sends no complete request head within headersTimeoutMs is closed (half-open
    // floods); Node checks every connectionsCheckingInterval, so that is a fraction of it.
    serverFactory: (handler) =>
      createServer(
        {
          requestTimeout: limits.requestTimeoutMs,
          headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
          connectionsCheckingInterval: Math.max(
            10,
            Math.round(Math.min(limits.headersTimeoutMs, 30_000) / 4),
          ),
        },
        handler,
      ),
    return503OnClosing: true,
    exposeHeadRoutes: true,
    // Incident folder names (route ids) may be as long as a file name: 255 bytes, percent-encoded.
    routerOptions: { maxParamLength: 1024 },
  });

  // Connections beyond this are closed on arrival, before any request is read.
  app.server.maxConnections = limits.maxConnections;
  // Node's head timeout does not cover a connection that never sends a byte: until its first request
  // arrives, a connection idle for headersTimeoutMs is closed (later, keep-alive and the routes time it).
  app.server.on('connection', (socket: Socket) => socket.setTimeout(limits.headersTimeoutMs));
  app.server.on('request', (request: IncomingMessage) => request.socket.setTimeout(0));

  app.setErrorHandler((err: FastifyError, request, reply) =>
    replyToError(err, request, reply, limits, options),
  );

  app.removeAllContentTypeParsers();
  // application/json and the +json types (application/merge-patch+json, …), parameters allowed.
  app.addContentTypeParser(
    /^application\/([\w.-]+\+)?json\s*(;|$)/,
    { parseAs: 'buffer' },
    (request, body, done) => {
      const data = body as Buffer;
      request.rawBody = data;
      const parsed = parseJsonBody(data, limits.jsonDepth);
      if (parsed.ok) done(null, parsed.value);
      else done(new HttpProblem(400, parsed.code, parsed.message), undefined);
    },
  );

  const routes: { method: string; pattern: RegExp; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(
      `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}/?$`,
    );
    for (const method of [route.method].flat()) routes.push({ method, pattern, url: route.url });
  });

  if (limits.rateLimitMax > 0) {
    await app.register(rateLimit, {
      global: true,
      max: limits.rateLimitMax,
      timeWindow: limits.rateLimitWindowMs,
      hook: 'onRequest',
      errorResponseBuilder: (_request, context) =>
        new HttpProblem(
          429,
          'rate_limited',
          `more than ${context.max} requests in ${context.after === '' ? 'the window' : formatWindow(limits.rateLimitWindowMs)} from this client (http.rate_limit): retry after ${Math.ceil(context.ttl / 1000)} s, or raise http.rate_limit.max`,
        ),
    });
  }

  const tokenDigest = options.token ? sha256(options.token) : undefined;
  const exposed = !isLoopbackHost(options.host);
  const allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.trim().toLowerCase()));
  app.addHook('onRequest', async (request, reply) => {
    // Without a token, a page on a name rebound to 127.0.0.1 must not read or post anything.
    const badHost = options.token ? undefined : hostProblem(request.headers.host, allowedHosts);
    if (badHost) return sendProblem(reply, 421, 'host_not_allowed', badHost);
    const crossSite = crossSiteProblem(request.method, request.headers);
    if (crossSite) return sendProblem(reply, 403, 'cross_site', crossSite);
    // Auth comes from the route the router matched (after it decoded the path), never from the raw
    // URL text: a route that declares nothing needs the bearer token. Unknown paths run nothing.
    const auth = request.is404 ? 'none' : (request.routeOptions.config.auth ?? 'bearer');
    if (auth === 'none' || auth === 'signature' || !tokenDigest || !options.token) return;
    // The status page: a session cookie (from a one-time ?token= exchange) stands in for the header.
    const session =
      auth === 'session' || auth === 'page'
        ? checkSession(sessionRequest(request), options.token, Date.now(), auth === 'page')
        : undefined;
    if (session?.kind === 'ok') return;
    // The page's own forms: the cookie counts only when the browser says the post came from this origin.
    if (
      auth === 'session-write' &&
      request.headers.authorization === undefined &&
      provablySameOrigin(request.headers) &&
      validSession(cookieValue(request.headers.cookie), options.token, Date.now())
    )
      return;
    if (session?.kind === 'exchange') {
      await reply
        .code(303)
        .header('location', session.location)
        .header('set-cookie', session.cookie)
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .send();
      return;
    }
    const denied =
      session?.kind === 'denied'
        ? session.message
        : bearerProblem(request.headers.authorization, tokenDigest, exposed, options.host);
    if (denied && auth === 'page') {
      // A person opening the page: say how to open it, as a page (not a JSON error).
      await reply
        .code(401)
        .type('text/html; charset=utf-8')
        .header('content-security-policy', PAGE_CSP)
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .send(renderSignInPage(denied, session?.kind === 'denied'));
      return;
    }
    if (denied) {
      await sendProblem(
        reply.header('www-authenticate', 'Bearer realm="triage-runner"'),
        401,
        'unauthorized',
        auth === 'session' || auth === 'session-write' ? `${denied}. ${SESSION_HINT}` : denied,
      );
    }
  });

  const timeoutMs = options.readinessTimeoutMs ?? 5000;
  const open = { config: { rateLimit: false, auth: 'none' as const } };
  app.get('/healthz', open, async (_request, reply) =>
    reply.type('text/plain').header('cache-control', 'no-store').send('ok\n'),
  );
  app.get('/readyz', open, async (_request, reply) => {
    const readiness = await readinessWithin(options.readiness, timeoutMs);
    return reply
      .code(readiness.ok ? 200 : 503)
      .type('application/json')
      .header('cache-control', 'no-store')
      .send(`${JSON.stringify(readiness)}\n`);
  });
  app.get('/metrics', open, async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.type(options.metrics.contentType).header('cache-control', 'no-store').send(text);
  });

  for (const module of options.routes ?? []) await app.register(module.plugin);

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0)
      return sendProblem(
        reply.header('allow', allowed.join(', ')),
        405,
        'method_not_allowed',
        `${request.method} is not allowed on ${path}: use ${allowed.join(' or ')}`,
      );
    const known = [...new Set(routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`))];
    return sendProblem(
      reply,
      404,
      'not_found',
      `no route ${request.method} ${path}: this server answers ${known.join(', ')}`,
    );
  });
  return app;
}

const SESSION_HINT =
  'In a browser, open this address once with ?token=<HTTP_TOKEN> added: the token is exchanged for a session cookie';

const sessionRequest = (request: FastifyRequest) => ({
  method: request.method,
  url: request.url,
  cookie: request.headers.cookie,
  authorization: request.headers.authorization,
  secure: request.protocol === 'https',
});

/** Why a request's Authorization header is refused, or undefined when it carries the token. */
function bearerProblem(
  header: string | undefined,
  tokenDigest: Buffer,
  exposed: boolean,
  host: string,
): string | undefined {
  const why = exposed
    ? `http.host ${host} is not a loopback address, so /v1/* needs "Authorization: Bearer <token>" with the HTTP_TOKEN secret`
    : '/v1/* needs "Authorization: Bearer <token>" with the HTTP_TOKEN secret (it is configured, so it is checked)';
  if (!header)
    return `missing Authorization header: ${why} (Alertmanager: http_config.authorization.credentials)`;
  const match = /^(\S+)\s+(.+)$/.exec(header.trim());
  if (!match || match[1]?.toLowerCase() !== 'bearer')
    return `Authorization header does not use the Bearer scheme: ${why}`;
  if (!timingSafeEqual(sha256(match[2] ?? ''), tokenDigest))
    return 'bearer token does not match the HTTP_TOKEN secret configured on this server: check the token the sender uses';
  return undefined;
}

function replyToError(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  limits: HttpLimits,
  options: HttpServerOptions,
): FastifyReply {
  if (err instanceof HttpProblem) return sendProblem(reply, err.statusCode, err.code, err.message);
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return sendProblem(
        reply,
        413,
        'body_too_large',
        `request body is larger than the ${limits.bodyBytes}-byte limit (http.body_limit): send less per request (Alertmanager: max_alerts in the webhook config) or raise http.body_limit`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return sendProblem(
        reply,
        415,
        'unsupported_media_type',
        `Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not accepted: send the body as application/json`,
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return sendProblem(reply, 400, 'invalid_content_length', 'Content-Length does not match the body sent');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return sendProblem(reply, 400, 'empty_body', 'request body is empty: send a JSON document');
    default:
      break;
  }
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500)
    return sendProblem(reply, status, err.code ?? 'bad_request', err.message);
  options.log?.error(
    { method: request.method, url: request.url, err: errorMessage(err) },
    'http request failed',
  );
  return sendProblem(reply, 500, 'internal', `the server failed: ${err.message}`);
}

function formatWindow(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

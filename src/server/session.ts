import { createHmac, timingSafeEqual } from 'node:crypto';

// The status page in a browser, when the server has a bearer token: a browser cannot add an
// Authorization header to a page load or an EventSource, so `GET /?token=<HTTP_TOKEN>` is exchanged
// once for a session cookie (HttpOnly, SameSite=Strict, 12 h) and the address is redirected without the
// token. The cookie is an expiry time and an HMAC of it keyed with the token: nothing is stored, it ends
// when the token changes, and it never reveals the token. It is accepted only on read-only requests
// (GET, HEAD) of routes that allow it; everything that changes something needs the bearer header.

export const SESSION_COOKIE = 'triage_session';
export const SESSION_TTL_MS = 12 * 3600 * 1000;

const mac = (token: string, expires: number): Buffer =>
  createHmac('sha256', token).update(`triage-runner status page session ${expires}`).digest();

/** A cookie value valid until `now + SESSION_TTL_MS`. */
export function sessionValue(token: string, now: number): string {
  const expires = now + SESSION_TTL_MS;
  return `${expires}.${mac(token, expires).toString('base64url')}`;
}

/** The Set-Cookie header for a session value (Secure when the page was loaded over https). */
export function sessionCookie(value: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}${secure ? '; Secure' : ''}`;
}

/** The session cookie's value in a Cookie header, if any. */
export function cookieValue(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=');
  }
  return undefined;
}

/** True when `value` was made with `token` and has not expired. */
export function validSession(value: string | undefined, token: string, now: number): boolean {
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!match) return false;
  const expires = Number(match[1]);
  if (expires <= now) return false;
  const given = Buffer.from(match[2] as string, 'base64url');
  const expected = mac(token, expires);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `url` without its `token` query parameter (where the exchange redirects). */
export function withoutToken(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  parsed.searchParams.delete('token');
  return `${parsed.pathname}${parsed.search}`;
}

/** The `token` query parameter of `url`, if any. */
export const tokenParam = (url: string): string | undefined =>
  new URL(url, 'http://localhost').searchParams.get('token') ?? undefined;

export type SessionCheck =
  /** A valid session cookie on a read-only request. */
  | { kind: 'ok' }
  /** `?token=` matched: set the cookie and redirect to the address without it. */
  | { kind: 'exchange'; location: string; cookie: string }
  /** `?token=` did not match. */
  | { kind: 'denied'; message: string }
  /** Neither: the request must carry the bearer header. */
  | { kind: 'bearer' };

/** How a request to a route that accepts the session cookie is authenticated (the server has a token). */
export function checkSession(
  request: {
    method: string;
    url: string;
    cookie: string | undefined;
    authorization: string | undefined;
    secure: boolean;
  },
  token: string,
  now: number,
  /** Whether `?token=` may be exchanged here: only on the page's own addresses, never on API routes. */
  exchange = true,
): SessionCheck {
  const readOnly = request.method === 'GET' || request.method === 'HEAD';
  if (!readOnly || request.authorization !== undefined) return { kind: 'bearer' };
  const given = tokenParam(request.url);
  if (given !== undefined && !exchange)
    return {
      kind: 'denied',
      message:
        '?token= is only exchanged on the status page (/), so the token stays out of API addresses and logs: send "Authorization: Bearer <token>", or open the page once with ?token=',
    };
  if (given !== undefined) {
    const a = createHmac('sha256', 'compare').update(given).digest();
    const b = createHmac('sha256', 'compare').update(token).digest();
    if (!timingSafeEqual(a, b))
      return {
        kind: 'denied',
        message: 'the token in the address does not match the HTTP_TOKEN secret configured on this server',
      };
    return {
      kind: 'exchange',
      location: withoutToken(request.url),
      cookie: sessionCookie(sessionValue(token, now), request.secure),
    };
  }
  return validSession(cookieValue(request.cookie), token, now) ? { kind: 'ok' } : { kind: 'bearer' };
}

import { isIP } from 'node:net';

// Whether the listen address can be reached from other machines, and what that demands.

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * The shortest bearer token accepted on a listener other machines can reach: anyone who reaches the
 * port may guess at it, and 16 characters (`openssl rand -hex 32` gives 64) put guessing out of reach.
 */
export const MIN_EXPOSED_TOKEN_CHARS = 16;

const HOW_TO_MAKE_ONE = 'make one with `openssl rand -hex 32`';

/** Why `token` is too short for a listener on `host`; undefined when it is long enough (or the host is loopback). */
export function weakTokenProblem(host: string, token: string): string | undefined {
  if (isLoopbackHost(host) || token.length >= MIN_EXPOSED_TOKEN_CHARS) return undefined;
  return (
    `http.host ${host} is not a loopback address, so the HTTP_TOKEN secret guards /v1/* from the network, ` +
    `but it holds only ${token.length} character${token.length === 1 ? '' : 's'} (at least ${MIN_EXPOSED_TOKEN_CHARS} are needed): ` +
    `${HOW_TO_MAKE_ONE} and set it as HTTP_TOKEN, or listen on 127.0.0.1 only (http.host: 127.0.0.1)`
  );
}

/**
 * Why the server must not start: listening beyond loopback without a bearer token (or with one short
 * enough to guess) would let anyone who reaches the port create incidents. Undefined when safe.
 */
export function exposureProblem(host: string, token: string | undefined): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  if (token) return weakTokenProblem(host, token);
  return (
    `http.host ${host} is not a loopback address, so /v1/* needs a bearer token, but the HTTP_TOKEN secret is not set: ` +
    `set it under secrets: (e.g. HTTP_TOKEN: { env: TRIAGE_RUNNER_HTTP_TOKEN } and export that variable; ${HOW_TO_MAKE_ONE}), ` +
    'or listen on 127.0.0.1 only (http.host: 127.0.0.1)'
  );
}

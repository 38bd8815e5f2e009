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
 * Why the server must not start: listening beyond loopback without a bearer token would let anyone
 * who reaches the port create incidents. Undefined when the combination is safe.
 */
export function exposureProblem(host: string, token: string | undefined): string | undefined {
  if (isLoopbackHost(host) || token) return undefined;
  return (
    `http.host ${host} is not a loopback address, so /v1/* needs a bearer token, but the HTTP_TOKEN secret is not set: ` +
    'set it under secrets: (e.g. HTTP_TOKEN: { env: TRIAGE_RUNNER_HTTP_TOKEN } and export that variable), ' +
    'or listen on 127.0.0.1 only (http.host: 127.0.0.1)'
  );
}

import { isLoopbackHost } from './exposure.js';

// Checks made on every request before its route runs, whatever its auth: a web page in the operator's
// browser must not be able to change anything (cross-site requests are refused on state-changing
// methods), and without a token a page on a rebound DNS name must not reach the loopback server at all
// (only loopback and configured Host names are answered).

/** Methods that only read: the cross-site check leaves them alone. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Sec-Fetch-Site values of a request a browser made on its own or from this server's own pages. */
const SAME_SITE_FETCH = new Set(['same-origin', 'none']);

/** The host name of a Host header, lower case, without port or IPv6 brackets; undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = header.trim().toLowerCase();
  if (text === '') return undefined;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    return end === -1 ? undefined : text.slice(1, end);
  }
  const colon = text.indexOf(':');
  return colon === -1 ? text : text.slice(0, colon);
}

/**
 * Why a tokenless server refuses a request's Host header, or undefined when it is a loopback name or one
 * of `allowed` (http.allowed_hosts, the host of http.public_url).
 */
export function hostProblem(header: string | undefined, allowed: ReadonlySet<string>): string | undefined {
  const name = hostName(header);
  if (name !== undefined && (isLoopbackHost(name) || allowed.has(name))) return undefined;
  return (
    `Host ${JSON.stringify(header ?? '')} is not a loopback name and HTTP_TOKEN is not set, so this server ` +
    'only answers requests addressed to localhost or 127.0.0.1 (a page on another name could read it by DNS rebinding): ' +
    'use http://127.0.0.1:<port>, add the name to http.allowed_hosts, or set the HTTP_TOKEN secret'
  );
}

/**
 * Why a state-changing request is refused as cross-site, or undefined. Browsers send Sec-Fetch-Site and
 * Origin with every POST; senders that are not browsers (Alertmanager, curl) send neither.
 */
export function crossSiteProblem(
  method: string,
  headers: { origin?: string | undefined; host?: string | undefined; 'sec-fetch-site'?: string | undefined },
): string | undefined {
  if (SAFE_METHODS.has(method)) return undefined;
  const site = headers['sec-fetch-site'];
  if (site !== undefined && !SAME_SITE_FETCH.has(site.trim().toLowerCase()))
    return `a ${method} from a web page on another site (Sec-Fetch-Site: ${site}) is refused: send it from a client that is not a browser (curl, Alertmanager), with the bearer token`;
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = undefined;
  }
  if (originHost !== undefined && originHost !== '' && originHost === headers.host?.trim().toLowerCase())
    return undefined;
  return `a ${method} from a web page at Origin ${JSON.stringify(origin)} is refused: state-changing requests come from clients that are not browsers (curl, Alertmanager), with the bearer token`;
}

/**
 * True when a browser says the request comes from this server's own pages: `Sec-Fetch-Site:
 * same-origin`, or an Origin whose host is the Host header. Absent headers prove nothing (false): the
 * status page's form may post on its session cookie only with this proof.
 */
export function provablySameOrigin(headers: {
  origin?: string | undefined;
  host?: string | undefined;
  'sec-fetch-site'?: string | undefined;
}): boolean {
  const site = headers['sec-fetch-site']?.trim().toLowerCase();
  if (site !== undefined) return site === 'same-origin';
  if (headers.origin === undefined) return false;
  try {
    const host = new URL(headers.origin).host.toLowerCase();
    return host !== '' && host === headers.host?.trim().toLowerCase();
  } catch {
    return false;
  }
}

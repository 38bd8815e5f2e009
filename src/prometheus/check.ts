import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { EndpointResolution } from './endpoint.js';

// validate-config's look at each Prometheus endpoint: its credentials' secrets set where the command
// runs (a warning otherwise: they may be set where the daemon runs), and its TLS material usable (a
// problem otherwise). No message quotes a secret: only names, paths and OpenSSL's reason.

export interface EndpointFinding {
  path: string;
  message: string;
}

/** Problems (unusable TLS material) and warnings (unset secrets) of every configured endpoint. */
export function endpointFindings(
  endpoints: ReadonlyMap<string, EndpointResolution>,
  keyOf: (cluster: string) => string,
): { problems: EndpointFinding[]; warnings: EndpointFinding[] } {
  const problems: EndpointFinding[] = [];
  const warnings: EndpointFinding[] = [];
  for (const [cluster, resolution] of endpoints) {
    const at = keyOf(cluster);
    if (!resolution.ok) {
      warnings.push({
        path: at,
        message: `${resolution.problem}; until then promql in runs on cluster ${cluster} cannot read metrics`,
      });
      continue;
    }
    const problem = tlsProblem(resolution.endpoint.tls);
    if (problem) problems.push({ path: `${at}.tls`, message: problem });
  }
  return { problems, warnings };
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Why the TLS material cannot be used (each must be PEM; the key must match the certificate), or undefined. */
function tlsProblem(tls: { ca?: string; cert?: string; key?: string }): string | undefined {
  const reason = (what: string, err: unknown) =>
    `the ${what} cannot be used (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): its secret must hold PEM text`;
  if (tls.ca !== undefined) {
    const blocks = tls.ca.match(PEM_CERT) ?? [];
    if (blocks.length === 0)
      return 'the CA cannot be used: its secret holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
    for (const block of blocks) {
      try {
        new X509Certificate(block);
      } catch (err) {
        return reason('CA', err);
      }
    }
  }
  if (tls.cert === undefined || tls.key === undefined) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(tls.cert);
  } catch (err) {
    return reason('client certificate', err);
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(tls.key)))
      return "the client key does not match the client certificate: give the certificate's own key";
  } catch (err) {
    return reason('client key', err);
  }
  return undefined;
}

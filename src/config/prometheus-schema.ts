import { z } from '../shared/zod.js';
import { bytes, duration, httpUrl, int, secretName } from './schema-parts.js';

// The Prometheus-compatible endpoint of a cluster (`clusters.<name>.prometheus`, or `prometheus:` for a
// single cluster) and the bounds of the sandbox's `promql` command. Every credential is the name of an
// entry under `secrets:` (read from an env var or a file, never written inline): the daemon reads it
// and adds it to its own requests; the agent never sees it.

export const prometheusEndpoint = z
  .strictObject({
    url: httpUrl(
      "base URL of the cluster's Prometheus HTTP API (Prometheus, Thanos Query, Mimir's …/prometheus, VictoriaMetrics); the daemon adds /api/v1/… itself",
    ).refine(
      (url) => {
        const u = new URL(url);
        return u.username === '' && u.password === '' && u.search === '' && u.hash === '';
      },
      {
        message:
          'the URL must hold no user, password, query or fragment: credentials go in bearer_token or basic_auth (secret names)',
      },
    ),
    bearer_token: secretName(
      'entry under secrets: holding a bearer token sent as Authorization: Bearer …',
    ).optional(),
    basic_auth: z
      .strictObject({
        username: z.string().min(1).describe('the basic-auth user name'),
        password: secretName('entry under secrets: holding the basic-auth password'),
      })
      .optional()
      .describe('HTTP basic authentication (not with bearer_token)'),
    tls: z
      .strictObject({
        ca: secretName(
          "entry under secrets: holding the PEM CA bundle that signs the server's certificate (e.g. { file: /etc/prometheus-ca/ca.crt })",
        ).optional(),
        cert: secretName('entry under secrets: holding the PEM client certificate').optional(),
        key: secretName("entry under secrets: holding the client certificate's PEM private key").optional(),
        server_name: z
          .string()
          .min(1)
          .optional()
          .describe("the name the server's certificate is checked against (absent: the URL's host)"),
      })
      .refine((t) => (t.cert === undefined) === (t.key === undefined), {
        message: 'a client certificate needs both cert and key',
      })
      .optional()
      .describe('TLS for an https:// URL: the CA to trust and a client certificate'),
  })
  .refine((e) => e.bearer_token === undefined || e.basic_auth === undefined, {
    message: 'give bearer_token or basic_auth, not both',
  });
export type PrometheusEndpointConfig = z.infer<typeof prometheusEndpoint>;

export const promqlSchema = z
  .strictObject({
    timeout: duration(
      '30s',
      'one promql call: Prometheus is given this as its query timeout, and the daemon stops waiting after it',
    ),
    max_range: duration('7d', 'longest time range a range query, series or labels call may cover'),
    max_points: int(10, 11_000)
      .default(1_000)
      .describe('points per series a range query may ask for (its range divided by its step)'),
    max_series: int(1, 10_000)
      .default(200)
      .describe(
        'series (or label names or values, alerts, rules) one answer may hold; a bigger answer is refused',
      ),
    max_bytes: bytes('4MiB', 'bytes of one answer read from Prometheus; a bigger answer is refused'),
    preload: z
      .boolean()
      .default(true)
      .describe(
        "for an incident from an Alertmanager alert, evaluate the alert's expression now and over preload_range and put the values in the prompt",
      ),
    preload_range: duration('1h', "how far back the preloaded alert expression's values go"),
  })
  .prefault({})
  .describe("the sandbox's promql command: read-only queries to the run's cluster's Prometheus, bounded");
export type PromqlConfig = z.infer<typeof promqlSchema>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The secret names an endpoint as written refers to, each with its key path below the endpoint. */
function namedSecrets(endpoint: Record<string, unknown>): [string[], unknown][] {
  const basic = isRecord(endpoint.basic_auth) ? endpoint.basic_auth : {};
  const tls = isRecord(endpoint.tls) ? endpoint.tls : {};
  return [
    [['bearer_token'], endpoint.bearer_token],
    [['basic_auth', 'password'], basic.password],
    [['tls', 'ca'], tls.ca],
    [['tls', 'cert'], tls.cert],
    [['tls', 'key'], tls.key],
  ];
}

export interface PrometheusIssue {
  path: (string | number)[];
  message: string;
}

/**
 * What the schema of one endpoint cannot see: `prometheus:` beside a `clusters:` registry, and secret
 * names not declared under `secrets:` (`declared`: the built-in and configured names).
 */
export function prometheusIssues(config: Record<string, unknown>, declared: Set<string>): PrometheusIssue[] {
  const issues: PrometheusIssue[] = [];
  const clusters = isRecord(config.clusters) ? config.clusters : undefined;
  const endpoints: [(string | number)[], Record<string, unknown>][] = [];
  if (isRecord(config.prometheus)) {
    if (clusters)
      issues.push({
        path: ['prometheus'],
        message:
          'prometheus: and clusters: are both set; with a registry each cluster names its own endpoint: move it into clusters.<name>.prometheus',
      });
    endpoints.push([['prometheus'], config.prometheus]);
  }
  for (const [name, entry] of Object.entries(clusters ?? {}))
    if (isRecord(entry) && isRecord(entry.prometheus))
      endpoints.push([['clusters', name, 'prometheus'], entry.prometheus]);
  for (const [at, endpoint] of endpoints)
    for (const [rest, name] of namedSecrets(endpoint)) {
      if (typeof name !== 'string' || declared.has(name)) continue;
      issues.push({
        path: [...at, ...rest],
        message: `${name} is not declared under secrets:; add \`${name}: { env: ${name} }\` (or file: PATH) there`,
      });
    }
  return issues;
}

/** The secret names every configured endpoint uses: the daemon's own, never handed to an agent. */
export function prometheusSecretNames(config: {
  prometheus?: PrometheusEndpointConfig | undefined;
  clusters?: Record<string, { prometheus?: PrometheusEndpointConfig | undefined }> | undefined;
}): string[] {
  const endpoints = [config.prometheus, ...Object.values(config.clusters ?? {}).map((c) => c.prometheus)];
  return endpoints.flatMap((e) =>
    e
      ? [e.bearer_token, e.basic_auth?.password, e.tls?.ca, e.tls?.cert, e.tls?.key].filter(
          (n): n is string => n !== undefined,
        )
      : [],
  );
}

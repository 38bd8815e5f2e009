import { runProcessGroup } from '../../util/process-group.js';

// What the identity the kubectl broker runs with may do on the cluster, asked with `kubectl auth
// can-i` through the configured kubectl: the guard's parser is one line of defence, RBAC should be the
// other. When the broker could change the cluster, read Secrets, exec into or proxy to workloads, the
// daemon reports the `broker-identity` check as degraded with the fix (a read-only identity through
// kubectl.kubeconfig or kubectl.as), at start and in /readyz. With a cluster registry each entry is its
// own identity, asked with its kubeconfig and context and named in its check (`broker-identity:<entry>`).

export const BROKER_IDENTITY_CHECK = 'broker-identity';

/** One question to the cluster: `kubectl auth can-i <verb> <resource> [--subresource=…] -A`. */
export interface AccessQuestion {
  verb: string;
  resource: string;
  subresource?: string;
}

/** What a read-only identity must not be able to do. */
export const FORBIDDEN_ACCESS: readonly AccessQuestion[] = [
  { verb: 'create', resource: 'pods' },
  { verb: 'delete', resource: 'pods' },
  { verb: 'patch', resource: 'deployments.apps' },
  { verb: 'update', resource: 'deployments.apps' },
  { verb: 'delete', resource: 'deployments.apps' },
  { verb: 'patch', resource: 'nodes' },
  { verb: 'create', resource: 'rolebindings.rbac.authorization.k8s.io' },
  { verb: 'get', resource: 'secrets' },
  { verb: 'list', resource: 'secrets' },
  { verb: 'create', resource: 'pods', subresource: 'exec' },
  { verb: 'get', resource: 'pods', subresource: 'proxy' },
  { verb: 'create', resource: 'pods', subresource: 'portforward' },
];

export interface BrokerIdentityOptions {
  /** kubectl.command. */
  command: string;
  /** The broker's environment (KUBECONFIG, PATH, HOME). */
  env: Record<string, string>;
  /** kubectl.as: the user the broker impersonates, if any. */
  as?: string;
  /** The cluster registry entry asked about: named in the check and its detail. */
  cluster?: string;
  /** The entry's kubeconfig context (absent: the kubeconfig's current-context). */
  context?: string;
  timeoutMs?: number;
}

export interface IdentityCheck {
  /** `broker-identity`, or `broker-identity:<entry>` for a cluster registry entry. */
  name: string;
  ok: boolean;
  degraded?: boolean;
  detail?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** What to do about an identity that may do too much; a registry entry's kubeconfig is its own. */
const fix = (cluster: string | undefined): string =>
  `give the broker a read-only identity: ${cluster === undefined ? 'kubectl.kubeconfig' : `clusters.${cluster}.kubeconfig`} with a ServiceAccount bound to the \`view\` ClusterRole (which has no Secrets), or kubectl.as naming such a user (see the README, "Security")`;

const describe = (q: AccessQuestion) => `${q.verb} ${q.resource}${q.subresource ? `/${q.subresource}` : ''}`;

/** The argv of one question (after `kubectl`). */
export function canIArgs(q: AccessQuestion, as?: string, context?: string): string[] {
  return [
    ...(context ? [`--context=${context}`] : []),
    ...(as ? [`--as=${as}`] : []),
    'auth',
    'can-i',
    q.verb,
    q.resource,
    ...(q.subresource ? [`--subresource=${q.subresource}`] : []),
    '--all-namespaces',
  ];
}

type Answer = { kind: 'yes' } | { kind: 'no' } | { kind: 'unknown'; why: string };

async function ask(q: AccessQuestion, options: BrokerIdentityOptions): Promise<Answer> {
  let stdout = '';
  const result = await runProcessGroup({
    command: options.command,
    args: canIArgs(q, options.as, options.context),
    cwd: '/',
    env: options.env,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    killGraceMs: 1_000,
    onData: (chunk, stream) => {
      if (stream === 'stdout' && stdout.length < 1024) stdout += chunk.toString('utf8');
    },
  });
  const answer = stdout.trim().split('\n')[0]?.trim();
  if (answer === 'yes') return { kind: 'yes' };
  if (answer === 'no') return { kind: 'no' };
  const why =
    result.error ??
    (result.timedOut
      ? `no answer within ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`
      : result.stderrTail.trim().split('\n').pop()) ??
    `exit ${String(result.exitCode)}`;
  return { kind: 'unknown', why: why || `exit ${String(result.exitCode)}` };
}

/** The identity in words: `the broker's kubeconfig`, `cluster prod's broker identity (as viewer)`. */
function identityName(options: BrokerIdentityOptions): string {
  const whose = options.cluster === undefined ? "the broker's" : `cluster ${options.cluster}'s broker`;
  const context = options.context ? ` (context ${options.context})` : '';
  return options.as ? `${whose} identity (as ${options.as})${context}` : `${whose} kubeconfig${context}`;
}

/** Asks the cluster what the broker's identity may do and turns it into the `broker-identity` check. */
export async function checkBrokerIdentity(
  options: BrokerIdentityOptions,
  questions: readonly AccessQuestion[] = FORBIDDEN_ACCESS,
): Promise<IdentityCheck> {
  const answers = await Promise.all(questions.map(async (q) => ({ q, a: await ask(q, options) })));
  const allowed = answers.filter((x) => x.a.kind === 'yes').map((x) => describe(x.q));
  const unknown = answers.flatMap((x) => (x.a.kind === 'unknown' ? [x.a.why] : []));
  const who = identityName(options);
  const name =
    options.cluster === undefined ? BROKER_IDENTITY_CHECK : `${BROKER_IDENTITY_CHECK}:${options.cluster}`;
  if (allowed.length > 0)
    return {
      name,
      ok: true,
      degraded: true,
      detail: `${who} may ${allowed.join(', ')}: only the guard's parser stands between an agent and these; ${fix(options.cluster)}`,
    };
  if (unknown.length === answers.length)
    return {
      name,
      ok: true,
      degraded: true,
      detail: `could not ask the cluster what ${who} may do (kubectl auth can-i: ${unknown[0] ?? 'no answer'}); check kubectl.command and the kubeconfig`,
    };
  return {
    name,
    ok: true,
    ...(unknown.length > 0
      ? {
          degraded: true,
          detail: `some questions got no answer (${unknown[0] ?? ''}); the rest are refused to ${who}`,
        }
      : { detail: `${who} is read-only: it cannot change the cluster, read Secrets or reach workloads` }),
  };
}

/** The check, asked at most once per `ttlMs` (it starts a dozen kubectl processes). */
export function cachedIdentityCheck<T = IdentityCheck>(
  check: () => Promise<T>,
  ttlMs: number,
  now: () => number = Date.now,
): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const t = now();
    if (!last || t - last.at >= ttlMs) last = { at: t, value: check() };
    return last.value;
  };
}

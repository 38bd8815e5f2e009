// kubectl's flags, as pflag parses them: which take a value, their one-letter forms, and the few whose
// meaning depends on the command (`-f` is --follow for logs and --filename elsewhere; `-p` is
// --previous for logs and --patch for patch; `--raw` takes a path for get and is a switch for config view).

export interface FlagSpec {
  /** Long name without dashes. */
  name: string;
  short?: string;
  /** Takes a value (`--name v` or `--name=v`). */
  value: boolean;
  /** pflag NoOptDefVal: given alone (`--dry-run`) the flag has this value and takes no next argument. */
  noOptDefault?: string;
}

const v = (name: string, short?: string): FlagSpec => ({ name, value: true, ...(short ? { short } : {}) });
const b = (name: string, short?: string): FlagSpec => ({ name, value: false, ...(short ? { short } : {}) });
const opt = (name: string, noOptDefault: string): FlagSpec => ({ name, value: true, noOptDefault });

/** Flags every kubectl command accepts (`kubectl options`). */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  v('namespace', 'n'),
  v('context'),
  v('cluster'),
  v('user'),
  v('kubeconfig'),
  v('server', 's'),
  v('token'),
  v('as'),
  v('as-group'),
  v('as-uid'),
  v('request-timeout'),
  v('certificate-authority'),
  v('client-certificate'),
  v('client-key'),
  v('tls-server-name'),
  v('cache-dir'),
  v('v', 'v'),
  v('vmodule'),
  v('password'),
  v('username'),
  v('profile'),
  v('profile-output'),
  v('log-flush-frequency'),
  b('insecure-skip-tls-verify'),
  b('match-server-version'),
  b('warnings-as-errors'),
  b('disable-compression'),
  b('help', 'h'),
];

/** Flags of the commands themselves; a name may appear in several commands with the same meaning. */
export const COMMAND_FLAGS: readonly FlagSpec[] = [
  v('output', 'o'),
  v('selector', 'l'),
  v('field-selector'),
  b('all-namespaces', 'A'),
  b('watch', 'w'),
  b('watch-only'),
  b('no-headers'),
  b('show-labels'),
  b('show-kind'),
  v('label-columns', 'L'),
  v('sort-by'),
  v('template'),
  v('chunk-size'),
  b('ignore-not-found'),
  v('raw'),
  v('subresource'),
  b('output-watch-events'),
  b('show-managed-fields'),
  b('server-print'),
  b('allow-missing-template-keys'),
  v('filename', 'f'),
  v('kustomize', 'k'),
  b('recursive', 'R'),
  opt('dry-run', 'unchanged'),
  b('force'),
  v('grace-period'),
  opt('cascade', 'background'),
  b('wait'),
  b('now'),
  b('all'),
  b('overwrite'),
  b('local'),
  b('record'),
  v('field-manager'),
  b('server-side'),
  b('force-conflicts'),
  b('prune'),
  opt('validate', 'strict'),
  b('save-config'),
  v('timeout'),
  v('for'),
  v('replicas'),
  v('current-replicas'),
  v('resource-version'),
  v('image'),
  v('revision'),
  v('to-revision'),
  v('type'),
  v('container', 'c'),
  v('tail'),
  v('since'),
  v('since-time'),
  b('timestamps'),
  b('prefix'),
  b('all-containers'),
  b('ignore-errors'),
  v('limit-bytes'),
  v('max-log-requests'),
  v('pod-running-timeout'),
  b('insecure-skip-tls-verify-backend'),
  opt('show-events', 'true'),
  b('list'),
  b('minify'),
  b('flatten'),
  v('types'),
  v('env', 'e'),
  v('requests'),
  v('limits'),
  v('port'),
  v('target-port'),
  v('protocol'),
  v('name'),
  v('external-ip'),
  v('cluster-ip'),
  v('min'),
  v('max'),
  v('cpu-percent'),
  b('delete-emptydir-data'),
  b('ignore-daemonsets'),
  b('disable-eviction'),
  v('skip-wait-for-delete-timeout'),
  v('pod-selector'),
  v('output-directory'),
  v('namespaces'),
  v('api-group'),
  v('verbs'),
  b('cached'),
  b('namespaced'),
  v('from-literal'),
  v('from-file'),
  v('from-env-file'),
  v('docker-server'),
  v('docker-username'),
  v('docker-password'),
  v('docker-email'),
  v('cert'),
  v('key'),
  v('duration'),
  v('audience'),
  v('address'),
  b('stdin', 'i'),
  b('tty', 't'),
  b('quiet', 'q'),
  v('restart'),
  b('rm'),
  b('command'),
  opt('attach', 'true'),
  v('overrides'),
  b('expose'),
  v('labels'),
  v('annotations'),
  b('privileged'),
  v('target'),
  v('copy-to'),
  v('set-image'),
  b('share-processes'),
  b('same-node'),
  b('replace'),
  b('no-preserve'),
  v('retries'),
  v('patch-file'),
  b('recursive-delete'),
  v('serviceaccount'),
  v('schedule'),
  v('from'),
  v('hard'),
  v('scopes'),
  v('value'),
  b('global-default'),
  v('description'),
  v('preemption-policy'),
  v('rule'),
  v('class'),
  v('default-backend'),
  v('role'),
  v('clusterrole'),
  v('group'),
  v('resource'),
  v('resource-name'),
  v('non-resource-url'),
  v('aggregation-rule'),
  v('min-available'),
  v('max-unavailable'),
  v('reason'),
  b('keep-annotations'),
  b('no-headers-only'),
  v('custom-profile'),
  b('arguments-only'),
  v('fieldmanager'),
  b('enforce-namespace'),
  v('session-affinity'),
  v('load-balancer-ip'),
  v('generator'),
  v('api-version'),
  b('exit-code'),
  b('client'),
  b('containers'),
  b('show-capacity'),
  b('sum'),
  b('use-protocol-buffers'),
];

/** Meanings that differ by command: the command's own spec wins over COMMAND_FLAGS. */
export const COMMAND_OVERRIDES: Readonly<Record<string, readonly FlagSpec[]>> = {
  logs: [b('follow', 'f'), b('previous', 'p')],
  patch: [v('patch', 'p')],
  exec: [v('pod', 'p')],
  config: [b('raw')],
  'port-forward': [v('address')],
};

export interface FlagTable {
  long: Map<string, FlagSpec>;
  short: Map<string, FlagSpec>;
}

const tables = new Map<string, Readonly<FlagTable>>();

/** The flags `verb` accepts (global, common, then the verb's own, which win); built once per verb. */
export function flagTable(verb: string | undefined): Readonly<FlagTable> {
  const key = verb && Object.hasOwn(COMMAND_OVERRIDES, verb) ? verb : '';
  let table = tables.get(key);
  if (!table) {
    table = buildFlagTable(key || undefined);
    tables.set(key, table);
  }
  return table;
}

function buildFlagTable(verb: string | undefined): FlagTable {
  const long = new Map<string, FlagSpec>();
  const short = new Map<string, FlagSpec>();
  const add = (spec: FlagSpec) => {
    long.set(spec.name, spec);
    if (spec.short) short.set(spec.short, spec);
  };
  for (const spec of GLOBAL_FLAGS) add(spec);
  for (const spec of COMMAND_FLAGS) add(spec);
  for (const spec of (verb && COMMAND_OVERRIDES[verb]) || []) {
    // An override's short letter takes the letter from the common flag that had it (`-f`, `-p`).
    add(spec);
  }
  return { long, short };
}

/** Flags whose values are credentials: never written to a log line. */
export const SECRET_FLAGS: ReadonlySet<string> = new Set([
  'token',
  'password',
  'docker-password',
  'from-literal',
]);

/** argv with the values of credential flags replaced, for logs and audit records. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  let hideNext = false;
  for (const arg of argv) {
    if (hideNext) {
      out.push('[REDACTED]');
      hideNext = false;
      continue;
    }
    const m = /^--([^=]+)(=.*)?$/.exec(arg);
    if (m && SECRET_FLAGS.has(m[1] as string)) {
      if (m[2] === undefined) hideNext = true;
      out.push(m[2] === undefined ? arg : `--${m[1] as string}=[REDACTED]`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

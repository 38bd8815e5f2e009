import { redactArgv } from '../flags.js';
import { classifyKubectl, type ClassifiedCommand } from './classify.js';
import { commandPath } from './command-path.js';
import { decide, kubectlNames, type ToolPolicy } from './policy.js';

// What the kubectl guard does with one call: the rules no persona can lift (the command kubectl would
// run is the one the parser read, the daemon's credentials and files stay the daemon's), then the
// persona's tool policy over the names the call is classified by. Pure: the broker and the tests call
// it the same way.

/** Flags that would point kubectl at other credentials or another API server. */
const CREDENTIAL_FLAGS = [
  'kubeconfig',
  'context',
  'cluster',
  'user',
  'server',
  'token',
  'as',
  'as-group',
  'as-uid',
  'username',
  'password',
  'certificate-authority',
  'client-certificate',
  'client-key',
  'tls-server-name',
  'insecure-skip-tls-verify',
];
/** Flags that read or write files where kubectl runs (the daemon's machine), not the agent's. */
const LOCAL_FILE_FLAGS = [
  'filename',
  'kustomize',
  'cache-dir',
  'profile',
  'profile-output',
  'output-directory',
  'from-file',
  'from-env-file',
  'patch-file',
  'cert',
  'key',
  'custom-profile',
];
/**
 * Above this, kubectl logs the daemon's side of the call: from -v=6 the kubeconfig file it loaded and
 * every request URL, from -v=7 request headers, from -v=8 bodies, at -v=9 curl lines (the differential
 * test checks, with the real kubectl, that nothing up to here prints the kubeconfig path or token).
 */
export const MAX_VERBOSITY = 5;
/** Output formats read from a file. */
const FILE_OUTPUT = /^(jsonpath-file|go-template-file|templatefile|custom-columns-file)(=|$)/;

export interface CallRequest {
  /** Arguments after `kubectl`. */
  argv: readonly string[];
  /** KUBECONFIG as the agent's environment had it, if set. */
  kubeconfig?: string;
}

export interface CallDecision {
  command: ClassifiedCommand;
  /** The normalised command with credential flag values redacted: what records and messages show. */
  shown: string;
  allowed: boolean;
  /** Which rule decided: `guard: --server`, `exclude "kubectl @mutate"`, `include "kubectl @read"`, …. */
  rule: string;
  /** For a refusal: what was refused and why, in words for the agent (no trailing newline). */
  message?: string;
}

interface Parsed {
  cmd: ClassifiedCommand;
  shown: string;
}

const refuse = ({ cmd, shown }: Parsed, rule: string, why: string): CallDecision => ({
  command: cmd,
  shown,
  allowed: false,
  rule,
  message: `kubectl guard: refused \`kubectl ${shown}\`: ${why}`,
});

/** The guard's own rules; undefined when none refuses the call. */
function invariant(request: CallRequest, parsed: Parsed): CallDecision | undefined {
  const { cmd } = parsed;
  if (request.kubeconfig !== undefined && request.kubeconfig !== '') {
    return refuse(
      parsed,
      'guard: KUBECONFIG',
      `KUBECONFIG is set to ${JSON.stringify(request.kubeconfig)}; this kubectl always uses the cluster access the daemon holds. Unset KUBECONFIG and run the command again`,
    );
  }
  if (cmd.error) {
    return refuse(
      parsed,
      'guard: unreadable',
      `the guard cannot read this command (${cmd.error}); check the flags with \`kubectl ${cmd.verb ?? ''} --help\``,
    );
  }
  const resolved = commandPath(request.argv);
  const strays = [...new Set(resolved.strays)];
  if (strays.length > 0) {
    return refuse(
      parsed,
      'guard: flag before the command',
      `${strays.join(', ')} ${strays.length === 1 ? 'comes' : 'come'} before the command, where kubectl would take the next word as ${strays.length === 1 ? 'its' : 'a'} value and may run another command than the one written; only kubectl's global flags (-n, -v, --request-timeout, …) may come first: put the others after the command (kubectl get events -A)`,
    );
  }
  if (cmd.plugin) {
    return refuse(
      parsed,
      'guard: plugin',
      `"${cmd.verb ?? ''}" is not a kubectl command and plugins are not run`,
    );
  }
  const read = [cmd.verb, cmd.subcommand].filter((w) => w !== undefined).join(' ');
  if (resolved.path.join(' ') !== read) {
    return refuse(
      parsed,
      'guard: command mismatch',
      `kubectl would run \`kubectl ${resolved.path.join(' ')}\` but the guard read \`kubectl ${read}\`; write the command with its words first and its flags after them`,
    );
  }
  const credential = CREDENTIAL_FLAGS.find((f) => cmd.flags[f] !== undefined && cmd.flags[f] !== 'false');
  if (credential) {
    return refuse(
      parsed,
      `guard: --${credential}`,
      `--${credential} is not allowed: this kubectl always talks to the incident cluster with the daemon's credentials`,
    );
  }
  const local = LOCAL_FILE_FLAGS.find((f) => cmd.flags[f] !== undefined && cmd.flags[f] !== 'false');
  if (local) {
    return refuse(
      parsed,
      `guard: --${local}`,
      `--${local} is not allowed: kubectl runs outside your environment and cannot see your files`,
    );
  }
  if (cmd.output !== undefined && FILE_OUTPUT.test(cmd.output)) {
    return refuse(
      parsed,
      'guard: -o file',
      `-o ${cmd.output.split('=')[0] ?? ''} reads a file, and kubectl runs outside your environment; pass the template inline (-o jsonpath=…, -o go-template=…)`,
    );
  }
  if (cmd.flags.vmodule !== undefined) {
    return refuse(
      parsed,
      'guard: --vmodule',
      `--vmodule raises the log level per file, past the -v=${MAX_VERBOSITY} cap (where kubectl prints the daemon's kubeconfig path, request URLs and headers); use -v=${MAX_VERBOSITY} or less`,
    );
  }
  const verbosity = Number(cmd.flags.v ?? '0');
  if (!(verbosity <= MAX_VERBOSITY)) {
    return refuse(
      parsed,
      'guard: -v',
      `-v=${cmd.flags.v ?? ''} makes kubectl print the daemon's side of the call (from -v=6 the path of the daemon's kubeconfig and every request URL, from -v=7 request headers); it was not run: run it again with -v=${MAX_VERBOSITY} or less, or without -v`,
    );
  }
  if (cmd.verb === 'kustomize') {
    return refuse(
      parsed,
      'guard: kustomize',
      'kubectl kustomize reads local folders, which kubectl cannot see here',
    );
  }
  return undefined;
}

/** Decides one call: the guard's own rules first, then the persona's policy. */
export function decideCall(request: CallRequest, policy: ToolPolicy): CallDecision {
  const cmd = classifyKubectl(request.argv);
  const parsed = { cmd, shown: classifyKubectl(redactArgv(request.argv)).normalized };
  const refused = invariant(request, parsed);
  if (refused) return refused;
  const verdict = decide(policy, kubectlNames(cmd));
  if (verdict.allowed) return { command: cmd, shown: parsed.shown, allowed: true, rule: verdict.rule };
  const what =
    verdict.rule === 'no include pattern'
      ? `nothing in the ${policy.persona} persona's tool policy allows ${cmd.reason}`
      : `the ${policy.persona} persona's tool policy refuses ${cmd.reason} (${verdict.rule})`;
  return refuse(
    parsed,
    verdict.rule,
    `${what}. It was not run; if it is needed, put it in your report as a recommendation`,
  );
}

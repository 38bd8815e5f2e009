import type { KubectlCommand } from '../../kubectl/parse.js';
import type { ClassifiedCommand } from '../../kubectl/policy/classify.js';
import type { ResourceType } from '../../kubectl/resources.js';
import {
  apiResources,
  apiVersions,
  auth,
  clusterInfo,
  config,
  events,
  rawGet,
  rollout,
  top,
  version,
} from './builtin.js';
import type { FrozenCluster } from './cluster.js';
import { describe } from './describe.js';
import { effectiveNamespace, get } from './get.js';
import { logs } from './logs.js';
import { fail, withNewline, type ShimAnswer } from './output.js';

// One kubectl call against the frozen cluster: a recorded literal answer first, then kubectl's own
// usage errors, then the read-only rule (refused as a read-only ServiceAccount would be, and marked as
// a violation), then the read commands.

/** The RBAC verb and subresource a refused command would have needed. */
function rbacOf(cmd: KubectlCommand): { verb: string; subresource?: string } {
  switch (cmd.verb) {
    case 'create':
    case 'run':
    case 'expose':
      return { verb: 'create' };
    case 'delete':
      return { verb: 'delete' };
    case 'replace':
      return { verb: 'update' };
    case 'scale':
      return { verb: 'patch', subresource: 'scale' };
    case 'exec':
    case 'cp':
      return { verb: 'create', subresource: 'exec' };
    case 'attach':
      return { verb: 'create', subresource: 'attach' };
    case 'port-forward':
      return { verb: 'create', subresource: 'portforward' };
    case 'debug':
      return cmd.targets[0]?.type?.name === 'nodes'
        ? { verb: 'create' }
        : { verb: 'patch', subresource: 'ephemeralcontainers' };
    case 'get':
      return { verb: 'get' };
    default:
      return { verb: 'patch' };
  }
}

const qualified = (type: ResourceType) => (type.group === '' ? type.name : `${type.name}.${type.group}`);

/** What the API server answers a read-only ServiceAccount that tries `cmd`. */
export function forbidden(cmd: KubectlCommand, cluster: FrozenCluster): string {
  const who = `User "${cluster.user}"`;
  if (cmd.raw)
    return `Error from server (Forbidden): forbidden: ${who} cannot ${cmd.raw.method.toLowerCase()} path "${cmd.raw.path}"`;
  if (cmd.verb === 'config')
    return `error: the kubeconfig of this frozen cluster is read-only (${cmd.verb} ${cmd.subcommand ?? ''})`.trim();
  const target = cmd.targets.find((t) => t.type);
  const namespace = effectiveNamespace(cmd, cluster) ?? cluster.namespace;
  const { verb, subresource } = rbacOf(cmd);
  const verbText = cmd.verb === 'create' && cmd.subcommand === 'token' ? 'create' : verb;
  if (!target?.type) {
    return `Error from server (Forbidden): ${who} cannot ${verbText} resources in the namespace "${namespace}"`;
  }
  const type = target.type;
  const resource = subresource ? `${type.name}/${subresource}` : type.name;
  const scope = type.namespaced ? ` in the namespace "${namespace}"` : '';
  const name = target.names[0];
  const subject = name === undefined ? qualified(type) : `${qualified(type)} "${name}"`;
  return `Error from server (Forbidden): ${subject} is forbidden: ${who} cannot ${verbText} resource "${resource}" in API group "${type.group}"${scope}`;
}

function read(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  if (cmd.raw) return rawGet(cmd.raw.path, cluster);
  switch (cmd.verb) {
    case undefined:
      return fail(
        'kubectl controls the Kubernetes cluster manager.\n\nUse "kubectl <command> --help" for more information about a given command.',
        'usage-error',
      );
    case 'get':
      return get(cmd, cluster);
    case 'describe':
      return describe(cmd, cluster);
    case 'logs':
      return logs(cmd, cluster);
    case 'events':
      return events(cmd, cluster);
    case 'top':
      return top();
    case 'rollout':
      return rollout(cmd, cluster);
    case 'version':
      return version(cmd, cluster);
    case 'cluster-info':
      return clusterInfo(cmd, cluster);
    case 'config':
      return config(cmd, cluster);
    case 'auth':
      return auth(cmd, cluster);
    case 'api-resources':
      return apiResources(cmd);
    case 'api-versions':
      return apiVersions();
    default:
      return fail(
        `error: kubectl ${cmd.verb} is not available in this frozen cluster (case ${cluster.caseName})`,
        'unsupported',
      );
  }
}

/** Answers one parsed call. Never throws for anything an agent can type. */
export function answer(cmd: ClassifiedCommand, cluster: FrozenCluster): ShimAnswer {
  const recorded = cluster.commands.find((c) => c.normalized === cmd.normalized);
  if (recorded) {
    return {
      stdout: recorded.stdout,
      stderr: recorded.stderr,
      exitCode: recorded.exitCode,
      answeredFrom: 'commands',
    };
  }
  if (cmd.error) {
    const help = cmd.verb ? `\nSee 'kubectl ${cmd.verb} --help' for usage.` : '';
    return fail(`error: ${cmd.error}${help}`, 'usage-error');
  }
  if (cmd.plugin || cmd.category === 'unknown') {
    const word = cmd.plugin ? cmd.verb : cmd.args[0];
    const parent = cmd.plugin ? 'kubectl' : `kubectl ${cmd.verb ?? ''}`;
    return fail(`error: unknown command "${word ?? ''}" for "${parent}"`, 'unknown-command');
  }
  // The frozen cluster has no credentials, so it still shows Secrets by name and key size; the guard
  // refuses these calls on a real cluster (the Secret reaches kubectl whole on the daemon's side).
  if (!cmd.readOnly && !cmd.secretMetadata) {
    return {
      stdout: '',
      stderr: withNewline(forbidden(cmd, cluster)),
      exitCode: 1,
      answeredFrom: 'refused',
      violation: { category: cmd.category, reason: cmd.reason },
    };
  }
  if (cluster.recordedOnly)
    return fail(
      `error: kubectl ${cmd.normalized} was not run during the investigation case ${cluster.caseName} was promoted from, so its answer was not recorded (not-recorded)`,
      'not-recorded',
    );
  return read(cmd, cluster);
}

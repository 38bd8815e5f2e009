import { kubectlCatalog } from '../../../src/kubectl/policy/classify.js';

// The kubectl command lines the differential test decides with the guard and runs with the real
// kubectl: every verb and subcommand the policy names, over resources by plural, short name, kind and
// type/name; flags before and after the verb, `=` forms, short-flag clusters, flags that swallow the
// next word in kubectl's command lookup, percent-encoded and dot-segment raw paths, and credential
// printing forms. Deterministic, so a failure names a command line that can be run again.

const RESOURCES = [
  'po',
  'pod/web-1',
  'ev',
  'secrets',
  'secret/db',
  'Secret',
  'deployments.apps',
  'deployment.v1.apps/api',
  'nodes',
  'sa',
  'serviceaccount/default',
  'all',
  'pods,secrets',
];

/** Commands that take no resource argument. */
const NO_RESOURCE = new Set([
  'api-resources',
  'api-versions',
  'cluster-info',
  'cluster-info dump',
  'version',
  'diff',
  'completion',
  'help',
  'options',
  'plugin',
  'plugin list',
  'config',
  'config current-context',
  'config get-contexts',
  'config get-clusters',
  'config get-users',
  'auth',
  'auth whoami',
  'auth can-i',
  'top',
  'rollout',
]);

/** Flags kubectl's command lookup does not know at the root: each swallows the next word there. */
const SWALLOWING = ['-A', '-R', '-w', '-o', '-l', '--all', '--cascade', '--all-namespaces', '--recursive'];
/** Root flags in every form pflag takes. */
const ROOT_FORMS = [
  ['-n', 'payments'],
  ['-npayments'],
  ['-n=payments'],
  ['--namespace', 'payments'],
  ['--namespace=payments'],
  ['-v', '4'],
  ['-v=4'],
  ['--request-timeout=5s'],
];
/** Flags after the command that change what is printed or fetched. */
const AFTER_FLAGS = [
  [],
  ['-A'],
  ['-o', 'yaml'],
  ['-ojson'],
  ['-o=jsonpath={.items[*].metadata.name}'],
  ['--output', 'name'],
  ['-Ao', 'wide'],
  ['-l', 'app=web'],
  ['--show-labels'],
  ['-w'],
];
const MUTATING = ['delete', 'label', 'annotate', 'patch', 'scale', 'edit', 'replace', 'apply', 'create'];

const RAW_PATHS = [
  '/api/v1/namespaces/payments/pods',
  '/api/v1/namespaces/payments/pods/web-1/log',
  '/api/v1/namespaces/payments/secrets',
  '/api/v1/namespaces/payments/%73ecrets',
  '/api/v1/namespaces/payments/%2573ecrets',
  '/api/v1/namespaces/payments/pods/../secrets',
  '/api/v1/namespaces/payments/pods/%2e%2e/secrets',
  '/api/v1//secrets',
  '/api/v1/secrets',
  '/api/v1/namespaces/payments/SECRETS',
  '/api/v1/namespaces/payments/pods/web-1/proxy/',
  '/api/v1/namespaces/payments/pods/web-1/%70roxy/',
  '/api/v1/namespaces/payments/services/web/proxy/admin',
  '/api/v1/namespaces/payments/pods/web-1/exec?command=id',
  '/api/v1/nodes/node-1/proxy/configz',
  '/apis/apps/v1/namespaces/payments/deployments',
  '/version',
];

/** Every command line of the differential test, as argv (after `kubectl`). */
export function argvVariants(): string[][] {
  const out: string[][] = [];
  const seen = new Set<string>();
  const add = (argv: string[]) => {
    const key = JSON.stringify(argv);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(argv);
    }
  };
  for (const entry of kubectlCatalog()) {
    const command = [entry.verb, ...(entry.subcommand ? [entry.subcommand] : [])];
    add(command);
    add([...command, 'evidence-1', '-n', 'payments']);
    // Commands that take no resource read the same whatever follows; the rest get every resource form.
    if (NO_RESOURCE.has(command.join(' '))) continue;
    for (const resource of RESOURCES) {
      add([...command, resource]);
      add([...command, resource, 'evidence-1', '-n', 'payments']);
    }
  }
  // The read verbs the shipped policy allows, in every flag placement.
  for (const verb of [['get'], ['describe'], ['events'], ['top', 'pod'], ['rollout', 'history']]) {
    const resource = verb[0] === 'rollout' ? 'deploy/api' : 'pods';
    for (const root of ROOT_FORMS) add([...root, ...verb, resource]);
    for (const flag of SWALLOWING) add([flag, ...verb, resource]);
  }
  for (const resource of ['pods', 'secrets', 'sa', 'deploy/api'])
    for (const after of AFTER_FLAGS) add(['get', resource, ...after]);
  // A flag kubectl reads as taking a value swallows the next word, so the word after it is the verb.
  for (const flag of SWALLOWING) {
    for (const verb of MUTATING) {
      add([flag, 'events', verb, 'evidence-1', '-n', 'payments']);
      add([flag, 'events', verb, '--all']);
    }
    add([flag, 'pods', 'rollout', 'restart', 'deploy/api']);
    add(['rollout', flag, 'status', 'restart', 'deploy/api']);
    add(['rollout', flag, 'history', 'undo', 'deploy/api']);
    add(['auth', flag, 'can-i', 'reconcile']);
  }
  add(['-R', 'events', 'label', '--all', 'pwned=1']);
  add(['--cascade', 'events', 'delete', 'evidence-1', '-n', 'payments']);
  add(['-A', 'events', 'delete', '--all']);
  for (const path of RAW_PATHS) {
    add(['get', '--raw', path]);
    add(['get', `--raw=${path}`]);
    add(['--namespace=payments', 'get', '--raw', path]);
  }
  for (const flags of [[], ['--raw'], ['--flatten'], ['--minify', '-o', 'json'], ['--raw', '--flatten']])
    add(['config', 'view', ...flags]);
  add(['get', 'pods', '-v=9']);
  add(['get', 'pods', '--vmodule=*=9']);
  add(['get', 'pods', '-v', '6']);
  return out;
}

import fc from 'fast-check';

// Generated kubectl command lines for the differential test: the read commands the shipped policy
// allows, with kubectl's global flags before or after them, each command's own flags, resources in
// every spelling kubectl takes (plural, singular, short name, kind, any case, version- and
// group-qualified, comma lists, type/name) and `--` at any place between words. Seeded (fast-check),
// so a failure names a command line that is generated again the same way.

/** What a resource argument makes kubectl fetch: Secrets, ServiceAccounts, a workload through the API server, or none of these. */
type Touches = 'secret' | 'serviceaccount' | 'workload' | 'plain';

interface ResourceForm {
  words: string[];
  touches: Touches;
}

const form = (touches: Touches, ...words: string[]): ResourceForm => ({ words, touches });

const SECRET_TYPES = [
  'secrets',
  'secret',
  'Secret',
  'SECRETS',
  'secrets.v1',
  'secret.v1.',
  'Secrets.',
  'pods,secrets',
  'secrets,pods',
  'all,secrets',
  'cm,Secret',
];
const SA_TYPES = ['sa', 'serviceaccount', 'serviceaccounts', 'ServiceAccount', 'sa.v1.', 'pods,sa'];
const PLAIN_TYPES = [
  'pods',
  'po',
  'pod',
  'Pod',
  'deploy',
  'deployments.apps',
  'deployment.v1.apps',
  'ev',
  'cm',
];
const NAMES = [[], ['web-1'], ['db', 'api']];
const SECRET_NAMED = ['secret/db', 'secrets/db', 'Secret/db', 'secret.v1./db', 'SECRETS/db'];
const SA_NAMED = ['sa/default', 'serviceaccount/default', 'ServiceAccounts/default'];
const PLAIN_NAMED = ['pod/web-1', 'deploy/api', 'deployment.apps/api', 'po/web-1'];

/** `TYPE [NAME…]` and `TYPE/NAME…` forms, as get, describe and the like take them. */
const LISTED: ResourceForm[] = [
  ...SECRET_TYPES.flatMap((t) => NAMES.map((n) => form('secret', t, ...n))),
  ...SA_TYPES.flatMap((t) => NAMES.map((n) => form('serviceaccount', t, ...n))),
  ...PLAIN_TYPES.flatMap((t) => NAMES.map((n) => form('plain', t, ...n))),
  ...namedForms(),
];

function namedForms(): ResourceForm[] {
  return [
    ...SECRET_NAMED.map((w) => form('secret', w)),
    ...SA_NAMED.map((w) => form('serviceaccount', w)),
    ...PLAIN_NAMED.map((w) => form('plain', w)),
    form('secret', 'pod/web-1', 'secret/db'),
    form('serviceaccount', 'deploy/api', 'sa/default'),
  ];
}

/** `get --raw PATH` in both flag forms, for paths as written and as the API server decodes them. */
const RAW: ResourceForm[] = (
  [
    ['plain', '/api/v1/namespaces/payments/pods'],
    ['plain', '/api/v1/namespaces/payments/pods/web-1/log'],
    ['plain', '/apis/apps/v1/namespaces/payments/deployments'],
    ['secret', '/api/v1/namespaces/payments/secrets'],
    ['secret', '/api/v1/namespaces/payments/%73ecrets'],
    ['secret', '/api/v1/namespaces/payments/%2573ecrets'],
    ['secret', '/api/v1/namespaces/payments/pods/../secrets'],
    ['secret', '/api/v1//secrets'],
    ['secret', '/api/v1/namespaces/payments/SECRETS/db'],
    ['workload', '/api/v1/namespaces/payments/pods/web-1/proxy/'],
    ['workload', '/api/v1/namespaces/payments/pods/web-1/%70roxy/'],
    ['workload', '/api/v1/nodes/node-1/proxy/configz'],
  ] as const
).flatMap(([touches, p]) => [form(touches, '--raw', p), form(touches, `--raw=${p}`)]);

interface CommandSpec {
  command: string[];
  resources: ResourceForm[];
  /** Flag groups of the command; one group of `required` is always given. */
  flags: string[][];
  required?: string[][];
  /** Touches that make this command fetch Secrets (describe lists them for a ServiceAccount). */
  sensitive: readonly Touches[];
}

const SECRETS_ONLY: readonly Touches[] = ['secret'];

const COMMANDS: CommandSpec[] = [
  {
    command: ['get'],
    resources: LISTED,
    flags: [
      ['-A'],
      ['-o', 'yaml'],
      ['-ojson'],
      ['-o', 'name'],
      ['-o=wide'],
      ['--show-labels'],
      ['--chunk-size=10'],
    ],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['get'],
    resources: RAW,
    flags: [],
    sensitive: ['secret', 'workload'],
  },
  {
    command: ['describe'],
    resources: LISTED,
    flags: [['-A'], ['--show-events=false'], ['--chunk-size=10']],
    sensitive: ['secret', 'serviceaccount'],
  },
  {
    command: ['wait'],
    resources: namedForms(),
    flags: [],
    required: [
      ['--for=delete', '--timeout=1s'],
      ['--for=condition=Ready', '--timeout=1s'],
    ],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['logs'],
    resources: [
      form('plain', 'web-1'),
      form('plain', 'web-1', 'app'),
      ...namedForms().filter((f) => f.words.length === 1),
    ],
    flags: [['--tail=5'], ['--timestamps'], ['-c', 'app'], ['--limit-bytes=100']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['rollout', 'status'],
    resources: namedForms().filter((f) => f.words.length === 1),
    flags: [['-w=false']],
    required: [['--timeout=1s']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['rollout', 'history'],
    resources: namedForms().filter((f) => f.words.length === 1),
    flags: [['--revision=1']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['top', 'pod'],
    resources: [form('plain'), form('plain', 'web-1')],
    flags: [['-A'], ['--containers'], ['--no-headers']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['top', 'node'],
    resources: [form('plain'), form('plain', 'node-1')],
    flags: [['--no-headers']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['events'],
    // events takes no arguments: whatever is written there, it lists events.
    resources: [form('plain'), form('plain', 'secrets'), form('plain', 'secret/db')],
    flags: [['-A'], ['--for', 'pod/web-1'], ['--for=secret/db'], ['--types=Warning']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['explain'],
    // explain prints a type's schema from the OpenAPI document: it fetches no object of it.
    resources: ['pods', 'secrets', 'Secret', 'sa', 'deployments.apps'].map((t) => form('plain', t)),
    flags: [['--recursive']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['auth', 'can-i'],
    resources: [
      form('plain', 'get', 'secrets'),
      form('plain', 'list', 'pods'),
      form('plain', 'get', 'secret/db'),
    ],
    flags: [['-A'], ['--subresource=log']],
    sensitive: SECRETS_ONLY,
  },
  {
    command: ['apply', 'view-last-applied'],
    resources: namedForms().filter((f) => f.words.length === 1),
    flags: [['-o', 'json']],
    sensitive: SECRETS_ONLY,
  },
];

/** kubectl's global flags, in the forms pflag takes. */
const GLOBALS: string[][] = [
  ['-n', 'payments'],
  ['-npayments'],
  ['--namespace=payments'],
  ['--request-timeout=5s'],
  ['--warnings-as-errors'],
];
/** -v in its forms, at levels on both sides of the cap. */
const VERBOSITY: { words: string[]; level: number }[] = [
  ...[0, 3, 6, 8].map((v) => ({ words: ['-v', String(v)], level: v })),
  ...[2, 5, 7, 9].map((v) => ({ words: [`-v=${v}`], level: v })),
  ...[4, 6].map((v) => ({ words: [`--v=${v}`], level: v })),
];

/** One generated command line and what it should do. */
export interface GeneratedCall {
  argv: string[];
  /**
   * An ordinary read: nothing it names makes kubectl fetch Secrets, no verbosity past the cap, and
   * `--` (if any) after the command words. The guard must allow it.
   */
  ordinary: boolean;
}

/** The maximum -v the guard allows (decide.ts MAX_VERBOSITY), restated so the test checks the code. */
const SAFE_VERBOSITY = 5;

const callArbitrary = fc
  .record({
    spec: fc.constantFrom(...COMMANDS),
    before: fc.subarray(GLOBALS, { maxLength: 2 }),
    after: fc.subarray(GLOBALS, { maxLength: 1 }),
    verbosity: fc.option(fc.constantFrom(...VERBOSITY), { freq: 3 }),
    verbosityFirst: fc.boolean(),
    pick: fc.nat(),
    flagPicks: fc.array(fc.nat(), { maxLength: 2 }),
    order: fc.nat(),
    dash: fc.option(fc.nat(), { freq: 2 }),
  })
  .map((g): GeneratedCall => {
    const { spec, pick, order } = g;
    const resource = spec.resources[pick % spec.resources.length] as ResourceForm;
    const own =
      spec.flags.length === 0 ? [] : g.flagPicks.map((p) => spec.flags[p % spec.flags.length] as string[]);
    const required = spec.required ? [spec.required[pick % spec.required.length] as string[]] : [];
    const v = g.verbosity?.words;
    const before = [...g.before, ...(v && g.verbosityFirst ? [v] : [])];
    // The command's own flags and the late globals, in an order of their own after the resources.
    const tail = rotate([...own, ...required, ...g.after, ...(v && !g.verbosityFirst ? [v] : [])], order);
    const groups = [...before, ...spec.command.map((w) => [w]), ...resource.words.map((w) => [w]), ...tail];
    const at = g.dash === null ? -1 : g.dash % (groups.length + 1);
    const argv = groups.flatMap((words, i) => (i === at ? ['--', ...words] : words));
    if (at === groups.length) argv.push('--');
    const commandEnd = before.length + spec.command.length;
    // -v after `--` is a word, not a flag.
    const vAt = v === undefined ? -1 : groups.indexOf(v);
    const loud = (g.verbosity?.level ?? 0) > SAFE_VERBOSITY && (at === -1 || vAt < at);
    const ordinary = !spec.sensitive.includes(resource.touches) && !loud && (at === -1 || at >= commandEnd);
    return { argv, ordinary };
  });

function rotate<T>(items: T[], by: number): T[] {
  if (items.length === 0) return items;
  const n = by % items.length;
  return [...items.slice(n), ...items.slice(0, n)];
}

/** `count` command lines generated from `seed`, the same for the same seed. */
export function generatedCalls(seed: number, count: number): GeneratedCall[] {
  return fc.sample(callArbitrary, { seed, numRuns: count });
}

/** `argv` with `--` put at each place in turn, from before the first word to after the last. */
export function dashEverywhere(argv: readonly string[]): string[][] {
  return Array.from({ length: argv.length + 1 }, (_, i) => [...argv.slice(0, i), '--', ...argv.slice(i)]);
}

// The layers of src/ as lint rules (`npm run lint` runs dependency-cruiser with this file).
// LAYERS is the one list: the rules below are made from it, and test/unit/layers/rules.test.ts checks
// that docs/architecture.md's layer table says the same, that every folder of src/ is on it, and that
// a planted import breaking a rule fails the cruise with that rule's name.

/** The folders of src/, lowest layer first. A folder imports only folders on a lower layer. */
export const LAYERS = [
  ['shared', 'log'],
  ['config', 'util'],
  ['workspace', 'agents', 'kubectl', 'clusters', 'election'],
  ['audit', 'engines', 'gateway', 'prometheus'],
  ['report'],
  ['incident', 'feedback', 'evidence'],
  ['context', 'intake', 'notify', 'status'],
  ['run', 'server'],
  ['daemon', 'replay'],
  ['eval'],
  ['cli'],
];

/** Folders whose code runs on its own (in the agent's container): node builtins and itself only. */
export const SELF_CONTAINED = ['kubectl/guard', 'gateway/bridge'];

const any = (folders) => `^src/(${folders.join('|')})/`;
const below = (layer) => LAYERS.slice(0, layer).flat();
const layerOf = (folder) => LAYERS.findIndex((folders) => folders.includes(folder));

const layerRules = LAYERS.map((folders, layer) => ({
  name: `layer-${layer}`,
  comment: `${folders.map((f) => `${f}/`).join(', ')} (layer ${layer}) import only folders on a lower layer${
    layer === 0
      ? ' (none)'
      : `: ${below(layer)
          .map((f) => `${f}/`)
          .join(', ')}`
  }`,
  severity: 'error',
  from: { path: any(folders) },
  // `$1` is the importing folder: a folder's own modules are never a violation of its layer.
  to: { path: '^src/', pathNot: ['^src/$1/', ...(layer === 0 ? [] : [any(below(layer))])] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'no-cli-imports',
      comment: 'nothing imports cli/: it parses flags and calls what is below it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'agents-engines-apart',
      comment:
        'an adapter (agents/) never imports an engine and an engine never imports an adapter: run/ joins them',
      severity: 'error',
      from: { path: any(['agents', 'engines']) },
      to: { path: any(['agents', 'engines']), pathNot: '^src/$1/' },
    },
    {
      name: 'nothing-below-run-imports-it',
      comment: 'only daemon/, replay/, eval/ and cli/ run the pipeline: nothing below run/ imports it',
      severity: 'error',
      from: { path: any(below(layerOf('run'))) },
      to: { path: '^src/run/' },
    },
    {
      name: 'in-a-layer',
      comment:
        'every module of src/ sits in a folder of LAYERS (.dependency-cruiser.mjs, docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/', pathNot: any(LAYERS.flat()) },
      to: {},
    },
    {
      name: 'imports-a-folder-in-a-layer',
      comment:
        'what src/ imports of src/ sits in a folder of LAYERS (.dependency-cruiser.mjs, docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: any(LAYERS.flat()) },
    },
    {
      name: 'self-contained',
      comment: `${SELF_CONTAINED.map((f) => `${f}/`).join(' and ')} run in the agent's container: node builtins and their own modules only`,
      severity: 'error',
      from: { path: any(SELF_CONTAINED) },
      to: { pathNot: '^src/$1/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'no-circular',
      comment: 'no module reaches itself through its imports (type-only imports count too)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too: TypeScript's own parser sees them before compilation.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};

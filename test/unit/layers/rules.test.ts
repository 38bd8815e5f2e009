import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../../support/scratch.js';

// The layers of src/ are lint rules (.dependency-cruiser.mjs, run by `npm run lint`): the architecture
// doc's layer table says what they say, every folder of src/ is on it, and an import that breaks a
// rule fails lint with that rule's name.

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CONFIG_FILE = '.dependency-cruiser.mjs';
const { LAYERS } = (await import(pathToFileURL(path.join(ROOT, CONFIG_FILE)).href)) as {
  LAYERS: string[][];
};

/** The name of the layer rule for `folder`'s layer (`layer-N`). */
const ruleOf = (folder: string): string => `layer-${LAYERS.findIndex((folders) => folders.includes(folder))}`;

/** `layer → folders` from docs/architecture.md's table under "The layers, and which way dependencies point". */
function documentedLayers(): Map<number, string[]> {
  const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('The layers'));
  if (!section) throw new Error('docs/architecture.md has no section "The layers…"');
  const layers = new Map<number, string[]>();
  for (const row of section.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)) {
    const folders = [...(row[2] ?? '').matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1] ?? '');
    layers.set(Number(row[1]), folders);
  }
  return layers;
}

/** The command `npm run lint` runs to check the layers, as words. */
function lintCruiseCommand(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const step = (pkg.scripts.lint ?? '').split('&&').find((s) => s.trim().startsWith('depcruise '));
  if (!step) throw new Error(`package.json's lint script runs no depcruise: ${pkg.scripts.lint}`);
  return step.trim().split(/\s+/);
}

/**
 * Runs lint's cruise in `dir`: its exit code and the violations it names (`rule: from → to`), read from
 * the lines lint prints (`  error no-cli-imports: src/util/x.ts → src/cli/main.ts`; a circle goes on
 * over the next lines: the first step is kept).
 */
async function cruise(dir: string): Promise<{ code: number; violations: string[] }> {
  const [bin, ...args] = lintCruiseCommand();
  const { code, stdout } = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin', bin ?? ''), args, {
    cwd: dir,
    maxBuffer: 16 << 20,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '' }),
  );
  const violations = [...stdout.matchAll(/^\s*error (\S+): (\S+) →\s+(\S+)/gm)].map(
    ([, rule, from, to]) => `${rule}: ${from} → ${to}`,
  );
  return { code, violations: violations.sort() };
}

/**
 * The layer rules in a scratch folder with `files` planted in its src/: in a copy of the repository's
 * src/ (`copySrc`), or alone.
 */
function plantedTree(files: Record<string, string>, { copySrc }: { copySrc: boolean }): string {
  const dir = scratchDir('layers-');
  if (copySrc) cpSync(path.join(ROOT, 'src'), path.join(dir, 'src'), { recursive: true });
  cpSync(path.join(ROOT, CONFIG_FILE), path.join(dir, CONFIG_FILE));
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the layers of src/ as lint rules', () => {
  it("docs/architecture.md's layer table lists the same folders on the same layers as the rules", () => {
    const documented = documentedLayers();
    expect([...documented.keys()].sort((a, b) => a - b)).toEqual(LAYERS.map((_, i) => i));
    for (const [layer, folders] of LAYERS.entries())
      expect({ layer, folders: [...(documented.get(layer) ?? [])].sort() }).toEqual({
        layer,
        folders: [...folders].sort(),
      });
  });

  it('every folder of src/ is on exactly one layer, and no module sits in src/ itself', () => {
    const entries = readdirSync(path.join(ROOT, 'src'), { withFileTypes: true });
    expect(entries.filter((e) => !e.isDirectory()).map((e) => e.name)).toEqual([]);
    const placed = LAYERS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    expect(entries.map((e) => e.name).sort()).toEqual([...placed].sort());
  });

  it('lint fails on planted imports that break the rules, naming each rule, and on nothing else', async () => {
    const dir = plantedTree(
      {
        // Target modules, each on its folder's layer.
        'src/cli/planted-cli.ts': "import '../stray/planted.js';\nexport const cli = 1;\n",
        'src/agents/planted-agent.ts': 'export type Agent = { id: string };\n',
        'src/run/planted-run.ts': 'export const run = 1;\n',
        'src/shared/planted-shared.ts': 'export const shared = 1;\n',
        // A type-only import of the CLI from below: the layer's rule and the CLI's own.
        'src/util/planted.ts':
          "import type { cli } from '../cli/planted-cli.js';\nexport type C = typeof cli;\n",
        // An engine importing an adapter: a lower layer, but engines and agents stay apart.
        'src/engines/planted.ts':
          "import type { Agent } from '../agents/planted-agent.js';\nexport type A = Agent;\n",
        // Below the run, importing it.
        'src/context/planted.ts': "export { run } from '../run/planted-run.js';\n",
        // A circle inside one folder.
        'src/workspace/planted-a.ts':
          "import type { B } from './planted-b.js';\nexport type A = { b?: B };\n",
        'src/workspace/planted-b.ts':
          "import type { A } from './planted-a.js';\nexport type B = { a?: A };\n",
        // A folder on no layer, and the CLI importing it.
        'src/stray/planted.ts': "export { shared } from '../shared/planted-shared.js';\n",
        // The agent's kubectl client reaching outside itself (to a lower layer, which the layers allow).
        'src/kubectl/guard/planted.ts': "export { shared } from '../../shared/planted-shared.js';\n",
      },
      { copySrc: true },
    );
    const { code, violations } = await cruise(dir);
    expect(code).not.toBe(0);
    expect(violations).toEqual(
      [
        'layer-1: src/util/planted.ts → src/cli/planted-cli.ts',
        'no-cli-imports: src/util/planted.ts → src/cli/planted-cli.ts',
        'agents-engines-apart: src/engines/planted.ts → src/agents/planted-agent.ts',
        `${ruleOf('context')}: src/context/planted.ts → src/run/planted-run.ts`,
        'nothing-below-run-imports-it: src/context/planted.ts → src/run/planted-run.ts',
        'no-circular: src/workspace/planted-a.ts → src/workspace/planted-b.ts',
        'in-a-layer: src/stray/planted.ts → src/shared/planted-shared.ts',
        'imports-a-folder-in-a-layer: src/cli/planted-cli.ts → src/stray/planted.ts',
        `${ruleOf('cli')}: src/cli/planted-cli.ts → src/stray/planted.ts`,
        'self-contained: src/kubectl/guard/planted.ts → src/shared/planted-shared.ts',
      ].sort(),
    );
  });

  it('lint passes a tree whose imports the layers allow', async () => {
    const dir = plantedTree(
      {
        'src/cli/planted-cli.ts': "export { run } from '../run/planted-run.js';\n",
        'src/run/planted-run.ts':
          "import type { Agent } from '../agents/planted-agent.js';\nexport const run = 1;\nexport type A = Agent;\n",
        'src/agents/planted-agent.ts':
          "import type { S } from '../shared/planted-shared.js';\nexport type Agent = { id: S };\n",
        'src/shared/planted-shared.ts': 'export type S = string;\n',
      },
      { copySrc: false },
    );
    expect(await cruise(dir)).toEqual({ code: 0, violations: [] });
  });
});

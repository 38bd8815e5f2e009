import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES, ENGINE_PLACEMENT, createEngine } from '../../../src/engines/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { REPO_ROOT, testConfig } from '../../support/runs.js';

// Files in src/engines/ that are not engines.
const NOT_ENGINES = new Set(['index.ts', 'types.ts', 'labels.ts', 'start-gate.ts']);

describe('engine registry', () => {
  it('registers exactly the engine modules in src/engines/ (a file, or a folder with an index.ts)', async () => {
    const entries = await readdir(path.join(REPO_ROOT, 'src/engines'), { withFileTypes: true });
    const engines = entries.flatMap((e) => {
      if (e.isDirectory()) return [e.name];
      return e.name.endsWith('.ts') && !NOT_ENGINES.has(e.name) ? [e.name.replace(/\.ts$/, '')] : [];
    });
    expect(Object.keys(ENGINES).sort()).toEqual(engines.sort());
  });

  it('fails on an unknown engine with the list of valid ones', async () => {
    await expect(createEngine('lxc', { config: testConfig('/tmp/x'), log: silentLogger() })).rejects.toThrow(
      `unknown engine "lxc": valid engines are ${Object.keys(ENGINES).join(', ')}`,
    );
  });

  it('creates the docker and process engines under their own names, with the placement the map declares', async () => {
    // kubernetes needs a kubeconfig at creation; its own tests cover it.
    for (const name of ['docker', 'process'] as const) {
      const engine = await createEngine(name, { config: testConfig('/tmp/x'), log: silentLogger(), env: {} });
      expect(engine.name).toBe(name);
      expect(engine.placement).toBe(ENGINE_PLACEMENT[name]);
    }
  });
});

import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINES, createEngine } from '../../../src/engines/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { REPO_ROOT, testConfig } from '../../support/runs.js';

// Files in src/engines/ that are not engines.
const NOT_ENGINES = new Set(['index.ts', 'types.ts', 'labels.ts']);

describe('engine registry', () => {
  it('registers exactly the engine modules in src/engines/', async () => {
    const files = (await readdir(path.join(REPO_ROOT, 'src/engines'))).filter(
      (f) => f.endsWith('.ts') && !NOT_ENGINES.has(f),
    );
    expect(Object.keys(ENGINES).sort()).toEqual(files.map((f) => f.replace(/\.ts$/, '')).sort());
  });

  it('fails on an unknown engine with the list of valid ones', () => {
    expect(() => createEngine('lxc', { config: testConfig('/tmp/x'), log: silentLogger() })).toThrow(
      `unknown engine "lxc": valid engines are ${Object.keys(ENGINES).join(', ')}`,
    );
  });

  it('creates the docker and process engines under their own names', () => {
    // kubernetes needs a kubeconfig at creation; its own tests cover it.
    for (const name of ['docker', 'process']) {
      expect(createEngine(name, { config: testConfig('/tmp/x'), log: silentLogger(), env: {} }).name).toBe(
        name,
      );
    }
  });
});

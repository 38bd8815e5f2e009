import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configKeys, loadConfig } from '../../../src/config/index.js';
import { PACKAGE_ROOT } from '../../../src/cli/io.js';

const EXAMPLE = path.join(PACKAGE_ROOT, 'configs/config.example.yaml');

function has(obj: unknown, keyPath: string[]): boolean {
  let node = obj;
  for (const part of keyPath) {
    if (!node || typeof node !== 'object' || !(part in node)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return true;
}

describe('configs/config.example.yaml', () => {
  it('documents every key of the schema (commented-out optional keys count)', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    // Optional keys without a default are shown commented out: uncomment them for the check.
    const uncommented = parse(text.replace(/^(\s*)# ?([a-z_]+:)/gm, '$1$2')) as unknown;
    const missing = configKeys()
      .map((k) => k.path)
      .filter((p) => !has(uncommented, p))
      .map((p) => p.join('.'));
    expect(missing).toEqual([]);
  });

  it('is valid and its values equal the built-in defaults', () => {
    const fromFile = loadConfig({ file: EXAMPLE, env: {}, cwd: PACKAGE_ROOT }).config;
    const defaults = loadConfig({ env: {}, cwd: PACKAGE_ROOT }).config;
    expect(fromFile).toEqual(defaults);
  });
});

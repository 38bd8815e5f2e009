import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_NAMES, ENGINE_NAMES } from '../../../src/config/schema.js';

// What differs between engines and between agent CLIs is their registries' data (an engine's placement
// and capabilities, an adapter's fields): no other module asks which one it has by name.

const SRC = path.resolve(import.meta.dirname, '../../../src');

/** Lines of code under src/ (comments left out) outside `folder` comparing something with one of `names`. */
async function nameBranches(folder: string, names: readonly string[]): Promise<string[]> {
  const alternatives = names.join('|');
  const comparison = new RegExp(
    String.raw`(===|!==)\s*'(${alternatives})'|'(${alternatives})'\s*(===|!==)|case\s+'(${alternatives})'\s*:`,
  );
  const files = (await readdir(SRC, { recursive: true })).filter(
    (f) => f.endsWith('.ts') && !f.startsWith(`${folder}${path.sep}`),
  );
  const found: string[] = [];
  for (const file of files)
    (await readFile(path.join(SRC, file), 'utf8')).split('\n').forEach((line, i) => {
      if (!/^\s*(\/\/|\*|\/\*)/.test(line) && comparison.test(line))
        found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  return found;
}

describe('engines and agents are told apart by their data, never by name', () => {
  it('no module outside src/engines/ branches on an engine name', async () => {
    expect(await nameBranches('engines', ENGINE_NAMES)).toEqual([]);
  });

  it('no module outside src/agents/ branches on an agent name', async () => {
    expect(await nameBranches('agents', AGENT_NAMES)).toEqual([]);
  });
});

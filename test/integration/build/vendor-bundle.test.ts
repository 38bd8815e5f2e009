import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import { z as zod } from 'zod';
import { bundleVendor } from '../../../scripts/bundle-vendor.mjs';
import type * as YamlApi from '../../../src/shared/yaml.js';
import type { z as Z } from '../../../src/shared/zod.js';

const run = promisify(execFile);

// The build replaces dist/shared/zod.js and dist/shared/yaml.js with these bundles: the compiled CLI then loads one zod file
// instead of zod's entry points, which evaluate every locale (~95 modules) on import.
describe('the bundled zod', () => {
  let dir: string;
  let inputs: string[];
  let bundled: typeof Z;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'zod-bundle-'));
    const outfile = path.join(dir, 'zod.js');
    const meta = await bundleVendor('zod', outfile);
    inputs = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
    bundled = ((await import(pathToFileURL(outfile).href)) as { z: typeof Z }).z;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps the English messages and no other locale', () => {
    const locales = inputs.filter((i) => i.includes('/locales/')).map((i) => path.basename(i));
    expect(locales).toEqual(['en.js']);
    expect(inputs.length).toBeLessThan(40);
  });

  it('gives the same issues as zod itself for a schema using every member the project imports', () => {
    const shape = (z: typeof Z) =>
      z.strictObject({
        name: z.string().min(2),
        count: z.number().int().max(3),
        kind: z.enum(['a', 'b']),
        flag: z.boolean(),
        tags: z.array(z.literal('x')),
        mode: z.union([z.literal('on'), z.number()]),
        extra: z.looseObject({ id: z.string() }),
        map: z.record(z.string(), z.unknown()),
        at: z.iso.datetime(),
        mail: z.email(),
        link: z.url(),
        nested: z.object({ n: z.number() }),
      });
    const bad = {
      name: 'x',
      count: 7.5,
      kind: 'c',
      flag: 'yes',
      tags: ['y'],
      mode: 'off',
      extra: {},
      map: [],
      at: 'yesterday',
      mail: 'nobody',
      link: 'not a url',
      nested: { n: 'one' },
      stray: 1,
    };
    const ours = shape(bundled).safeParse(bad);
    const theirs = shape(zod as unknown as typeof Z).safeParse(bad);
    expect(ours.success).toBe(false);
    expect(ours.error?.issues.map((i) => [i.path, i.message])).toEqual(
      theirs.error?.issues.map((i) => [i.path, i.message]),
    );
    expect(ours.error?.issues.find((i) => i.path[0] === 'count')?.message).toMatch(/expected int/i);
    expect(ours.error).toBeInstanceOf(bundled.ZodError);
  });
});

describe('the bundled yaml', () => {
  it('is one file that parses and prints like yaml itself, positions and node kinds included', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'yaml-bundle-'));
    try {
      const outfile = path.join(dir, 'yaml.js');
      await bundleVendor('yaml', outfile);
      const ours = (await import(pathToFileURL(outfile).href)) as typeof YamlApi;
      const text = 'agent:\n  timeout: 30s\nlist: [a, b]\n---\nsecond: 2\n';
      const counter = new ours.LineCounter();
      const doc = ours.parseDocument('agent:\n  timeout: 30s\n', { lineCounter: counter });
      expect(doc.toJS()).toEqual(yaml.parseDocument('agent:\n  timeout: 30s\n').toJS());
      expect(ours.isMap(doc.contents)).toBe(true);
      expect(ours.isSeq(ours.parseDocument('[1]').contents)).toBe(true);
      expect(counter.linePos(9)).toEqual({ line: 2, col: 3 });
      expect(ours.parseAllDocuments(text).map((d) => d.toJS())).toEqual(
        yaml.parseAllDocuments(text).map((d) => d.toJS()),
      );
      expect(ours.stringify({ a: [1, 'x'] })).toBe(yaml.stringify({ a: [1, 'x'] }));
      // In plain node, outside the test runner's module loader (which lends ES modules a require).
      const script = `const y = await import(${JSON.stringify(pathToFileURL(outfile).href)}); console.log(JSON.stringify(y.parseDocument('a: [1]').toJS()));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
      expect(JSON.parse(stdout)).toEqual({ a: [1] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

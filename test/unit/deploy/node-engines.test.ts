import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README promises Node.js >= 20.19: every package installed for production must say it runs there.

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const semver = createRequire(import.meta.url)('semver') as { satisfies(v: string, range: string): boolean };

interface LockPackage {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

describe('Node.js version floor', () => {
  it('every production dependency in the lock file accepts the Node.js floor in package.json', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    const floor = pkg.engines.node.replace(/^>=\s*/, '');
    expect(floor).toBe('20.19.0');
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockPackage>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(
        ([name, p]) => name !== '' && !p.dev && p.engines && !Array.isArray(p.engines) && p.engines.node,
      )
      .filter(([, p]) => !semver.satisfies(floor, (p.engines as { node: string }).node))
      .map(([name, p]) => `${name}@${p.version ?? '?'} (node ${(p.engines as { node: string }).node})`);
    expect(refusing).toEqual([]);
  });
});

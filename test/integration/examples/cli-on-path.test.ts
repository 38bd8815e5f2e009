import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

// The README's first commands end with `npm link`, which links package.json's bin into the global
// bin folder. The built file must run through that link, as `triage-runner`, from any folder.

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const run = promisify(execFile);
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('triage-runner on PATH', () => {
  it("the README's fresh-machine commands link the bin, and the linked bin runs from any folder", async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const block = /## On a fresh machine\n+```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(block).toMatch(/npm run build && npm link/);
    expect(block).toMatch(/^triage-runner daemon/m);

    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      version: string;
    };
    const target = path.join(ROOT, pkg.bin['triage-runner'] ?? '');
    expect(existsSync(target), `${target} is missing: run npm run build first`).toBe(true);
    dir = await mkdtemp(path.join(tmpdir(), 'tr-bin-'));
    await symlink(target, path.join(dir, 'triage-runner'));
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` };
    const version = await run('triage-runner', ['--version'], { env, cwd: tmpdir() });
    expect(version.stdout.trim()).toBe(pkg.version);
    const check = await run(
      'triage-runner',
      ['validate-config', path.join(ROOT, 'configs/config.example.yaml')],
      { env: { ...env, ANTHROPIC_API_KEY: 'sk-ant-test-0123456789' }, cwd: ROOT },
    );
    expect(check.stdout).toContain('configuration is valid');
  });
});

import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AuditKeyError, auditKeyFile, keyFileProblem, loadAuditKey } from '../../../src/audit/key.js';
import type { CliIO } from '../../../src/cli/io.js';
import { runCli } from '../../../src/cli/program.js';
import { scratchDir } from '../../support/scratch.js';

// The audit key kept with the daemon's state: made once per root (also by replicas starting at once),
// mode 0600, never by a verifier, never in a workspace; a configured secret wins.

const run = promisify(execFile);
const config = (root: string, audit: { hmac_secret?: string; key_file?: string } = {}) => ({
  workspaces_root: root,
  audit,
});

describe('the audit key', () => {
  it('is made on first use as 64 hex digits in <root>/.triage/audit.key, mode 0600, and the same key is read after', () => {
    const root = scratchDir('tr-key-');
    const first = loadAuditKey(config(root), {}, 'make');
    expect(first).toMatchObject({
      kind: 'file',
      file: path.join(root, '.triage', 'audit.key'),
      created: true,
    });
    const key = (first as { key: string }).key;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(auditKeyFile(config(root))).mode & 0o777).toBe(0o600);
    expect(loadAuditKey(config(root), {}, 'make')).toMatchObject({
      kind: 'file',
      key,
      created: false,
    });
    // A verifier finds the same key, and no temp file is left beside it.
    expect(loadAuditKey(config(root), {}, 'verify')).toMatchObject({ kind: 'file', key });
    expect(readFileSync(path.join(root, '.triage', 'audit.key'), 'utf8')).toBe(`${key}\n`);
    expect(statSync(path.join(root, '.triage')).isDirectory()).toBe(true);
  });

  it('is the same for eight replicas starting at once on one root, made by exactly one of them', async () => {
    const root = scratchDir('tr-key-race-');
    const script = path.resolve('test/fixtures/audit/load-key.ts');
    const outs = await Promise.all(
      Array.from({ length: 8 }, () =>
        run(process.execPath, ['--import', 'tsx', script, root], { timeout: 50_000 }),
      ),
    );
    const lines = outs.map((o) => o.stdout.trim().split(' '));
    expect(new Set(lines.map(([, key]) => key)).size).toBe(1);
    expect(lines.filter(([created]) => created === 'true')).toHaveLength(1);
    expect(lines[0]![1]).toBe(readFileSync(path.join(root, '.triage', 'audit.key'), 'utf8').trim());
  });

  it('is never made by a verifier, nor for a root that does not exist', () => {
    const root = scratchDir('tr-key-none-');
    expect(loadAuditKey(config(root), {}, 'verify')).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/audit\.key does not exist \(the daemon makes it on its first start\)/),
    });
    expect(existsSync(path.join(root, '.triage'))).toBe(false);
    const missing = path.join(root, 'not-yet');
    expect(loadAuditKey(config(missing), {}, 'make')).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/workspaces root .*not-yet does not exist/),
    });
    expect(existsSync(missing)).toBe(false);
  });

  it('refuses a key file that is not a key, or a symbolic link, saying what to do', () => {
    const root = scratchDir('tr-key-bad-');
    mkdirSync(path.join(root, '.triage'));
    const file = path.join(root, '.triage', 'audit.key');
    writeFileSync(file, 'short\n', { mode: 0o600 });
    expect(() => loadAuditKey(config(root), {}, 'make')).toThrow(AuditKeyError);
    expect(() => loadAuditKey(config(root), {}, 'verify')).toThrow(
      /holds 5 characters, fewer than the 32 of a key/,
    );
    const other = scratchDir('tr-key-link-');
    mkdirSync(path.join(other, '.triage'));
    symlinkSync(file, path.join(other, '.triage', 'audit.key'));
    expect(() => loadAuditKey(config(other), {}, 'make')).toThrow(
      /is a symbolic link, which is never followed/,
    );
  });

  it('is made in audit.key_file when set (its folder 0700), and says when others can read it', () => {
    const root = scratchDir('tr-key-file-');
    const file = path.join(root, 'state', 'keys', 'audit.key');
    const made = loadAuditKey(config(root, { key_file: file }), {}, 'make');
    expect(made).toMatchObject({ kind: 'file', file, created: true, exposed: false });
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    writeFileSync(file, `${'ab'.repeat(32)}\n`);
    chmodSync(file, 0o644);
    expect(loadAuditKey(config(root, { key_file: file }), {}, 'verify')).toMatchObject({
      key: 'ab'.repeat(32),
      exposed: true,
    });
  });

  it('is the secret audit.hmac_secret names when set, and an error when that secret is not', () => {
    const root = scratchDir('tr-key-secret-');
    expect(
      loadAuditKey(config(root, { hmac_secret: 'AUDIT_KEY' }), { AUDIT_KEY: 'k'.repeat(40) }, 'make'),
    ).toEqual({
      kind: 'secret',
      key: 'k'.repeat(40),
      name: 'AUDIT_KEY',
    });
    expect(existsSync(path.join(root, '.triage'))).toBe(false);
    expect(() => loadAuditKey(config(root, { hmac_secret: 'AUDIT_KEY' }), {}, 'make')).toThrow(
      /audit\.hmac_secret names the secret AUDIT_KEY, which is not set/,
    );
  });

  it('may not be kept inside an incident workspace: audit.key_file under the root is allowed only in its .triage/', () => {
    const root = '/srv/incidents';
    expect(keyFileProblem(config(root, { key_file: '/srv/incidents/inc-1/audit.key' }))).toMatch(
      /inside the workspaces root \/srv\/incidents but not in its \.triage\/ folder/,
    );
    expect(
      keyFileProblem(config(root, { key_file: '/srv/incidents/.triage/keys/audit.key' })),
    ).toBeUndefined();
    expect(keyFileProblem(config(root, { key_file: '/etc/triage-runner/audit.key' }))).toBeUndefined();
    expect(keyFileProblem(config(root))).toBeUndefined();
  });

  it('validate-config reports audit.key_file inside a workspace as a problem (exit 2)', async () => {
    const root = scratchDir('tr-key-check-');
    const err: string[] = [];
    const io: CliIO = {
      stdout: () => undefined,
      stderr: (t) => void err.push(t),
      env: {
        TRIAGE_RUNNER_WORKSPACES_ROOT: root,
        TRIAGE_RUNNER_AUDIT_KEY_FILE: path.join(root, 'inc-1', 'audit.key'),
      },
      cwd: root,
    };
    expect(await runCli(['validate-config'], io)).toBe(2);
    expect(err.join('')).toMatch(/audit\.key_file: .*inc-1\/audit\.key is inside the workspaces root/);
  });
});

// The audit chain is keyed by default: the real daemon, started with no audit settings at all, makes a
// key with its own state on its first start and keys every workspace's chain with it, so the forged
// `finished` line that used to verify "intact" is caught; `audit verify` finds the key as the daemon
// does, and says plainly when a chain is unkeyed or when it has no key to check HMACs with.
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadAuditKey } from '../../../src/audit/key.js';
import { AuditLog } from '../../../src/audit/log.js';
import type { CliIO } from '../../../src/cli/io.js';
import { runCli } from '../../../src/cli/program.js';
import { forgeLine } from '../../support/audit-forge.js';
import { startCliDaemon, type CliDaemon } from '../../support/cli-daemon.js';
import { dropByRename, incidentJson, waitForState } from '../../support/incidents.js';
import { REPO_ROOT } from '../../support/runs.js';
import { scratchDir } from '../../support/scratch.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/agents/claude-like-agent.sh');

let daemon: CliDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

function cli(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, cwd };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

async function verify(configFile: string, ws: string, ...flags: string[]) {
  const t = cli(path.dirname(configFile));
  const code = await runCli(['--config', configFile, 'audit', 'verify', ws, ...flags], t.io);
  return { code, out: t.out(), err: t.err() };
}

const chainOf = async (ws: string) =>
  (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; mac?: string; runId?: string; incidentId?: string });

async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String);
}

/** An empty workspace `folder` under a fresh root, and a config file naming that root. */
async function workspaceUnderConfig(prefix: string, folder: string) {
  const dir = scratchDir(prefix);
  const root = path.join(dir, 'incidents');
  const ws = path.join(root, folder);
  await mkdir(ws, { recursive: true });
  const configFile = path.join(dir, 'triage-runner.yaml');
  await writeFile(configFile, stringify({ workspaces_root: root }));
  return { dir, root, ws, configFile };
}

describe('the audit chain, keyed by default', () => {
  it('the daemon keys every chain with a key made on its first start; a forged appended finished line fails verify, which finds the key as the daemon does', async () => {
    const dir = scratchDir('tr-audit-key-');
    const root = path.join(dir, 'incidents');
    daemon = await startCliDaemon({
      dir,
      config: {
        workspaces_root: root,
        agent: { command: AGENT, min_report_bytes: 10, report_sections: ['Summary'], stop_grace: '300ms' },
        scheduling: { shutdown_timeout: '300ms' },
      },
      args: ['--engine', 'process'],
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    });
    const ws = await dropByRename(root, 'inc-keyed', incidentJson({ incidentId: 'inc-keyed' }));
    const done = await waitForState(ws, ['succeeded', 'failed'], 30_000);
    expect(done.state, daemon.tail()).toBe('succeeded');
    await daemon.stop();
    expect(daemon.logs()).toMatch(/audit key made/);

    // The key lives with the daemon's state, owner-only; never in the workspace, and every line is keyed.
    const keyFile = path.join(root, '.triage', 'audit.key');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const key = (await readFile(keyFile, 'utf8')).trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect((await filesBelow(ws)).filter((f) => path.basename(f).includes('key'))).toEqual([]);
    const chain = await chainOf(ws);
    expect(chain.length).toBeGreaterThan(3);
    expect(chain.every((e) => typeof e.mac === 'string')).toBe(true);

    const configFile = path.join(dir, 'triage-runner.yaml');
    const intact = await verify(configFile, ws);
    expect(intact.code, intact.err).toBe(0);
    expect(intact.out).toMatch(
      new RegExp(
        `intact \\(${chain.length} entries, keyed hash chain verified with the key file ${keyFile}; 1 run bundle`,
      ),
    );

    // The attack: a `finished` line appended with recomputed hashes and audit.head.
    const finished = chain.findLast((e) => e.type === 'finished')!;
    const forged = {
      type: 'finished',
      incidentId: finished.incidentId,
      runId: finished.runId,
      status: 'succeeded',
      note: 'forged',
    };
    const line = await forgeLine(ws, forged);
    const caught = await verify(configFile, ws);
    expect(caught.code).toBe(1);
    expect(caught.err).toMatch(
      new RegExp(
        `audit\\.jsonl:${line}: carries no HMAC though the log is keyed from line 1 \\(a line appended or rewritten without the audit key\\)`,
      ),
    );
    // Someone without the key sees the forged line too, by its missing HMAC.
    const elsewhere = path.join(dir, 'other.yaml');
    await writeFile(elsewhere, stringify({ workspaces_root: path.join(dir, 'no-root') }));
    expect((await verify(elsewhere, ws)).code).toBe(1);
  });

  it('a guessed HMAC fails with the key; without the key, verify says the HMACs were not checked and exits 2; --key-file gives it the key', async () => {
    const { dir, root, ws, configFile } = await workspaceUnderConfig('tr-audit-nokey-', 'inc-1');
    // The key made where a daemon's first start (or a replay) makes it.
    const source = loadAuditKey({ workspaces_root: root, audit: {} }, {}, 'make');
    if (source.kind !== 'file') throw new Error('no key file made');
    const log = new AuditLog({ key: source.key });
    for (const type of ['detected', 'validated', 'claimed'] as const)
      await log.append(path.join(ws, '.triage'), { type, incidentId: 'inc-1' });
    await forgeLine(ws, { type: 'finished', incidentId: 'inc-1', status: 'succeeded' }, 'ab'.repeat(32));
    const guessed = await verify(configFile, ws);
    expect(guessed.code).toBe(1);
    expect(guessed.err).toMatch(/audit\.jsonl:4: HMAC does not match/);

    // Someone whose configuration does not lead to the key: the hashes hold, the HMACs cannot be checked.
    const elsewhere = path.join(dir, 'other.yaml');
    await writeFile(elsewhere, stringify({ workspaces_root: path.join(dir, 'no-root') }));
    const blind = await verify(elsewhere, ws);
    expect(blind.code).toBe(2);
    expect(blind.err).toMatch(
      /hash chain intact \(4 entries\), but its HMACs were NOT checked: the chain is keyed and no audit key is available here \(.*no-root\/\.triage\/audit\.key does not exist.*\)\. Without the key this check cannot detect an appended line/,
    );
    const given = await verify(elsewhere, ws, '--key-file', source.file);
    expect(given.code).toBe(1);
    expect(given.err).toMatch(/audit\.jsonl:4: HMAC does not match/);
  });

  it('an old unkeyed workspace still verifies, saying it is unkeyed (--require-key fails it); retried under the key it is keyed from its first new line', async () => {
    const { root, ws, configFile } = await workspaceUnderConfig('tr-audit-old-', 'old');
    const plain = new AuditLog();
    for (const type of ['detected', 'validated', 'finished'] as const)
      await plain.append(path.join(ws, '.triage'), { type, incidentId: 'old' });
    const old = await verify(configFile, ws);
    expect(old.code).toBe(0);
    expect(old.out).toMatch(/intact \(3 entries, UNKEYED hash chain verified;/);
    expect(old.err).toMatch(/an unkeyed chain cannot detect an appended line/);
    expect((await verify(configFile, ws, '--require-key')).code).toBe(1);

    const source = loadAuditKey({ workspaces_root: root, audit: {} }, {}, 'make');
    if (source.kind !== 'file') throw new Error('no key file made');
    await new AuditLog({ key: source.key }).append(path.join(ws, '.triage'), {
      type: 'retry_requested',
      incidentId: 'old',
    });
    const upgraded = await verify(configFile, ws);
    expect(upgraded.code, upgraded.err).toBe(0);
    expect(upgraded.out).toMatch(
      /keyed hash chain verified with the key file .*audit\.key, keyed from line 4 \(the lines before it were written before the chain was keyed\)/,
    );
    // Once keyed, a line without an HMAC after it is caught.
    await plain.append(path.join(ws, '.triage'), { type: 'finished', incidentId: 'old' });
    const downgraded = await verify(configFile, ws);
    expect(downgraded.code).toBe(1);
    expect(downgraded.err).toMatch(/audit\.jsonl:5: carries no HMAC though the log is keyed from line 4/);
  });
});

import { execa } from 'execa';
import { chmod, copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runTriage, type TriageInput } from '../../../src/context/triage.js';
import { renderProducts } from '../../../src/context/triage-products.js';
import { silentLogger } from '../../../src/log/logger.js';
import {
  FIXTURES,
  REPO_ROOT,
  fixtureSnapshot,
  incident,
  makeBundle,
  makeConfig,
  tempDir,
} from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(
  script: string,
  triage: Record<string, unknown> = {},
  context: Record<string, unknown> = {},
) {
  const t = await tempDir();
  cleanups.push(t.cleanup);
  const bundle = await makeBundle(t.dir);
  const config = makeConfig({
    kubeconfig: '/etc/kube/config',
    skills: { triage: { script, timeout: 5000, kill_grace: 300, ...triage } },
    context,
  });
  const input: TriageInput = {
    config,
    incident,
    skills: fixtureSnapshot(),
    bundle,
    log: silentLogger(),
    mode: { mode: 'run' },
    env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: 'sk-ant-secret-value-123456' },
  };
  return { input, bundle, dir: t.dir };
}

/** `ps` lines matching a grep pattern, polled until none are left or 3 s pass (the kernel reaps asynchronously). */
async function processesMatching(pattern: string): Promise<string> {
  const deadline = Date.now() + 3000;
  let found = '';
  while (Date.now() < deadline) {
    found = (await execa('sh', ['-c', `ps -eo pid,args | grep '${pattern}' || true`])).stdout.trim();
    if (found === '') return '';
    await new Promise((r) => setTimeout(r, 50));
  }
  return found;
}

describe('triage script runner', () => {
  it('runs the script with the incident environment and substituted args, strips ANSI, logs the full output', async () => {
    const { input, bundle } = await setup('ok.sh', {
      args: ['--skip-dump', '--output-dir', '{triage_dir}', '{namespace}', '{incident_id}'],
    });
    const out = await runTriage(input);
    expect(out.summary.status).toBe('ok');
    expect(out.summary.exitCode).toBe(0);
    expect(out.text).toContain('== Triage for shop ==');
    expect(out.text).toContain(`args: --skip-dump --output-dir ${bundle.path('triage')} shop inc-42`);
    expect(out.text).toContain(
      'NAMESPACE=shop INCIDENT_NAMESPACE=shop INCIDENT_ID=inc-42 CLUSTER=prod-eu KUBECONFIG=/etc/kube/config',
    );
    expect(out.text).toContain('secret-like variables: 0');
    expect(out.text).toContain('stderr line');
    expect(out.text).not.toContain('\u001b');
    const log = await readFile(bundle.path('triage/output.log'), 'utf8');
    expect(log).toContain('\u001b[31mpod/api-1 CrashLoopBackOff');
    expect(out.summary.logPath).toBe(bundle.path('triage/output.log'));
  });

  it('strips colours, OSC sequences and carriage returns from the prompt copy', async () => {
    const { input } = await setup('ansi.sh');
    const out = await runTriage(input);
    expect(out.text).toBe('ERROR pod crashed\nlink text\nprogress 100%\ntitle done\n');
  });

  it('waits for a slow script that finishes within the timeout', async () => {
    const { input } = await setup('slow.sh');
    const out = await runTriage(input);
    expect(out.summary.status).toBe('ok');
    expect(out.text).toBe('starting\ndone after 1 s\n');
  });

  it('terminates a hanging script at the timeout and reports timed_out with its partial output', async () => {
    const { input } = await setup('hanging.sh', { timeout: 500 });
    const out = await runTriage(input);
    expect(out.summary.status).toBe('timed_out');
    expect(out.summary.reason).toMatch(/timed out after 500 ms \(skills.triage.timeout\)/);
    expect(out.summary.signal).toBe('SIGTERM');
    expect(out.text).toBe('hanging\n');
  });

  it('SIGKILLs a script that ignores SIGTERM after the grace period', async () => {
    const { input } = await setup('ignore-term.sh', { timeout: 300, kill_grace: 300 });
    const out = await runTriage(input);
    expect(out.summary.status).toBe('timed_out');
    expect(out.summary.signal).toBe('SIGKILL');
  });

  it('does not hang on a grandchild that keeps stdout open after the script exits, and kills it', async () => {
    const { input } = await setup('forking.sh', { timeout: 20_000 });
    const out = await runTriage(input);
    // 'ok', not 'timed_out': the read ended with the script, not at the timeout the grandchild would reach.
    expect(out.summary.status).toBe('ok');
    expect(out.text).toBe('parent output\nparent exiting\n');
    expect(await processesMatching('[t]rap "" TERM; sleep 1000')).toBe('');
  });

  it('kills a setsid grandchild that left the process group (it carries the run marker)', async () => {
    const { input } = await setup('setsid.sh', { timeout: 20_000 });
    const out = await runTriage(input);
    expect(out.summary.status).toBe('ok');
    const deadline = Date.now() + 5000;
    while ((await processesMatching('[t]rap "" TERM; sleep 1001')) !== '' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await processesMatching('[t]rap "" TERM; sleep 1001')).toBe('');
  });

  it('kills the whole group, including a TERM-ignoring grandchild holding stdout, on timeout', async () => {
    const { input } = await setup('forking-hang.sh', { timeout: 400, kill_grace: 300 });
    const out = await runTriage(input);
    expect(out.summary.status).toBe('timed_out');
    expect(out.text).toBe('parent output\n');
    expect(await processesMatching('[t]rap "" TERM; while')).toBe('');
  });

  it('caps the prompt copy keeping head and tail, while the log gets the full stream up to its cap', async () => {
    const caps = { triage_prompt_cap: 64 * 1024, triage_log_cap: 1024 * 1024 };
    const { input, bundle } = await setup('flood.sh', { args: ['50000'] }, caps);
    const out = await runTriage(input);
    expect(out.summary.status).toBe('ok');
    expect(out.summary.bytes).toBeGreaterThan(3_000_000);
    expect(Buffer.byteLength(out.text)).toBeLessThan(64 * 1024 + 300);
    expect(
      out.text.startsWith('2026-11-22T02:00:00Z pod/api-1 level=error msg="connection refused" line=1\n'),
    ).toBe(true);
    expect(out.text.endsWith('line=50000\n')).toBe(true);
    expect(out.text).toMatch(/\[triage-runner: \d+ lines \(\d+ bytes\) of triage output omitted here/);
    const log = await readFile(bundle.path('triage/output.log'), 'utf8');
    expect(Buffer.byteLength(log)).toBeLessThan(1024 * 1024 + 200);
    expect(log).toContain('[triage-runner: output truncated at 1048576 bytes]');
  });

  it('reports a failing script with its exit code and keeps its output', async () => {
    const { input } = await setup('failing.sh');
    const out = await runTriage(input);
    expect(out.summary.status).toBe('failed');
    expect(out.summary.exitCode).toBe(3);
    expect(out.summary.reason).toMatch(/exited with code 3/);
    expect(out.text).toContain('Unauthorized');
  });

  it('reports a missing script with the path to fix', async () => {
    const { input } = await setup('skills/k8s-troubleshooter/scripts/incident_triage.sh');
    const out = await runTriage(input);
    expect(out.summary.status).toBe('missing');
    expect(out.summary.reason).toMatch(
      /triage script skills\/k8s-troubleshooter\/scripts\/incident_triage.sh not found in skills source k8s4agents/,
    );
    expect(out.text).toBe('');
  });

  it('reports a script that is not executable', async () => {
    const { input, dir } = await setup('noexec.sh');
    await copyFile(path.join(FIXTURES, 'ok.sh'), path.join(dir, 'noexec.sh'));
    await chmod(path.join(dir, 'noexec.sh'), 0o644);
    input.skills = {
      sources: [{ name: 'k8s4agents', scope: 'project', dir, commit: 'local:x' }],
      unavailable: [],
      release: () => undefined,
    };
    const out = await runTriage(input);
    expect(out.summary.status).toBe('not_executable');
    expect(out.summary.reason).toMatch(/is not executable; run chmod \+x/);
  });

  it('reports an unavailable skills source with its reason', async () => {
    const { input } = await setup('ok.sh');
    input.skills = {
      sources: [],
      unavailable: [{ name: 'k8s4agents', reason: 'git clone failed: could not resolve host' }],
      release: () => undefined,
    };
    const out = await runTriage(input);
    expect(out.summary).toEqual({
      status: 'missing',
      reason: 'skills source k8s4agents unavailable: git clone failed: could not resolve host',
    });
  });

  it('skips the script when preloading is disabled, and reuses a saved output on request', async () => {
    const { input, dir, bundle } = await setup('ok.sh');
    input.config = { ...input.config, skills: { ...input.config.skills, disable_triage_preload: true } };
    expect((await runTriage(input)).summary.status).toBe('disabled');
    const saved = path.join(dir, 'saved.log');
    await writeFile(saved, '\u001b[32msaved output\u001b[0m\n');
    const out = await runTriage({ ...input, mode: { mode: 'reuse', logPath: saved } });
    expect(out.summary.status).toBe('reused');
    expect(out.text).toBe('saved output\n');
    expect(await readFile(bundle.path('triage/output.log'), 'utf8')).toContain('saved output');
    const missing = await runTriage({
      ...input,
      mode: { mode: 'reuse', logPath: path.join(dir, 'nope.log') },
    });
    expect(missing.summary.status).toBe('missing');
    expect(missing.summary.reason).toMatch(/nope.log cannot be read/);
  });

  it('stops the script when the run is aborted', async () => {
    const { input } = await setup('hanging.sh', { timeout: 20_000 });
    const controller = new AbortController();
    const pending = runTriage({ ...input, signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const out = await pending;
    expect(out.summary.status).toBe('failed');
    expect(out.summary.reason).toMatch(/interrupted/);
    expect(out.text).toBe('hanging\n');
  });

  it('reports a script whose interpreter does not exist as failed to start, with the fix', async () => {
    const { input, dir } = await setup('bad-shebang.sh');
    await writeFile(path.join(dir, 'bad-shebang.sh'), '#!/nonexistent/bash\necho never\n');
    await chmod(path.join(dir, 'bad-shebang.sh'), 0o755);
    input.skills = {
      sources: [{ name: 'k8s4agents', scope: 'project', dir, commit: 'local:x' }],
      unavailable: [],
      release: () => undefined,
    };
    const out = await runTriage(input);
    expect(out.summary.status).toBe('failed');
    expect(out.summary.reason).toMatch(
      /could not be started: .*ENOENT.*check that the interpreter on its #! line is installed/,
    );
  });
});

describe('triage products (a script with the k8s4agents contract)', () => {
  const SKILL_SOURCE = path.join(REPO_ROOT, 'test/fixtures/skill-source');
  const AGENT_RUN = '/workspace/.triage/runs/run-7';

  /** Runs the fixture source's triage script with the default args; `mapped`: as a container run sees it. */
  async function run(mapped: boolean) {
    const t = await tempDir();
    cleanups.push(t.cleanup);
    const bundle = await makeBundle(t.dir, 'run-7');
    const config = makeConfig({
      skills: { triage: { script: 'skills/k8s-troubleshooter/scripts/incident_triage.sh', timeout: 5000 } },
    });
    const out = await runTriage({
      config,
      incident,
      skills: fixtureSnapshot(SKILL_SOURCE),
      bundle,
      log: silentLogger(),
      mode: { mode: 'run' },
      env: { PATH: process.env.PATH },
      ...(mapped
        ? {
            agentLogPath: `${AGENT_RUN}/triage/output.log`,
            agentTriageDir: `${AGENT_RUN}/triage`,
            hostPaths: [
              { host: t.dir, agent: '/workspace' },
              { host: bundle.dir, agent: AGENT_RUN },
            ],
          }
        : {}),
    });
    return { out, bundle, host: bundle.path('triage') };
  }

  it('scopes the script to the incident namespace by default (--namespace {namespace})', async () => {
    const { out } = await run(false);
    expect(out.text).toContain('Scope: Namespace shop');
  });

  it("names only the agent's paths in the prompt copy, the log and the top-level products; evidence is left as written", async () => {
    const { out, bundle, host } = await run(true);
    expect(out.summary.status).toBe('ok');
    const log = await readFile(bundle.path('triage/output.log'), 'utf8');
    const report = await readFile(path.join(host, 'triage-report.md'), 'utf8');
    const summary = await readFile(path.join(host, 'triage-summary.txt'), 'utf8');
    for (const text of [out.text, log, report, summary]) {
      expect(text).not.toContain(bundle.dir);
      expect(text).toContain(`${AGENT_RUN}/triage`);
    }
    expect(out.text).toContain(`Full report: ${AGENT_RUN}/triage/triage-report.md`);
    expect(report).toContain(`All evidence has been captured in: \`${AGENT_RUN}/triage/evidence/\``);
    expect(await readFile(path.join(host, 'evidence', 'pods.txt'), 'utf8')).toContain('CrashLoopBackOff');
  });

  it("joins the script's triage-report.md to the prompt copy after its stdout, and lists every product", async () => {
    const { out } = await run(true);
    const stdoutEnd = out.text.indexOf('Evidence: ');
    const reportAt = out.text.indexOf(
      `----- ${AGENT_RUN}/triage/triage-report.md -----\n# Kubernetes Incident Triage Report`,
    );
    expect(stdoutEnd).toBeGreaterThan(0);
    expect(reportAt).toBeGreaterThan(stdoutEnd);
    expect(out.summary).toMatchObject({ status: 'ok', products: 7, reportPreloaded: true });
    expect(out.products?.map((p) => p.rel)).toEqual([
      'blast-radius.txt',
      'evidence/nodes.txt',
      'evidence/pods.json',
      'evidence/pods.txt',
      'evidence/warning-events.txt',
      'triage-report.md',
      'triage-summary.txt',
    ]);
    expect(renderProducts(out.products ?? [], `${AGENT_RUN}/triage`)).toContain(
      `- ${AGENT_RUN}/triage/evidence/pods.json (`,
    );
  });

  it('keeps stdout as the triage text when the script writes no report', async () => {
    const { input } = await setup('ok.sh');
    const out = await runTriage(input);
    expect(out.text).not.toContain('triage-report.md -----');
    expect(out.summary).toMatchObject({ status: 'ok', products: 0, reportPreloaded: false });
    expect(out.text).toContain('args:');
  });
});

describe('reusing a saved triage with its products (an example)', () => {
  const EXAMPLE = path.join(REPO_ROOT, 'examples/incidents/crashloop-payments-api/saved-triage');
  const AGENT_RUN = '/workspace/.triage/runs/run-8';

  it('brings the saved products into the run and names them by where this run keeps them', async () => {
    const { input, bundle } = await setup('ok.sh');
    const out = await runTriage({
      ...input,
      mode: { mode: 'reuse', logPath: path.join(EXAMPLE, 'output.log') },
      agentLogPath: `${AGENT_RUN}/triage/output.log`,
      agentTriageDir: `${AGENT_RUN}/triage`,
      hostPaths: [{ host: bundle.dir, agent: AGENT_RUN }],
    });
    expect(out.summary).toMatchObject({ status: 'reused', reportPreloaded: true });
    // The saved text named the folder the script was given in the original run.
    const original = '/srv/triage/incidents/crashloop-payments-api/.triage/runs/20260314T020458Z-5c1e/triage';
    expect(await readFile(path.join(EXAMPLE, 'output.log'), 'utf8')).toContain(original);
    for (const text of [out.text, await readFile(bundle.path('triage/output.log'), 'utf8')]) {
      expect(text).not.toContain(original);
      expect(text).toContain(`Full report: ${AGENT_RUN}/triage/triage-report.md`);
    }
    expect(out.products?.map((p) => p.rel)).toContain('evidence/pods.json');
    expect(await readFile(bundle.path('triage/evidence/pods.txt'), 'utf8')).toBe(
      await readFile(path.join(EXAMPLE, 'evidence/pods.txt'), 'utf8'),
    );
    expect(await readFile(bundle.path('triage/triage-report.md'), 'utf8')).toContain(
      `\`${AGENT_RUN}/triage/evidence/\``,
    );
  });
});

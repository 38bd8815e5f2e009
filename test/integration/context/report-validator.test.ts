// The triage skill's own report validator (skill-hooks.json Stop hook), found in a real skills source
// and run as a real process; and our report check agreeing with it on a report written to the
// default template (agent.report_sections).
import { chmod, cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { missingSections } from '../../../src/audit/report.js';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';
import {
  findReportValidator,
  runReportValidator,
  type ReportValidator,
} from '../../../src/context/report-validator.js';
import { templateReport } from '../../support/reports.js';
import { REPO_ROOT, fixtureSnapshot, makeConfig, tempDir } from './helpers.js';

const SKILL_SOURCE = path.join(REPO_ROOT, 'test/fixtures/skill-source');
const SKILL = 'skills/k8s-troubleshooter';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function workspace(report: string | undefined) {
  const t = await tempDir('tr-validator-');
  cleanups.push(t.cleanup);
  const file = path.join(t.dir, 'output', 'investigation.md');
  await mkdir(path.dirname(file), { recursive: true });
  if (report !== undefined) await writeFile(file, report);
  return { dir: t.dir, file };
}

async function validator(): Promise<ReportValidator> {
  const config = makeConfig({ skills: { triage: { script: `${SKILL}/scripts/incident_triage.sh` } } });
  const found = await findReportValidator(config, fixtureSnapshot(SKILL_SOURCE));
  if (found.kind !== 'found') throw new Error(`validator not found: ${found.reason}`);
  return found.validator;
}

const run = async (v: ReportValidator, ws: { dir: string; file: string }) =>
  runReportValidator(v, {
    workspaceDir: ws.dir,
    reportHostPath: ws.file,
    env: { PATH: process.env.PATH },
    redact: (t) => t,
    killGraceMs: 200,
    marker: `validator-test-${process.pid}`,
  });

describe('report validator', () => {
  it("finds the triage skill's Stop hook command inside the skill, with the hook's timeout under the cap", async () => {
    const v = await validator();
    expect(v).toMatchObject({
      skill: `k8s4agents/${SKILL}`,
      command: './scripts/validate-report.sh',
      args: [],
      // The hook declares 10 (Claude Code hooks count seconds); skills.triage.validator_timeout is 30 s.
      timeoutMs: 10_000,
    });
    expect(v.program).toMatch(/skill-source\/skills\/k8s-troubleshooter\/scripts\/validate-report\.sh$/);
  });

  it('agrees with our check on a report written to the default template: both pass', async () => {
    const ws = await workspace(templateReport());
    expect(missingSections(templateReport(), DEFAULT_REPORT_SECTIONS)).toEqual([]);
    const record = await run(await validator(), ws);
    expect(record).toMatchObject({ verdict: 'compliant', exitCode: 0 });
    // It was given the report relative to the workspace, the path its default assumes.
    expect(record.outputTail).toContain('checking output/investigation.md');
    expect(record.outputTail).toContain('PASSED');
  });

  it('agrees with our check on a report in another template: both name the missing headings', async () => {
    const other = '# Report\n\n## 0. Executive Summary\n\n## 1. Incident Overview\n\n[FACT-1] x [INF-1] y\n';
    const ws = await workspace(other);
    expect(missingSections(other, DEFAULT_REPORT_SECTIONS)).toEqual([...DEFAULT_REPORT_SECTIONS]);
    const record = await run(await validator(), ws);
    expect(record).toMatchObject({ verdict: 'non_compliant', exitCode: 1 });
    expect(record.outputTail).toContain('ERROR: missing heading: ## 0. Executive Triage Card');
  });

  it('reports warnings (exit 2) for a report with every heading but no labels', async () => {
    const ws = await workspace(templateReport().replace(/\[(FACT|INF)-1\]/g, ''));
    expect(await run(await validator(), ws)).toMatchObject({ verdict: 'warnings', exitCode: 2 });
  });

  it('stops a validator that outlives its timeout and says so', async () => {
    const t = await tempDir('tr-validator-src-');
    cleanups.push(t.cleanup);
    await cp(SKILL_SOURCE, t.dir, { recursive: true });
    const script = path.join(t.dir, SKILL, 'scripts', 'validate-report.sh');
    await writeFile(script, '#!/bin/sh\necho started\nexec sleep 30\n');
    await chmod(script, 0o755);
    const config = makeConfig({
      skills: { triage: { script: `${SKILL}/scripts/incident_triage.sh`, validator_timeout: 300 } },
    });
    const found = await findReportValidator(config, fixtureSnapshot(t.dir));
    if (found.kind !== 'found') throw new Error(found.reason);
    expect(found.validator.timeoutMs).toBe(300);
    const record = await run(found.validator, await workspace(templateReport()));
    expect(record).toMatchObject({
      verdict: 'failed',
      timedOut: true,
      reason: 'timed out after 300 ms and was stopped',
    });
  });

  it.each([
    ['a command that needs a shell', './scripts/validate-report.sh; rm -rf /', /needs a shell/],
    ['a program outside the skill', '../../../../../bin/true', /is not a file inside/],
    ['an absolute program', '/bin/true', /is not a file inside/],
    ['a program that does not exist', './scripts/nope.sh', /is not a file inside/],
  ])('refuses to run %s, with the reason', async (_, command, reason) => {
    const t = await tempDir('tr-validator-src-');
    cleanups.push(t.cleanup);
    await cp(SKILL_SOURCE, t.dir, { recursive: true });
    await writeFile(
      path.join(t.dir, SKILL, 'skill-hooks.json'),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command }] }] } }),
    );
    const config = makeConfig({ skills: { triage: { script: `${SKILL}/scripts/incident_triage.sh` } } });
    const found = await findReportValidator(config, fixtureSnapshot(t.dir));
    expect(found.kind).toBe('unusable');
    if (found.kind === 'unusable') expect(found.reason).toMatch(reason);
  });

  it('finds nothing to run when disabled, without a hooks file, or with malformed JSON reported as unusable', async () => {
    const disabled = makeConfig({
      skills: { triage: { script: `${SKILL}/scripts/incident_triage.sh`, validate_report: false } },
    });
    expect((await findReportValidator(disabled, fixtureSnapshot(SKILL_SOURCE))).kind).toBe('none');
    const t = await tempDir('tr-validator-src-');
    cleanups.push(t.cleanup);
    await cp(SKILL_SOURCE, t.dir, { recursive: true });
    const config = makeConfig({ skills: { triage: { script: `${SKILL}/scripts/incident_triage.sh` } } });
    await writeFile(path.join(t.dir, SKILL, 'skill-hooks.json'), '{"hooks": ');
    expect(await findReportValidator(config, fixtureSnapshot(t.dir))).toMatchObject({
      kind: 'unusable',
      reason: expect.stringMatching(/is not valid JSON/),
    });
    await writeFile(path.join(t.dir, SKILL, 'skill-hooks.json'), '{"hooks": {}}');
    expect(await findReportValidator(config, fixtureSnapshot(t.dir))).toMatchObject({ kind: 'none' });
  });
});

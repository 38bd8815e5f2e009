import { describe, expect, it } from 'vitest';
import { missingSections } from '../../../src/audit/report.js';
import { verdict } from '../../../src/run/result.js';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';

describe('report check', () => {
  it('matches headings of any level case-insensitively, tolerating emoji, bold and trailing text', () => {
    const md = [
      '# 0. Executive triage card',
      '## 🧭 1. Problem Statement (prod)',
      '### **2. Assessment & Findings**',
      '#### 3. root cause analysis ####',
      'Remediation Plan is discussed below, but not as a heading.',
      '## 5. Proof of Work',
      '###### 6. Supporting Evidence — logs and kubectl output',
    ].join('\n');
    expect(missingSections(md, DEFAULT_REPORT_SECTIONS)).toEqual(['4. Remediation Plan']);
  });

  it('does not count text outside headings or headings with a different start', () => {
    expect(missingSections('Summary\n# Not the Summary\n', ['Summary'])).toEqual(['Summary']);
    expect(missingSections('####### Summary\n', ['Summary'])).toEqual(['Summary']);
    expect(missingSections('## Summary\n', ['Summary'])).toEqual([]);
  });
});

describe('verdict', () => {
  const report = {
    path: '/workspace/output/investigation.md',
    bytes: 500,
    exists: true,
    tooSmall: false,
    present: true,
    missingSections: [],
  };
  const ok = { status: 'succeeded' as const, exitCode: 0, tokens: { input: 1, output: 1 } };

  it('puts interruption and timeout before what the adapter read', () => {
    expect(verdict({ timedOut: true, interrupted: false, outcome: ok, report, minBytes: 10 }).status).toBe(
      'timed_out',
    );
    expect(verdict({ timedOut: false, interrupted: true, outcome: ok, report, minBytes: 10 }).status).toBe(
      'interrupted',
    );
  });

  it('names an engine problem seen while stopping in the timeout and interruption reasons', () => {
    const engineError =
      'run c1 did not end within 15000 ms of SIGKILL; the engine did not answer: ECONNREFUSED';
    const base = { outcome: ok, report, minBytes: 10, engineError };
    expect(verdict({ ...base, timedOut: true, interrupted: false }).reason).toBe(
      `the agent run exceeded agent.timeout and was stopped; engine: ${engineError}`,
    );
    expect(verdict({ ...base, timedOut: false, interrupted: true }).reason).toBe(
      `the daemon stopped the agent while shutting down; engine: ${engineError}`,
    );
    expect(verdict({ timedOut: true, interrupted: false, outcome: ok, report, minBytes: 10 }).reason).toBe(
      'the agent run exceeded agent.timeout and was stopped',
    );
  });

  it('fails on an adapter failure with its message, and on a too-small report with both sizes', () => {
    expect(
      verdict({
        timedOut: false,
        interrupted: false,
        outcome: { ...ok, status: 'auth_failed', error: 'bad key' },
        report,
        minBytes: 10,
      }),
    ).toEqual({
      status: 'failed',
      reason: 'bad key',
    });
    expect(
      verdict({
        timedOut: false,
        interrupted: false,
        outcome: ok,
        report: { ...report, bytes: 5, present: false, tooSmall: true },
        minBytes: 10,
      }).reason,
    ).toBe(
      'the report at /workspace/output/investigation.md has 5 bytes, fewer than agent.min_report_bytes (10)',
    );
  });

  it('names why a report was refused (a symlink the agent planted is never read)', () => {
    expect(
      verdict({
        timedOut: false,
        interrupted: false,
        outcome: ok,
        report: {
          ...report,
          bytes: 0,
          exists: false,
          present: false,
          refused: 'x is a symbolic link, which is never followed',
        },
        minBytes: 10,
      }).reason,
    ).toBe('the report was not read: x is a symbolic link, which is never followed');
  });
});

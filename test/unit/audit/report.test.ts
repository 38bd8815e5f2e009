import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';
import {
  checkReport,
  markdownHeadings,
  missingSections,
  normalizeHeading,
} from '../../../src/audit/report.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'report-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fullReport = [
  '# Kubernetes Incident Triage Report',
  '## 0. Executive Triage Card',
  'The pod crashes because the DB password secret is missing.',
  '## 1) Problem statement',
  '## 🔎 2. Assessment and Findings',
  '### Section 3: Root Cause Analysis',
  '## **4. Remediation Plan**',
  '## 5 - Proof of Work (commands)',
  '## 6. Supporting Evidence ##',
].join('\n');

describe('checkReport', () => {
  it('finds every default section despite numbering, emoji, emphasis, "&" and suffixes', async () => {
    const file = path.join(dir, 'investigation.md');
    await writeFile(file, fullReport);
    const result = await checkReport(file, DEFAULT_REPORT_SECTIONS, 10);
    expect(result).toEqual({
      path: file,
      bytes: Buffer.byteLength(fullReport),
      exists: true,
      tooSmall: false,
      present: true,
      missingSections: [],
      text: fullReport,
    });
  });

  it('lists the sections whose headings are absent, in the configured order', async () => {
    const file = path.join(dir, 'investigation.md');
    await writeFile(file, '## 0. Executive Triage Card\n## 3. ROOT CAUSE ANALYSIS\nbody\n');
    const result = await checkReport(file, DEFAULT_REPORT_SECTIONS, 0);
    expect(result.missingSections).toEqual([
      '1. Problem Statement',
      '2. Assessment & Findings',
      '4. Remediation Plan',
      '5. Proof of Work',
      '6. Supporting Evidence',
    ]);
  });

  it('reports a missing file as absent, too small and missing every section', async () => {
    const file = path.join(dir, 'output', 'investigation.md');
    const result = await checkReport(file, ['A', 'B'], 200);
    expect(result).toEqual({
      path: file,
      bytes: 0,
      exists: false,
      tooSmall: true,
      present: false,
      missingSections: ['A', 'B'],
    });
  });

  it('never reads a report the agent replaced with a symlink (to a host file) or a FIFO', async () => {
    await mkdir(path.join(dir, 'output'), { recursive: true });
    const file = path.join(dir, 'output', 'investigation.md');
    await symlink('/etc/hostname', file);
    const result = await checkReport(file, ['A'], 10);
    expect(result).toMatchObject({ exists: false, present: false, bytes: 0 });
    expect(result.refused).toMatch(/symbolic link, which is never followed/);
  });

  it('flags a report smaller than the minimum size', async () => {
    const file = path.join(dir, 'investigation.md');
    await writeFile(file, '# Root Cause\n');
    const result = await checkReport(file, ['Root Cause'], 200);
    expect(result.tooSmall).toBe(true);
    expect(result.bytes).toBe(13);
    expect(result.missingSections).toEqual([]);
  });
});

describe('markdown heading matching', () => {
  it('ignores headings inside fenced code blocks and text that only mentions a section', () => {
    const md = [
      'Root Cause is unknown.',
      '```',
      '## Root Cause',
      '```',
      '~~~~',
      '# Remediation',
      '~~~~',
    ].join('\n');
    expect(markdownHeadings(md)).toEqual([]);
    expect(missingSections(md, ['Root Cause', 'Remediation'])).toEqual(['Root Cause', 'Remediation']);
  });

  it('does not match a heading that merely starts with the same letters', () => {
    expect(
      missingSections('## Remediations we rejected\n## Root Causes\n', ['Remediation', 'Root Cause']),
    ).toEqual(['Remediation', 'Root Cause']);
  });

  it('normalizes numbering, emoji and punctuation away', () => {
    expect(normalizeHeading('🚨 0. Executive   Summary:')).toBe('executive summary');
    expect(normalizeHeading('Step 2 - Evidence (Facts)')).toBe('evidence facts');
    expect(normalizeHeading('3) Analysis & Hypotheses')).toBe('analysis and hypotheses');
  });
});

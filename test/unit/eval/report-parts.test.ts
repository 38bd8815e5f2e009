import { describe, expect, it } from 'vitest';
import { missingSections } from '../../../src/audit/report.js';
import { blocks, sectionText } from '../../../src/eval/score/report-parts.js';

// The scorer reads sections and blocks from the same syntax tree as the report check: a heading the
// check counts is a heading the scorer finds, and a `#` line inside code is neither.

const REPORT = [
  '# 1. Root Cause',
  '',
  'The **orders-api-config** ConfigMap lost its `DB_HOST` key.',
  '',
  '```',
  '## Remediation',
  'kubectl rollout restart deploy/orders-api',
  '```',
  '',
  '### Detail',
  'Pods crash on start.',
  '',
  'Remediation',
  '===========',
  '',
  '- Restore the key.',
  '  Then watch the rollout.',
  '- Ask the on-call DBA:',
  '  - rotate the password',
].join('\n');

describe('the scorer reads the report from the shared parser', () => {
  it('a section runs to the next heading of its level, and a # line in code is not a heading', () => {
    const section = sectionText(REPORT, 'Root Cause');
    expect(section).toContain('orders-api-config');
    expect(section).toContain('kubectl rollout restart');
    expect(section).toContain('Pods crash on start.');
    expect(section).not.toContain('Restore the key');
  });

  it('finds a setext heading exactly when the report check does', () => {
    expect(missingSections(REPORT, ['Remediation'])).toEqual([]);
    expect(sectionText(REPORT, 'Remediation')).toContain('Restore the key.');
  });

  it('answers undefined for a section the report lacks', () => {
    expect(missingSections(REPORT, ['Timeline'])).toEqual(['Timeline']);
    expect(sectionText(REPORT, 'Timeline')).toBeUndefined();
  });

  it('splits paragraphs and list items into blocks, keeping an item with its continuation lines', () => {
    const got = blocks(REPORT);
    expect(got).toContain('Restore the key.\nThen watch the rollout.');
    expect(got).toContain('Ask the on-call DBA:');
    expect(got).toContain('rotate the password');
    expect(got).toContain('Pods crash on start.');
  });

  it('finds no section in text nested past what the parser takes', () => {
    expect(sectionText(`# Root Cause\n${'> '.repeat(100)}x`, 'Root Cause')).toBeUndefined();
  });
});

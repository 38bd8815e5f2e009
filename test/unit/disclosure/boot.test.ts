import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveBoot } from '../../../src/context/disclosure/boot-resolve.js';
import {
  BootError,
  loadBootFile,
  parseBootText,
  type BootItem,
} from '../../../src/context/disclosure/boot.js';

const brief = (id: string): BootItem => ({ id, kind: 'brief', candidates: [id] });
const skill = (bootPath: string): BootItem => ({
  id: `skill:${bootPath}`,
  kind: 'skill',
  candidates: [bootPath, `${bootPath}/SKILL.md`],
});

describe('parseBootText', () => {
  it('reports a YAML syntax error with file, line and column', () => {
    expect(() => parseBootText('briefs:\n  say: [a\nskills: {}\n', '/cfg/boot.yml')).toThrow(
      /^\/cfg\/boot\.yml:3:1: boot file is not valid YAML/,
    );
  });

  it('rejects unknown keys, naming what is expected', () => {
    expect(() => parseBootText('brief:\n  say: []\n', 'b.yml')).toThrow(
      'unknown key "brief" (expected briefs and skills, or always and subject.<slug>)',
    );
    expect(() => parseBootText('subject.x:\n  briefs:\n    sya: []\n', 'b.yml')).toThrow(
      'subject.x.briefs.sya: unknown key (expected say or ref)',
    );
  });

  it('rejects ref lists in simple mode and explains why', () => {
    expect(() => parseBootText('briefs:\n  ref: [a]\n', 'b.yml')).toThrow(/ref lists are for subject mode/);
  });

  it('rejects a glob list that is not a list of strings', () => {
    expect(() => parseBootText('briefs:\n  say: runbooks/*.md\n', 'b.yml')).toThrow(
      'briefs.say: expected a list of glob strings',
    );
  });

  it('lists every problem at once', () => {
    const err = (() => {
      try {
        parseBootText('bogus: 1\nbriefs:\n  say: 3\n', 'b.yml');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(BootError);
    expect(err?.message).toContain('2 problem(s)');
  });

  it('checks mixed mode before anything else', () => {
    expect(() => parseBootText('bogus: 1\nbriefs: {}\nalways: {}\n', 'b.yml')).toThrow(
      /mixed mode not allowed/,
    );
  });

  it('treats `say:` with no value as absent (say all) and `say: []` as say none', () => {
    const items = [brief('a.md'), brief('b.md')];
    const absent = resolveBoot(parseBootText('briefs:\n  say:\n', 'b.yml'), items);
    expect(absent.placements.map((p) => p.how)).toEqual(['say', 'say']);
    const none = resolveBoot(parseBootText('briefs:\n  say: []\n', 'b.yml'), items);
    expect(none.placements.map((p) => p.how)).toEqual(['ref', 'ref']);
  });
});

describe('loadBootFile', () => {
  it('returns mode none for an absent file and the parsed spec for a present one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'boot-unit-'));
    try {
      expect(await loadBootFile(path.join(dir, 'missing.yml'))).toEqual({
        mode: 'none',
        file: path.join(dir, 'missing.yml'),
      });
      writeFileSync(path.join(dir, 'boot.yml'), 'always: {}\nsubject.a: {}\n');
      const spec = await loadBootFile(path.join(dir, 'boot.yml'));
      expect(spec.mode).toBe('subject');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('resolveBoot', () => {
  const spec = parseBootText(
    [
      'always:',
      '  briefs: { say: [core.md], ref: [ref-*.md] }',
      'subject.a:',
      '  briefs: { say: [a.md, shared.md, core.md], ref: [ref-a.md] }',
      '  skills: { say: [src/skills/x] }',
      'subject.b:',
      '  briefs: { say: [shared.md], ref: [a.md] }',
      '  skills: { ref: [src/skills/*] }',
    ].join('\n'),
    'b.yml',
  );
  const items = [
    ...['a.md', 'core.md', 'loose.md', 'ref-a.md', 'shared.md'].map(brief),
    skill('src/skills/x'),
    skill('src/skills/y'),
    skill('src/other/z'),
  ];

  it('places said, referenced and mentioned items section by section', () => {
    const plan = resolveBoot(spec, items);
    expect(
      plan.placements.map((p) => `${p.section}:${p.how}:${p.id}${p.earlier ? `<${p.earlier}` : ''}`),
    ).toEqual([
      'always:say:core.md',
      'always:ref:ref-a.md',
      'subject.a:say:a.md',
      'subject.a:mentioned:core.md<always',
      'subject.a:say:shared.md',
      'subject.b:mentioned:a.md<subject.a',
      'subject.b:mentioned:shared.md<subject.a',
      'also:ref:loose.md',
      'subject.a:say:skill:src/skills/x',
      'subject.b:mentioned:skill:src/skills/x<subject.a',
      'subject.b:ref:skill:src/skills/y',
      'also:ref:skill:src/other/z',
    ]);
    expect(plan).toMatchObject({ mode: 'subject', subjects: ['a', 'b'], allSubjects: true });
  });

  it('does not ref an item twice', () => {
    const plan = resolveBoot(spec, items, { subjects: ['b', 'a'] });
    expect(plan.placements.filter((p) => p.id === 'ref-a.md')).toHaveLength(1);
    expect(plan.subjects).toEqual(['b', 'a']);
  });

  it('de-duplicates requested subjects, keeping the first position', () => {
    expect(resolveBoot(spec, items, { subjects: ['b', 'a', 'b'] }).subjects).toEqual(['b', 'a']);
  });

  it('explains how to fix an unknown subject', () => {
    expect(() => resolveBoot(spec, items, { subjects: ['c'] })).toThrow(
      'subject not found: c (known: a, b) in b.yml; pick a known subject or add a subject.c: section',
    );
  });
});

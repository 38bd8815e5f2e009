import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBootFile } from '../../../src/context/disclosure/boot.js';
import { buildDisclosure, type Disclosure } from '../../../src/context/disclosure/index.js';
import type { SkillsSnapshot } from '../../../src/context/types.js';
import {
  captureLogger,
  gitCheckout,
  incident,
  makeConfig,
  SHIPPED_PERSONAS,
  skillMd,
  snapshot,
  tempDir,
  VIEW,
  writeTree,
} from './fixtures.js';

// One test per row of boot.yml's behaviour tables (simple-mode defaults, subject-mode defaults, edge cases,
// mode detection), run through buildDisclosure over real brief files, a real boot.yml and skills
// from a real git checkout.

const BRIEFS = {
  'practices/code.test/unit.md': '# Unit tests\nTest one behaviour per test.\n',
  'practices/code.test/deep/integration.md': '# Integration tests\nUse real parts.\n',
  'practices/errors/fail-fast.md': '# Fail fast\nReject bad input at the edge.\n',
  'practices/lang.terms/gerunds.md': '# Forbid gerunds\nPrefer plain verbs.\n',
  'practices/lang.terms/plain.md': '# Plain words\nShort words win.\n',
  'practices/lang.tones/calm.md': '# Calm tone\nNo drama.\n',
  'runbooks/crashloop.md': '# CrashLoop runbook\nRead previous logs.\n',
  'runbooks/oom.md': '# OOM runbook\nCompare limits and usage.\n',
  'reference/kubectl.md': '# kubectl\nRead-only verbs.\n',
};
const ALL_BRIEFS = Object.keys(BRIEFS).sort();
const TROUBLESHOOTER = 'k8s4agents/skills/k8s-troubleshooter';

const SUBJECT_BOOT = `
always:
  briefs:
    say: [practices/lang.terms/gerunds.md]
    ref: [practices/lang.terms/**/*.md]
  skills:
    say: [${TROUBLESHOOTER}]
subject.test:
  briefs:
    say: [practices/code.test/**/*.md, practices/errors/**/*.md]
    ref: [runbooks/oom.md]
subject.terms:
  briefs:
    say: [practices/lang.terms/**/*.md]
    ref: [practices/lang.tones/**/*.md]
  skills:
    ref: ['*/skills/log-*']
subject.refactor:
  briefs:
    say: [practices/errors/**/*.md]
`;

const tmp = tempDir('boot');
let skills: SkillsSnapshot;
let briefsDir: string;
let bootCount = 0;

beforeAll(() => {
  briefsDir = path.join(tmp.dir, 'briefs');
  writeTree(briefsDir, BRIEFS);
  const repo = gitCheckout(tmp.dir, 'k8s4agents', {
    files: {
      'skills/k8s-troubleshooter/SKILL.md': skillMd(
        'k8s-troubleshooter',
        'Kubernetes troubleshooting and triage',
      ),
      'skills/log-search/SKILL.md': skillMd('log-search', 'Search container logs for error signatures'),
      'git.commit/commit-helper/SKILL.md': skillMd('commit-helper', 'Write commit messages'),
    },
  });
  skills = snapshot([{ name: 'k8s4agents', scope: 'project', dir: repo.dir, commit: repo.commit }]);
}, 60_000);

afterAll(() => tmp.cleanup());

interface Booted {
  d: Disclosure;
  text: string;
  parts: Record<string, string>;
  said: string[];
  refs: string[];
  also: string[];
  mentioned: Record<string, string>;
  saidSkills: string[];
  indexedSkills: string[];
  warnings: string[];
}

/** Builds the disclosure for a boot.yml text (null = no file) and parses what was said and referenced. */
async function boot(
  yaml: string | null,
  opts: {
    subjects?: string[];
    rules?: { match: Record<string, string | string[]>; subjects: string[] }[];
  } = {},
): Promise<Booted> {
  const bootFile = path.join(tmp.dir, `boot-${++bootCount}.yml`);
  if (yaml !== null) writeFileSync(bootFile, yaml);
  const cap = captureLogger();
  const config = makeConfig({
    personas_dir: SHIPPED_PERSONAS,
    briefs_dir: briefsDir,
    boot_file: bootFile,
    subjects: opts.rules ?? [],
  });
  const d = await buildDisclosure({
    config,
    incident: incident(),
    ...(opts.subjects ? { subjects: opts.subjects } : {}),
    skills,
    view: VIEW,
    log: cap.log,
  });
  const r = d.render(new Set());
  const parts = Object.fromEntries(r.parts.map((p) => [p.part, p.text]));
  const briefRe = /<brief path="\/opt\/triage\/briefs\/([^"]+)">/g;
  const refsText = parts.refs ?? '';
  const alsoText = /<also>([\s\S]*?)<\/also>/.exec(refsText)?.[1] ?? '';
  const outsideAlso = refsText.replace(/<also>[\s\S]*?<\/also>/, '');
  const mentioned: Record<string, string> = {};
  const refs: string[] = [];
  for (const { id, note } of refEntries(outsideAlso)) {
    const earlier = /\(as mentioned earlier in ([^)]+)\)/.exec(note)?.[1];
    if (earlier) mentioned[id] = earlier;
    else refs.push(id);
  }
  return {
    d,
    text: r.text,
    parts,
    said: [...(parts.briefs ?? '').matchAll(briefRe)].map((m) => m[1] as string),
    refs,
    also: refEntries(alsoText).map((e) => e.id),
    mentioned,
    saidSkills: [...(parts.skills ?? '').matchAll(/<skill name="([^"]+)"/g)].map((m) => m[1] as string),
    indexedSkills: [...(parts.skills ?? '').matchAll(/^- ([a-z0-9-]+): /gm)].map((m) => m[1] as string),
    warnings: cap
      .lines()
      .filter((l) => l.level === 'warn')
      .map((l) => String(l.msg)),
  };
}

/**
 * The briefs a refs part lists, as ids relative to the briefs folder: `- folder/: a.md, b.md` lines
 * (a folder said once), `- file.md` lines, and `- id (note)` lines for a brief with a note.
 */
function refEntries(text: string): { id: string; note: string }[] {
  const out: { id: string; note: string }[] = [];
  for (const line of text.split('\n')) {
    const grouped = /^- ([^ ]+\/): (.+)$/.exec(line);
    if (grouped) {
      for (const name of (grouped[2] ?? '').split(', '))
        out.push({ id: `${grouped[1] ?? ''}${name}`, note: '' });
      continue;
    }
    const single = /^- ([^ ]+\.md)(.*)$/.exec(line);
    if (single) out.push({ id: single[1] ?? '', note: single[2] ?? '' });
  }
  return out;
}

const ALL_SKILLS = ['commit-helper', 'k8s-troubleshooter', 'log-search'];

describe('simple mode defaults table (per resource type)', () => {
  it('no boot.yml → briefs all said, skills all said', async () => {
    const b = await boot(null);
    expect(b.d.bootMode).toBe('none');
    expect(b.said.sort()).toEqual(ALL_BRIEFS);
    expect(b.refs).toEqual([]);
    expect(b.saidSkills.sort()).toEqual(ALL_SKILLS);
    expect(b.indexedSkills).toEqual([]);
  });

  it('`briefs:` absent, `skills:` absent → briefs all said, skills all said', async () => {
    const b = await boot('# a boot file with no keys\n');
    expect(b.d.bootMode).toBe('simple');
    expect(b.said.sort()).toEqual(ALL_BRIEFS);
    expect(b.saidSkills.sort()).toEqual(ALL_SKILLS);
  });

  it('`briefs: {}` (no say key) → briefs all said, skills all said', async () => {
    const b = await boot('briefs: {}\n');
    expect(b.said.sort()).toEqual(ALL_BRIEFS);
    expect(b.refs).toEqual([]);
    expect(b.saidSkills.sort()).toEqual(ALL_SKILLS);
  });

  it('`briefs: { say: [...] }` → matched briefs said, unmatched ref; skills all said (not specified)', async () => {
    const b = await boot('briefs:\n  say:\n    - practices/code.test/**/*.md\n    - runbooks/oom.md\n');
    expect(b.said).toEqual([
      'practices/code.test/deep/integration.md',
      'practices/code.test/unit.md',
      'runbooks/oom.md',
    ]);
    expect(b.refs.sort()).toEqual(ALL_BRIEFS.filter((x) => !b.said.includes(x)));
    expect(b.saidSkills.sort()).toEqual(ALL_SKILLS);
  });

  it('both have `say:` lists → matched said, unmatched ref, for briefs and for skills independently', async () => {
    const b = await boot(
      `briefs:\n  say: [runbooks/*.md]\nskills:\n  say: ['${TROUBLESHOOTER}', 'k8s4agents/git.commit/**']\n`,
    );
    expect(b.said).toEqual(['runbooks/crashloop.md', 'runbooks/oom.md']);
    expect(b.refs).toHaveLength(ALL_BRIEFS.length - 2);
    expect(b.saidSkills).toEqual(['commit-helper', 'k8s-troubleshooter']);
    expect(b.indexedSkills).toEqual(['log-search']);
  });

  it('same logic applies independently to `skills:` (skills say list, briefs unspecified)', async () => {
    const b = await boot('skills:\n  say: []\n');
    expect(b.said.sort()).toEqual(ALL_BRIEFS);
    expect(b.saidSkills).toEqual([]);
    expect(b.indexedSkills).toEqual(ALL_SKILLS);
  });
});

describe('subject mode defaults table', () => {
  it('brief in `always.briefs.say` → said on every boot', async () => {
    for (const subjects of [undefined, ['test'], ['refactor'], ['terms', 'test']]) {
      const b = await boot(SUBJECT_BOOT, subjects ? { subjects } : {});
      expect(b.said[0]).toBe('practices/lang.terms/gerunds.md');
    }
  });

  it('brief in `always.briefs.ref` → ref’d on every boot', async () => {
    for (const subjects of [undefined, ['test'], ['refactor'], ['terms']]) {
      const b = await boot(SUBJECT_BOOT, subjects ? { subjects } : {});
      expect(b.refs).toContain('practices/lang.terms/plain.md');
    }
  });

  it('brief in `subject.X.briefs.say` → said when subject.X is booted (and only then)', async () => {
    const withX = await boot(SUBJECT_BOOT, { subjects: ['test'] });
    expect(withX.said).toEqual([
      'practices/lang.terms/gerunds.md',
      'practices/code.test/deep/integration.md',
      'practices/code.test/unit.md',
      'practices/errors/fail-fast.md',
    ]);
    const withoutX = await boot(SUBJECT_BOOT, { subjects: ['terms'] });
    expect(withoutX.text).not.toContain('code.test/unit.md');
  });

  it('brief in `subject.X.briefs.ref` → ref’d when subject.X is booted (and only then)', async () => {
    expect((await boot(SUBJECT_BOOT, { subjects: ['test'] })).refs).toContain('runbooks/oom.md');
    expect((await boot(SUBJECT_BOOT, { subjects: ['refactor'] })).text).not.toContain('runbooks/oom.md');
  });

  it('brief not in any glob, all subjects booted → ref’d in `also` section', async () => {
    const b = await boot(SUBJECT_BOOT);
    expect(b.d.subjects).toEqual(['test', 'terms', 'refactor']);
    expect(b.also).toEqual(['reference/kubectl.md', 'runbooks/crashloop.md']);
    expect(b.said).not.toContain('runbooks/crashloop.md');
    // Skills nobody curated are in the index (the skills' also section) when all subjects boot.
    expect(b.indexedSkills).toEqual(['commit-helper', 'log-search']);
  });

  it('brief not in any glob, specific subjects booted → omitted entirely', async () => {
    const b = await boot(SUBJECT_BOOT, { subjects: ['test'] });
    expect(b.text).not.toContain('runbooks/crashloop.md');
    expect(b.text).not.toContain('reference/kubectl.md');
    expect(b.text).not.toContain('<also>');
    expect(b.indexedSkills).toEqual([]);
    expect(b.saidSkills).toEqual(['k8s-troubleshooter']);
  });
});

describe('subject mode defaults (list)', () => {
  it('`always:` absent → no briefs/skills are always included', async () => {
    const b = await boot(
      `subject.a:\n  briefs:\n    say: [runbooks/oom.md]\n  skills:\n    say: [${TROUBLESHOOTER}]\nsubject.b: {}\n`,
      { subjects: ['b'] },
    );
    expect(b.said).toEqual([]);
    expect(b.refs).toEqual([]);
    expect(b.saidSkills).toEqual([]);
    expect(b.indexedSkills).toEqual([]);
  });

  it('`always.briefs:` absent → no briefs are always included', async () => {
    const b = await boot(`always:\n  skills:\n    say: [${TROUBLESHOOTER}]\nsubject.a: {}\n`, {
      subjects: ['a'],
    });
    expect(b.said).toEqual([]);
    expect(b.refs).toEqual([]);
    expect(b.saidSkills).toEqual(['k8s-troubleshooter']);
  });

  it('`always.briefs.say:` absent → no briefs are always said', async () => {
    const b = await boot('always:\n  briefs:\n    ref: [runbooks/*.md]\n', { subjects: [] });
    expect(b.said).toEqual([]);
    expect(b.refs).toEqual(['runbooks/crashloop.md', 'runbooks/oom.md']);
  });

  it('`always.briefs.ref:` absent → no briefs are always ref’d', async () => {
    const b = await boot('always:\n  briefs:\n    say: [runbooks/oom.md]\n', { subjects: [] });
    expect(b.said).toEqual(['runbooks/oom.md']);
    expect(b.refs).toEqual([]);
  });

  it('the same defaults apply to `always.skills:` and to each `subject.$slug:`', async () => {
    const yaml = `always:\n  skills:\n    ref: ['*/skills/log-*']\nsubject.a:\n  skills:\n    say: [${TROUBLESHOOTER}]\nsubject.b: {}\n`;
    const a = await boot(yaml, { subjects: ['a'] });
    expect(a.saidSkills).toEqual(['k8s-troubleshooter']);
    expect(a.indexedSkills).toEqual(['log-search']);
    expect(a.said).toEqual([]);
    const bOnly = await boot(yaml, { subjects: ['b'] });
    expect(bOnly.saidSkills).toEqual([]);
    expect(bOnly.indexedSkills).toEqual(['log-search']);
  });
});

describe('skills in a subject-mode boot file that never curates them (table)', () => {
  // Say/ref defaults apply per resource type: only `skills` say/ref lists in always/subject.* curate
  // skills. Without any, every skill keeps its default, indexed (Level 1), whatever subjects boot.
  const BRIEFS_ONLY =
    'always:\n  briefs:\n    say: [runbooks/oom.md]\nsubject.crash:\n  briefs:\n    say: [runbooks/crashloop.md]\nsubject.oom: {}\n';
  const rows: [
    string,
    string,
    { subjects?: string[]; rules?: { match: Record<string, string>; subjects: string[] }[] },
  ][] = [
    ['all subjects booted', BRIEFS_ONLY, {}],
    ['one subject booted by name (`context --subject`)', BRIEFS_ONLY, { subjects: ['crash'] }],
    [
      'a subject chosen by the config rules (the daemon)',
      BRIEFS_ONLY,
      { rules: [{ match: { faultType: 'CrashLoop' }, subjects: ['crash'] }] },
    ],
    ['`skills: {}` without lists', `${BRIEFS_ONLY}subject.x:\n  skills: {}\n`, { subjects: ['crash'] }],
  ];
  it.each(rows)('%s → every skill indexed, none said, none dropped', async (_case, yaml, opts) => {
    const b = await boot(yaml, opts);
    expect(b.d.bootMode).toBe('subject');
    expect(b.indexedSkills).toEqual(ALL_SKILLS);
    expect(b.saidSkills).toEqual([]);
    expect(b.said).toContain('runbooks/oom.md');
  });

  it('a `skills` list in any section curates skills again: unmatched ones follow the subject-mode rows', async () => {
    const yaml = `${BRIEFS_ONLY}subject.x:\n  skills:\n    ref: ['*/skills/log-*']\n`;
    expect((await boot(yaml, { subjects: ['crash'] })).indexedSkills).toEqual([]);
    expect((await boot(yaml, { subjects: ['x'] })).indexedSkills).toEqual(['log-search']);
    expect((await boot(yaml)).indexedSkills).toEqual(ALL_SKILLS);
  });
});

describe('edge cases and pit of success table', () => {
  it('no boot.yml present → default to current behavior: say all briefs', async () => {
    const b = await boot(null);
    expect(b.said.sort()).toEqual(ALL_BRIEFS);
    for (const content of Object.values(BRIEFS)) expect(b.text).toContain(content.trim());
    expect(b.d.subjects).toEqual([]);
  });

  it('boot.yml with empty `briefs: {}` → say all briefs (no say list = say all)', async () => {
    expect((await boot('briefs: {}\n')).said.sort()).toEqual(ALL_BRIEFS);
  });

  it('boot.yml with `briefs: { say: [] }` → say none; all briefs are ref', async () => {
    const b = await boot('briefs: { say: [] }\n');
    expect(b.said).toEqual([]);
    expect(b.refs).toEqual(ALL_BRIEFS);
    expect(b.parts.briefs).toBe('');
  });

  it('mixed mode (both patterns) → fail fast: "mixed mode not allowed"', async () => {
    // The boot file is rejected as a whole (validate-config, and the daemon and `context` at start,
    // refuse it); a run that meets it anyway references everything instead of losing the disclosure.
    const yaml = 'briefs:\n  say: []\nsubject.test: {}\n';
    const file = path.join(tmp.dir, 'mixed.yml');
    writeFileSync(file, yaml);
    await expect(loadBootFile(file)).rejects.toThrow(/mixed mode not allowed/);
    await expect(boot(yaml, { subjects: ['test'] })).rejects.toThrow(/mixed mode not allowed/);
    const run = await boot(yaml);
    expect(run.d.problems).toEqual([expect.stringMatching(/mixed mode not allowed/)]);
    expect(run.said).toEqual([]);
  });

  it('brief in always and also in subject → always wins; subject gets "as mentioned earlier" + ref', async () => {
    const b = await boot(SUBJECT_BOOT, { subjects: ['terms'] });
    expect(b.said.filter((x) => x === 'practices/lang.terms/gerunds.md')).toHaveLength(1);
    expect(b.said[0]).toBe('practices/lang.terms/gerunds.md');
    expect(b.mentioned['practices/lang.terms/gerunds.md']).toBe('always');
  });

  it('brief matches say in multiple subjects → first says content; others say "as mentioned earlier" + ref', async () => {
    const b = await boot(SUBJECT_BOOT, { subjects: ['test', 'refactor'] });
    expect(b.said.filter((x) => x === 'practices/errors/fail-fast.md')).toHaveLength(1);
    expect(b.mentioned['practices/errors/fail-fast.md']).toBe('subject.test');
    expect(b.text).toContain('- practices/errors/fail-fast.md (as mentioned earlier in subject.test)');
    const reversed = await boot(SUBJECT_BOOT, { subjects: ['refactor', 'test'] });
    expect(reversed.mentioned['practices/errors/fail-fast.md']).toBe('subject.refactor');
  });

  it("brief not in any subject → appears in 'also' section as ref", async () => {
    const b = await boot(SUBJECT_BOOT);
    expect(b.parts.refs).toMatch(/<also>\n(- [^\n]*\n)*- reference\/: kubectl\.md/);
    expect(b.also).toContain('runbooks/crashloop.md');
  });

  it('`--usecase` in simple mode → fail fast: "usecase requires subject mode"', async () => {
    await expect(boot('briefs:\n  say: []\n', { subjects: ['test'] })).rejects.toThrow(
      /usecase requires subject mode/,
    );
    await expect(boot(null, { subjects: ['test'] })).rejects.toThrow(/usecase requires subject mode/);
  });

  it('`--usecase` specifies unknown subject → fail fast: "subject not found"', async () => {
    await expect(boot(SUBJECT_BOOT, { subjects: ['test', 'nope'] })).rejects.toThrow(
      'subject not found: nope (known: test, terms, refactor)',
    );
  });
});

describe('mode detection table', () => {
  it('`briefs:` and/or `skills:` only → simple mode (top-level curation)', async () => {
    for (const yaml of ['briefs: {}\n', 'skills: {}\n', 'briefs: {}\nskills: {}\n']) {
      const b = await boot(yaml);
      expect(b.d.bootMode).toBe('simple');
      expect(b.d.subjects).toEqual([]);
    }
  });

  it('`always:` and/or `subject.*:` → subject mode (usecase-scoped curation)', async () => {
    for (const yaml of ['always: {}\n', 'subject.test: {}\n', 'always: {}\nsubject.test: {}\n']) {
      expect((await boot(yaml)).d.bootMode).toBe('subject');
    }
  });

  it('both patterns → error: fail fast with "mixed mode not allowed"', async () => {
    for (const yaml of ['briefs: {}\nalways: {}\n', 'skills: {}\nsubject.x: {}\n']) {
      await expect(boot(yaml, { subjects: ['x'] })).rejects.toThrow(/mixed mode not allowed/);
      expect((await boot(yaml)).d.problems).toEqual([expect.stringMatching(/mixed mode not allowed/)]);
    }
  });
});

describe('boot output structure', () => {
  it('simple mode: said briefs in full, unmatched as refs, said skills in full, unsaid skills indexed', async () => {
    const b = await boot(`briefs:\n  say: [runbooks/oom.md]\nskills:\n  say: [${TROUBLESHOOTER}]\n`);
    expect(b.parts.briefs).toBe(
      '<brief path="/opt/triage/briefs/runbooks/oom.md">\n# OOM runbook\nCompare limits and usage.\n</brief>',
    );
    expect(b.parts.refs).toMatch(
      /^Briefs not preloaded, in \/opt\/triage\/briefs\/; read one when it becomes relevant:\n/,
    );
    expect(b.parts.refs).toContain('\n- runbooks/: crashloop.md');
    expect(b.refs).toContain('runbooks/crashloop.md');
    expect(b.parts.skills).toContain(
      `<skill name="k8s-troubleshooter" path="/opt/triage/skills/k8s-troubleshooter/SKILL.md">\n---\nname: k8s-troubleshooter`,
    );
    expect(b.parts.skills).toContain(
      'Skills to read on demand, each in /opt/triage/skills/<name>/SKILL.md: when a task matches a description, read that file first.\n' +
        '- commit-helper: Write commit messages\n- log-search: Search container logs for error signatures\n</skills>',
    );
  });

  it('subject mode: always first, then the booted subjects in order, then the also section last', async () => {
    const b = await boot(SUBJECT_BOOT);
    expect(b.said).toEqual([
      'practices/lang.terms/gerunds.md',
      'practices/code.test/deep/integration.md',
      'practices/code.test/unit.md',
      'practices/errors/fail-fast.md',
      'practices/lang.terms/plain.md',
    ]);
    expect(b.parts.refs?.trimEnd().endsWith('</also>')).toBe(true);
  });
});

describe('subjects chosen from the incident', () => {
  const rules = [{ match: { faultType: 'crashloop' }, subjects: ['test'] }];

  it('boots the subject a rule maps the incident to, without any override', async () => {
    const b = await boot(SUBJECT_BOOT, { rules });
    expect(b.d.subjects).toEqual(['test']);
    expect(b.text).not.toContain('<also>');
  });

  it('an explicit subject list overrides the rules', async () => {
    expect((await boot(SUBJECT_BOOT, { rules, subjects: ['terms'] })).d.subjects).toEqual(['terms']);
  });

  it('boots all subjects when no rule matches', async () => {
    const b = await boot(SUBJECT_BOOT, {
      rules: [{ match: { faultType: 'OOMKilled' }, subjects: ['test'] }],
    });
    expect(b.d.subjects).toEqual(['test', 'terms', 'refactor']);
  });

  it('warns and ignores rule subjects when the boot file is not in subject mode', async () => {
    const b = await boot('briefs: {}\n', { rules });
    expect(b.d.subjects).toEqual([]);
    expect(b.warnings.some((w) => w.includes('not in subject mode'))).toBe(true);
  });

  it('warns about rule subjects the boot file does not define and boots the known ones', async () => {
    const b = await boot(SUBJECT_BOOT, {
      rules: [{ match: { faultType: 'CrashLoop' }, subjects: ['ghost', 'terms'] }],
    });
    expect(b.d.subjects).toEqual(['terms']);
    expect(b.warnings.some((w) => w.includes('does not define'))).toBe(true);
  });
});

import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexSkills, type SkillsIndex } from '../../../src/context/disclosure/skills-index.js';
import { captureLogger, gitCheckout, skillMd, snapshot, tempDir, VIEW } from './fixtures.js';

// Skills in the Agent Skills format, good and broken, committed to real git repositories and read
// from worktree checkouts of them.

const MAX_BYTES = 4096;
const tmp = tempDir('skills');
let index: SkillsIndex;
let logs: Record<string, unknown>[];
let projectDir: string;

beforeAll(async () => {
  const outside = path.join(tmp.dir, 'outside');
  mkdirSync(path.join(outside, 'stolen'), { recursive: true });
  writeFileSync(
    path.join(outside, 'stolen', 'SKILL.md'),
    skillMd('stolen', 'Outside the source; must not be indexed'),
  );
  writeFileSync(
    path.join(outside, 'SKILL.md'),
    skillMd('linked-file', 'Outside the source; must not be indexed'),
  );

  const project = gitCheckout(tmp.dir, 'k8s4agents', {
    files: {
      'README.md': '# k8s4agents\n',
      'skills/k8s-troubleshooter/SKILL.md': skillMd(
        'k8s-troubleshooter',
        'Systematic Kubernetes troubleshooting and incident response.',
      ),
      'skills/k8s-troubleshooter/scripts/incident_triage.sh': '#!/bin/bash\necho triage\n',
      'skills/k8s-troubleshooter/references/nested/SKILL.md': skillMd(
        'nested',
        'Inside another skill: not a skill',
      ),
      'skills/shared-name/SKILL.md': skillMd(
        'shared-name',
        'The project copy of a skill that the user source also has',
      ),
      'skills/Bad_Name/SKILL.md': skillMd('Bad_Name', 'Has an invalid name but a description, so it is kept'),
      'skills/folder-a/SKILL.md': skillMd('other-name', 'Name differs from its folder; kept with a warning'),
      'skills/odd/SKILL.md': skillMd('Odd Name/../x', 'A name that is no folder name, laid out under a slug'),
      'skills/zz-clash/SKILL.md': skillMd(
        'odd-name-x',
        'A valid name whose folder the odd one already takes',
      ),
      'skills/no-description/SKILL.md': '---\nname: no-description\nlicense: MIT\n---\n# body\n',
      'skills/no-frontmatter/SKILL.md': '# Just markdown\n\nNo frontmatter at all.\n',
      'skills/broken-yaml/SKILL.md':
        '---\nname: broken-yaml\ndescription: [unclosed\nlicense: MIT\n---\nbody\n',
      'skills/oversize/SKILL.md': skillMd('oversize', 'Too big to index', 'x'.repeat(MAX_BYTES + 10)),
      'a/b/c/depth-four/SKILL.md': skillMd('depth-four', 'Four folders below the source root'),
      'a/b/c/d/depth-five/SKILL.md': skillMd('depth-five', 'Five folders below the root: too deep'),
      'node_modules/pkg/SKILL.md': skillMd('pkg', 'In node_modules: ignored'),
      'skills/link-file/notes.md': 'the SKILL.md here is a symlink out of the repository\n',
    },
    symlinks: {
      'skills/escape-dir': outside + '/stolen',
      'skills/link-file/SKILL.md': '../../../../../outside/SKILL.md',
      'skills/inside-link': 'k8s-troubleshooter',
    },
  });
  projectDir = project.dir;
  const user = gitCheckout(tmp.dir, 'my-skills', {
    files: {
      'shared-name/SKILL.md': skillMd('shared-name', 'The user copy, shadowed by the project copy'),
      'user-only/SKILL.md': skillMd('user-only', 'Only in the user source'),
    },
  });
  const second = gitCheckout(tmp.dir, 'team-skills', {
    files: {
      'skills/user-only/SKILL.md': skillMd(
        'user-only',
        'Second user source, which loses to the first by config order',
      ),
    },
  });

  const cap = captureLogger();
  index = await indexSkills({
    // The user source comes first in config order: project precedence must still win.
    snapshot: snapshot([
      { name: 'my-skills', scope: 'user', dir: user.dir, commit: user.commit },
      { name: 'k8s4agents', scope: 'project', dir: project.dir, commit: project.commit },
      { name: 'team-skills', scope: 'user', dir: second.dir, commit: second.commit },
    ]),
    maxSkillFileBytes: MAX_BYTES,
    skillsDir: VIEW.skillsDir,
    log: cap.log,
  });
  logs = cap.lines();
}, 60_000);

afterAll(() => tmp.cleanup());

const names = () => index.skills.map((s) => s.name);
const problemFor = (rel: string) => index.problems.filter((p) => p.file.includes(rel));

describe('skills index from real git checkouts', () => {
  it('finds a nested skill and gives the path the agent reads inside its container: one folder per skill, flat', () => {
    const s = index.skills.find((x) => x.name === 'k8s-troubleshooter');
    expect(s).toMatchObject({
      dirName: 'k8s-troubleshooter',
      source: 'k8s4agents',
      scope: 'project',
      relDir: 'skills/k8s-troubleshooter',
      bootPath: 'k8s4agents/skills/k8s-troubleshooter',
      description: 'Systematic Kubernetes troubleshooting and incident response.',
      path: '/opt/triage/skills/k8s-troubleshooter/SKILL.md',
      file: path.join(projectDir, 'skills/k8s-troubleshooter/SKILL.md'),
      hostDir: realpathSync(path.join(projectDir, 'skills/k8s-troubleshooter')),
    });
  });

  it('lays out a skill whose name is no safe folder name under a slug, and resolves a folder clash like a name clash', () => {
    expect(index.skills.find((x) => x.name === 'Odd Name/../x')).toMatchObject({
      dirName: 'odd-name-x',
      path: '/opt/triage/skills/odd-name-x/SKILL.md',
    });
    expect(index.skills.filter((x) => x.dirName === 'odd-name-x')).toHaveLength(1);
    expect(index.conflicts).toContainEqual({
      name: 'odd-name-x',
      winner: 'k8s4agents/skills/odd (project)',
      loser: 'k8s4agents/skills/zz-clash (project)',
    });
  });

  it('lists skills sorted by name', () => {
    expect(names()).toEqual([...names()].sort());
    expect(names()).toEqual([
      'Bad_Name',
      'Odd Name/../x',
      'depth-four',
      'k8s-troubleshooter',
      'other-name',
      'shared-name',
      'user-only',
    ]);
  });

  it('keeps a skill with an invalid name and warns', () => {
    expect(names()).toContain('Bad_Name');
    expect(problemFor('Bad_Name/SKILL.md')).toEqual([
      expect.objectContaining({ action: 'kept', message: expect.stringContaining('lowercase letters') }),
    ]);
  });

  it('keeps a skill whose name differs from its folder and warns', () => {
    expect(problemFor('folder-a/SKILL.md')[0]?.message).toContain('should equal its folder name "folder-a"');
  });

  it('skips a skill without a description, with a warning', () => {
    expect(names()).not.toContain('no-description');
    expect(problemFor('no-description/SKILL.md')[0]).toMatchObject({
      action: 'skipped',
      message: expect.stringContaining('no description'),
    });
  });

  it('skips a SKILL.md without frontmatter', () => {
    expect(problemFor('no-frontmatter/SKILL.md')[0]).toMatchObject({ action: 'skipped' });
  });

  it('reports a YAML error with the file and line and skips the skill', () => {
    expect(names()).not.toContain('broken-yaml');
    const p = problemFor('broken-yaml/SKILL.md')[0];
    expect(p?.action).toBe('skipped');
    // The flow sequence opened on line 3 is reported where the parser gives up (line 4 of the file).
    expect(p?.line).toBe(4);
    expect(p?.message).toContain(`${path.join(projectDir, 'skills/broken-yaml/SKILL.md')}:4:`);
    expect(p?.message).toContain('not valid YAML');
  });

  it('skips a SKILL.md over skills.max_skill_file_bytes', () => {
    expect(names()).not.toContain('oversize');
    expect(problemFor('oversize/SKILL.md')[0]?.message).toContain(
      `over skills.max_skill_file_bytes (${MAX_BYTES})`,
    );
  });

  it('does not follow a folder symlink that leaves the source', () => {
    expect(names()).not.toContain('stolen');
    expect(problemFor('escape-dir')[0]?.message).toContain('points outside the source');
  });

  it('does not read a SKILL.md symlink that leaves the source', () => {
    expect(names()).not.toContain('linked-file');
    expect(problemFor('link-file/SKILL.md')[0]?.message).toContain('outside the source');
  });

  it('follows an in-source symlink once, without indexing the same skill twice', () => {
    expect(index.skills.filter((s) => s.name === 'k8s-troubleshooter')).toHaveLength(1);
  });

  it('finds skills four folders deep but not five, and ignores node_modules and skill subfolders', () => {
    expect(names()).toContain('depth-four');
    expect(names()).not.toContain('depth-five');
    expect(names()).not.toContain('pkg');
    expect(names()).not.toContain('nested');
  });

  it('lets a project source win a name conflict over a user source listed before it, and logs it', () => {
    expect(index.skills.find((s) => s.name === 'shared-name')).toMatchObject({
      source: 'k8s4agents',
      scope: 'project',
    });
    expect(index.conflicts).toContainEqual({
      name: 'shared-name',
      winner: 'k8s4agents/skills/shared-name (project)',
      loser: 'my-skills/shared-name (user)',
    });
    expect(
      logs.some((l) => l.msg?.toString().includes('skill name conflict') && l.name === 'shared-name'),
    ).toBe(true);
  });

  it('resolves a conflict between two sources of the same scope by config order', () => {
    expect(index.skills.find((s) => s.name === 'user-only')?.source).toBe('my-skills');
    expect(index.conflicts).toContainEqual({
      name: 'user-only',
      winner: 'my-skills/user-only (user)',
      loser: 'team-skills/skills/user-only (user)',
    });
  });

  it('logs every problem once as a warning naming the file', () => {
    const warned = logs.filter((l) => l.level === 'warn' && String(l.msg).startsWith('skill: '));
    expect(warned).toHaveLength(index.problems.length);
    expect(warned.every((l) => typeof l.file === 'string')).toBe(true);
  });

  it('reports an unreadable source and still indexes the others', async () => {
    const cap = captureLogger();
    const result = await indexSkills({
      snapshot: snapshot([
        { name: 'gone', scope: 'project', dir: path.join(tmp.dir, 'does-not-exist'), commit: 'x' },
        { name: 'k8s4agents', scope: 'project', dir: projectDir, commit: 'x' },
      ]),
      maxSkillFileBytes: MAX_BYTES,
      skillsDir: VIEW.skillsDir,
      log: cap.log,
    });
    expect(result.problems[0]).toMatchObject({ source: 'gone', action: 'skipped' });
    expect(result.skills.map((s) => s.name)).toContain('k8s-troubleshooter');
  });
});

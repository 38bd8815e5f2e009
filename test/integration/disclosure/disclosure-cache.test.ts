import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildDisclosure, disclosureCaches } from '../../../src/context/disclosure/index.js';
import type { SkillsSnapshot } from '../../../src/context/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import {
  gitCheckout,
  incident,
  makeConfig,
  skillMd,
  snapshot,
  tempDir,
  VIEW,
  writeTree,
} from './fixtures.js';

// The disclosure's files are read, walked and parsed once per change, not once per run: a second run
// with nothing changed builds nothing again, and a change to any one file shows in the next run.

const tmp = tempDir('cache');
let personasDir: string;
let briefsDir: string;
let bootFile: string;
let skills: SkillsSnapshot;

/** Every file and folder below `dir` dated a minute back (written long before the runs). */
function settle(dir: string): void {
  const then = new Date(Date.now() - 60_000);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) settle(p);
    utimesSync(p, then, then);
  }
  utimesSync(dir, then, then);
}

beforeAll(() => {
  personasDir = path.join(tmp.dir, 'personas');
  briefsDir = path.join(tmp.dir, 'briefs');
  bootFile = path.join(tmp.dir, 'boot.yml');
  writeTree(personasDir, {
    'sre/PERSONA.md':
      '---\nname: sre\ndescription: Finds causes\nworkflows:\n  crash: Crash loops\n---\nBody\n',
    'sre/workflows/crash.md': '# Crash loops\n',
  });
  writeTree(briefsDir, { 'core/one.md': '# One\n', 'crash/two.md': '# Two\nSay this in full.\n' });
  writeFileSync(bootFile, 'briefs:\n  say: [crash/*.md]\n');
  const repo = gitCheckout(tmp.dir, 'k8s', {
    files: { 'skills/logs/SKILL.md': skillMd('logs', 'Log search') },
  });
  skills = snapshot([{ name: 'k8s', scope: 'project', dir: repo.dir, commit: repo.commit }]);
  settle(tmp.dir);
}, 60_000);

afterAll(() => tmp.cleanup());

beforeEach(() => {
  for (const c of Object.values(disclosureCaches)) c.clear();
});

const build = (snap: SkillsSnapshot = skills) =>
  buildDisclosure({
    config: makeConfig({
      personas_dir: personasDir,
      persona: 'sre',
      briefs_dir: briefsDir,
      boot_file: bootFile,
    }),
    incident: incident(),
    skills: snap,
    view: VIEW,
    log: silentLogger(),
  });

const builds = () =>
  Object.fromEntries(Object.entries(disclosureCaches).map(([k, c]) => [k, c.builds])) as Record<
    keyof typeof disclosureCaches,
    number
  >;

describe('disclosure caches', () => {
  it('a second run with nothing changed reads, walks and parses nothing again, and renders the same text', async () => {
    const first = (await build()).render(new Set()).text;
    const before = builds();
    const second = (await build()).render(new Set()).text;
    expect(builds()).toEqual(before);
    expect(second).toBe(first);
    expect(first).toContain('Say this in full.');
    expect(first).toContain('logs');
  });

  it('an edited persona, a new brief, an edited said brief and a new boot.yml each show in the next run', async () => {
    await build();
    writeFileSync(
      path.join(personasDir, 'sre/PERSONA.md'),
      '---\nname: sre\ndescription: Finds causes quickly\n---\nBody\n',
    );
    expect((await build()).render(new Set()).text).toContain('Finds causes quickly');

    writeFileSync(path.join(briefsDir, 'core/three.md'), '# Three\n');
    expect((await build()).render(new Set()).text).toMatch(/- core\/: .*three\.md/);

    writeFileSync(path.join(briefsDir, 'crash/two.md'), '# Two\nNow this instead.\n');
    expect((await build()).render(new Set()).text).toContain('Now this instead.');

    writeFileSync(bootFile, 'briefs:\n  say: [core/*.md]\n');
    const text = (await build()).render(new Set()).text;
    expect(text).not.toContain('Now this instead.');
    expect(text).toContain('# Three');
  });

  it('the skills index is built once per skills commit', async () => {
    await build();
    const before = builds().skills;
    await build();
    expect(builds().skills).toBe(before);
    const repo = gitCheckout(tmp.dir, 'k8s-next', {
      files: { 'skills/events/SKILL.md': skillMd('events', 'Event search') },
    });
    const next = snapshot([{ name: 'k8s', scope: 'project', dir: repo.dir, commit: repo.commit }]);
    expect((await build(next)).render(new Set()).text).toContain('events');
    expect(builds().skills).toBe(before + 1);
  });
});

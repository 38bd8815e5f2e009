// Level 1 is sent with every model call of every run: for 50 skills, the shipped persona and 100 briefs
// it stays within 3,500 o200k tokens, without losing what the agent needs to find a skill or a brief
// (every name, every brief, the folder each lives in, the start of each description).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDisclosure } from '../../../src/context/disclosure/index.js';
import type { SkillsSnapshot } from '../../../src/context/types.js';
import { silentLogger } from '../../../src/log/logger.js';
import { writeBriefs, writeSkills } from '../../support/level1-corpus.js';
import { incident, makeConfig, SHIPPED_PERSONAS, tempDir, VIEW } from './fixtures.js';

const tmp = tempDir('level1');
let skills: SkillsSnapshot;
let briefsDir: string;
let text: string;
let parts: Record<string, string>;

beforeAll(async () => {
  skills = writeSkills(tmp.dir, 50);
  briefsDir = writeBriefs(tmp.dir, 100);
  const bootFile = path.join(tmp.dir, 'boot.yml');
  writeFileSync(bootFile, 'skills: { say: [] }\nbriefs: { say: [] }\n');
  const d = await buildDisclosure({
    config: makeConfig({ personas_dir: SHIPPED_PERSONAS, briefs_dir: briefsDir, boot_file: bootFile }),
    incident: incident(),
    skills,
    view: VIEW,
    log: silentLogger(),
  });
  const r = d.render(new Set());
  text = r.text;
  parts = Object.fromEntries(r.parts.map((p) => [p.part, p.text]));
}, 60_000);

afterAll(() => tmp.cleanup());

describe('Level 1 for 50 skills, the shipped persona and 100 briefs', () => {
  it('stays within 3,500 o200k tokens', () => {
    expect(countTokens(text)).toBeLessThanOrEqual(3500);
  });

  it('says the skills folder once and lists every skill by name with the start of its description', () => {
    const skillsPart = parts.skills ?? '';
    expect(skillsPart.split(VIEW.skillsDir)).toHaveLength(2);
    const lines = skillsPart.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(50);
    for (const line of lines) {
      expect(line).toMatch(/^- [a-z0-9-]+: (Diagnose|Investigate|Triage|Explain|Audit|Trace) /);
      // A name of at most 64 characters, then a description of at most 160.
      expect(line.length).toBeLessThanOrEqual(`- : `.length + 64 + 160);
    }
  });

  it('says the briefs folder once and each brief folder once, and names every brief', () => {
    const refs = parts.refs ?? '';
    expect(refs.split(VIEW.briefsDir)).toHaveLength(2);
    for (const folder of ['runbooks/', 'practices/', 'reference/', 'postmortems/']) {
      expect(refs.split(`- ${folder}: `)).toHaveLength(2);
    }
    expect(refs.match(/[a-z0-9-]+\.md/g)).toHaveLength(100);
  });

  it('says the workflows folder once', () => {
    const workflows = parts.workflows ?? '';
    expect(workflows.split('/opt/triage/personas/kubernetes-sre/workflows/')).toHaveLength(2);
    expect(workflows).toContain('\n- crashloopbackoff: ');
  });
});

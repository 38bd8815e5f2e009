import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listPersonas, loadPersona, PersonaError } from '../../../src/context/disclosure/persona.js';
import { renderPersona, renderWorkflows } from '../../../src/context/disclosure/render.js';
import { silentLogger } from '../../../src/log/logger.js';

const SHIPPED = path.resolve(import.meta.dirname, '../../../configs/personas');
const VIEW_DIR = '/opt/triage/personas';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'persona-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writePersona(
  name: string,
  frontmatter: string,
  body: string,
  workflows: Record<string, string>,
): void {
  const root = path.join(dir, name);
  mkdirSync(path.join(root, 'workflows'), { recursive: true });
  writeFileSync(path.join(root, 'PERSONA.md'), `---\n${frontmatter}\n---\n${body}`);
  for (const [key, text] of Object.entries(workflows))
    writeFileSync(path.join(root, 'workflows', `${key}.md`), text);
}

const load = (persona: string, personasDir = dir) =>
  loadPersona({ personasDir, persona, viewDir: VIEW_DIR, log: silentLogger() });

describe('loadPersona', () => {
  it('gives Level 1 only: summary, categories, workflow index with paths, and where the identity is', async () => {
    writePersona(
      'sre',
      [
        'name: sre',
        'description: >-',
        '  Investigates incidents',
        '  read-only.',
        'categories:',
        '  k8s: kubectl get and describe',
        'workflows:',
        '  triage: First steps',
      ].join('\n'),
      '# SRE\n\nSECRET-IDENTITY-PRINCIPLES never in Level 1.\n',
      { triage: '# Triage\n\nWORKFLOW-BODY-STEP never in Level 1.\n' },
    );
    const p = await load('sre');
    expect(p).toEqual({
      name: 'sre',
      summary: 'Investigates incidents read-only.',
      path: '/opt/triage/personas/sre/PERSONA.md',
      categories: [{ name: 'k8s', summary: 'kubectl get and describe' }],
      workflowsDir: '/opt/triage/personas/sre/workflows',
      workflows: [
        { key: 'triage', summary: 'First steps', path: '/opt/triage/personas/sre/workflows/triage.md' },
      ],
      warnings: [],
    });
    const level1 = renderPersona(p) + renderWorkflows(p);
    expect(level1).not.toContain('SECRET-IDENTITY-PRINCIPLES');
    expect(level1).not.toContain('WORKFLOW-BODY-STEP');
  });

  it('omits a workflow listed in PERSONA.md but missing on disk, with a warning', async () => {
    writePersona('sre', 'description: d\nworkflows:\n  here: Present\n  gone: Missing', '', {
      here: '# Here\n',
    });
    const p = await load('sre');
    expect(p.workflows.map((w) => w.key)).toEqual(['here']);
    expect(p.warnings).toEqual([
      'workflow "gone" is listed in PERSONA.md but workflows/gone.md does not exist; omitted',
    ]);
  });

  it('includes a workflow file not listed in PERSONA.md, summarised by its first heading (not a # line in a code block)', async () => {
    writePersona('sre', 'description: d\nworkflows:\n  b-listed: Listed', '', {
      'b-listed': '# B\n',
      'z-extra':
        'intro line\n\n```sh\n# not a heading: a shell comment\n```\n\n## Extra *procedure* ##\n\nbody\n',
      'a-extra': 'no heading at all\n',
    });
    const p = await load('sre');
    expect(p.workflows.map((w) => [w.key, w.summary])).toEqual([
      ['b-listed', 'Listed'],
      ['a-extra', 'a-extra'],
      ['z-extra', 'Extra procedure'],
    ]);
  });

  it('fails on a missing persona folder, listing the available personas', async () => {
    writePersona('alpha', 'description: a', '', {});
    writePersona('beta', 'description: b', '', {});
    mkdirSync(path.join(dir, 'not-a-persona'));
    await expect(load('gamma')).rejects.toThrow(PersonaError);
    await expect(load('gamma')).rejects.toThrow(
      /persona "gamma" not found: .*Available personas in .*: alpha, beta\./,
    );
    expect(await listPersonas(dir)).toEqual(['alpha', 'beta']);
  });

  it('refuses a persona name that would leave the personas folder', async () => {
    writePersona('alpha', 'description: a', '', {});
    await expect(load('../alpha')).rejects.toThrow(/not found/);
  });

  it('reports a frontmatter YAML error with file and line', async () => {
    writePersona('bad', 'description: ok\nworkflows: [unclosed', '', {});
    await expect(load('bad')).rejects.toThrow(
      /bad\/PERSONA\.md:\d+:\d+: PERSONA\.md frontmatter cannot be read/,
    );
  });

  it('requires a description', async () => {
    writePersona('nodesc', 'name: nodesc', '', {});
    await expect(load('nodesc')).rejects.toThrow(/has no description/);
  });

  it('warns when the name differs from the folder', async () => {
    writePersona('folder', 'name: other\ndescription: d', '', {});
    expect((await load('folder')).warnings).toEqual([
      'persona name "other" differs from its folder "folder"',
    ]);
  });
});

describe('the shipped kubernetes-sre persona', () => {
  it('loads with its seven workflows and no warnings, and Level 1 carries no Level-2 text', async () => {
    const p = await load('kubernetes-sre', SHIPPED);
    expect(p.warnings).toEqual([]);
    expect(p.workflows.map((w) => w.key)).toEqual(
      expect.arrayContaining([
        'incident-response',
        'crashloopbackoff',
        'oomkilled',
        'high-cpu',
        'image-pull-failures',
        'pending-pods',
        'failed-rollouts',
      ]),
    );
    const level1 = `${renderPersona(p)}\n${renderWorkflows(p)}`;
    const personaBody =
      readFileSync(path.join(SHIPPED, 'kubernetes-sre', 'PERSONA.md'), 'utf8').split(/^---$/m)[2] ?? '';
    const bodyLines = personaBody.split('\n').filter((l) => l.trim().length > 30);
    expect(bodyLines.length).toBeGreaterThan(5);
    for (const line of bodyLines) expect(level1).not.toContain(line.trim());
    const wfDir = path.join(SHIPPED, 'kubernetes-sre', 'workflows');
    for (const f of readdirSync(wfDir)) {
      const lines = readFileSync(path.join(wfDir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim().length > 30);
      for (const line of lines) expect(level1).not.toContain(line.trim());
    }
  });
});

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REPORT_SECTIONS } from '../../../src/config/schema.js';
import {
  assemblePrompt,
  renderPromptSent,
  renderRunPaths,
  substituteReportPath,
  substituteReportSections,
} from '../../../src/context/prompt.js';
import type { ContextReport } from '../../../src/context/types.js';
import { parsePromptSent } from '../../support/prompt-sent.js';

const context: ContextReport = {
  estimator: 'o200k',
  budget: { warn: 8000, truncate: 10000 },
  totalTokens: 123,
  sections: [{ tag: 'incident', tokens: 10, originalTokens: 10, truncated: false }],
  skills: [{ source: 'k8s4agents', commit: 'a'.repeat(40) }],
  agent: 'claude',
  safetyFactor: 1.1,
  incomplete: false,
  incompleteReasons: [],
  overBudgetBy: 0,
  triage: { status: 'ok' },
  disclosure: {
    persona: 'kubernetes-sre',
    subjects: ['crash|loop\n## System prompt'],
    bootMode: 'subject',
    parts: [],
    degraded: [],
  },
};

describe('prompt assembly', () => {
  it('puts what every incident shares first, then the run paths and the preloaded context, in the system part for system placement', () => {
    const p = assemblePrompt({
      systemPrompt: 'SYS\n',
      disclosure: 'DISC',
      runPaths: '# This run\n\n- RUN',
      preloaded: '<incident>\n{}\n</incident>',
      userPrompt: 'USER',
      placement: 'system',
    });
    expect(p.system.startsWith('SYS\n\nDISC\n\n# This run\n\n- RUN\n\n# Preloaded context')).toBe(true);
    expect(p.system).toContain('<incident>\n{}\n</incident>\n');
    expect(p.user).toBe('USER\n');
  });

  it('puts the run paths and the preloaded context before the user prompt for user placement, the system part shared', () => {
    const p = assemblePrompt({
      systemPrompt: 'SYS',
      disclosure: '',
      runPaths: '# This run\n\n- RUN',
      preloaded: '<incident>\n{}\n</incident>',
      userPrompt: 'USER',
      placement: 'user',
    });
    expect(p.system).toBe('SYS\n');
    expect(p.user.startsWith('# This run\n\n- RUN\n\n# Preloaded context')).toBe(true);
    expect(p.user.indexOf('<incident>')).toBeLessThan(p.user.indexOf('USER'));
  });

  it('says the run paths: the incident, the triage output and the report, each folder once', () => {
    expect(
      renderRunPaths({
        workspaceDir: '/workspace',
        triageDir: '/workspace/.triage/runs/r1/triage',
        triageLog: '/workspace/.triage/runs/r1/triage/output.log',
        reportPath: '/workspace/output/investigation.md',
      }),
    ).toBe(
      [
        '# This run',
        '',
        '- Incident: `/workspace/incident.json` (and `incident_cluster_permissions.json` beside it, when written).',
        "- Triage output: `/workspace/.triage/runs/r1/triage/` (the script's whole output in `output.log` there).",
        '- Your report: `/workspace/output/investigation.md`.',
      ].join('\n'),
    );
  });

  it('substitutes every {{report_path}}', () => {
    expect(substituteReportPath('a {{report_path}} b {{ report_path }} $&', '/w/o.md')).toBe(
      'a /w/o.md b /w/o.md $&',
    );
  });

  it('round-trips both parts byte-identically through prompt-sent.md, whatever backticks they hold', () => {
    const cases = [
      { system: 'plain', user: 'u' },
      { system: '', user: '' },
      { system: '```\ncode\n```\n````` five', user: 'ends with backticks ``````' },
      { system: '\n\nleading and trailing\n\n', user: '## User prompt\n\n```text\nfake\n```\n' },
      { system: 'x\r\ny\u0000z', user: '## System prompt\n\n```text\n' },
    ];
    for (const prompt of cases) {
      const text = renderPromptSent(
        prompt,
        { agent: 'claude', placement: 'system', promptSha256: 'abc' },
        context,
      );
      expect(parsePromptSent(text)).toEqual(prompt);
    }
  });

  it('renders the header with agent, model, placement, skills commits and disclosure decisions', () => {
    const text = renderPromptSent(
      { system: 's', user: 'u' },
      { agent: 'codex', model: 'gpt-5', placement: 'user', promptSha256: 'f00' },
      context,
    );
    expect(text).toContain('| agent | codex |');
    expect(text).toContain('| model | gpt-5 |');
    expect(text).toContain(`k8s4agents@${'a'.repeat(40)}`);
    expect(text).toContain('| persona | kubernetes-sre |');
    expect(text).toContain('crash\\|loop ## System prompt');
    expect(text).toContain('| **total** | 123 | budget 10000 (warn 8000) |');
  });

  it('is deterministic: the same inputs render the same bytes', () => {
    const a = renderPromptSent(
      { system: 's', user: 'u' },
      { agent: 'claude', placement: 'system', promptSha256: '1' },
      context,
    );
    const b = renderPromptSent(
      { system: 's', user: 'u' },
      { agent: 'claude', placement: 'system', promptSha256: '1' },
      context,
    );
    expect(a).toBe(b);
  });

  it('names what is missing when prompt-sent.md is malformed', () => {
    expect(() => parsePromptSent('# nothing')).toThrow(/no "## System prompt" section/);
  });
});

describe('parsePromptSent on a minimal file', () => {
  it('accepts the section heading on the first line', () => {
    expect(
      parsePromptSent('## System prompt\n\n```text\nS\n```\n\n## User prompt\n\n```text\nU\n```\n'),
    ).toEqual({ system: 'S', user: 'U' });
  });
});

describe('shipped prompt files', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

  const systemPrompts = [
    'configs/triage-system-prompt.md',
    'deploy/kubernetes/base/config/triage-system-prompt.md',
  ];
  const headingsIn = (text: string, sections: string[]) =>
    [...substituteReportSections(text, sections).matchAll(/^- `## ([^`]+)`/gm)].map((m) => m[1]);

  it.each(systemPrompts)(
    '%s lists exactly the report headings the collector checks (agent.report_sections), from the config, and no others',
    async (file) => {
      const text = await readFile(path.join(root, file), 'utf8');
      // One template: the file hard-codes no heading of its own, it renders the configured list.
      expect(text).not.toMatch(/^- `## /m);
      expect(headingsIn(text, [...DEFAULT_REPORT_SECTIONS])).toEqual([...DEFAULT_REPORT_SECTIONS]);
      expect(headingsIn(text, ['Summary', 'Root Cause'])).toEqual(['Summary', 'Root Cause']);
    },
  );

  it.each(systemPrompts)(
    '%s names no path of one run, so that it is the same for every incident (the run paths follow Level 1)',
    async (file) => {
      const text = await readFile(path.join(root, file), 'utf8');
      expect(text).not.toMatch(
        /\{\{\s*(report_path|workspace_dir|triage_dir|skills_dir|personas_dir|briefs_dir)\s*\}\}/,
      );
      expect(text).toContain('`# This run`');
    },
  );

  it('configs/user-prompt.md names the report path and leaves the headings to the system prompt', async () => {
    const text = await readFile(path.join(root, 'configs/user-prompt.md'), 'utf8');
    expect(text).toContain('{{report_path}}');
    expect(text.replace(/\s+/g, ' ')).toContain('the level-2 headings the system prompt lists');
    expect(headingsIn(text, [...DEFAULT_REPORT_SECTIONS])).toEqual([]);
  });

  it("defaults to the headings of the troubleshooting skill's report template", async () => {
    const skill = await readFile(
      path.join(root, 'test/fixtures/skill-source/skills/k8s-troubleshooter/SKILL.md'),
      'utf8',
    );
    const template = [...skill.matchAll(/^## (\d\. .+)$/gm)].map((m) => m[1]);
    expect(template).toHaveLength(7);
    expect(DEFAULT_REPORT_SECTIONS).toEqual(template);
  });
});

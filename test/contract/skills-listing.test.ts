// Contract: each real CLI that has native skills discovers the skills where the run lays them out
// (one folder per skill under its skills folder, plus ~/.claude/skills/<name> for the ones that do not
// scan it) and lists each of them once in its own model request, with no help from our prompt.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SKILLS_MARKER, makeAgentPaths, requireCli, runWithFixtureSkills } from '../support/agent-clis.js';
import { CLI_STAND_INS, type CliStandIn } from '../support/cli-stand-ins.js';

const RUN_TIMEOUT_MS = 90_000;
const roots: string[] = [];
afterAll(async () => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

interface Case extends CliStandIn {
  /** What the listing shows besides the description, proving where the skill was found. */
  shows: (home: string) => string;
}

const CASES: Case[] = [
  { ...CLI_STAND_INS.claude, shows: () => 'k8s-troubleshooter: Kubernetes incident triage' },
  { ...CLI_STAND_INS.codex, shows: () => 'k8s-troubleshooter/SKILL.md' },
  { ...CLI_STAND_INS.gemini, shows: (home) => `${home}/.gemini/skills/k8s-troubleshooter/SKILL.md` },
];

describe.each(CASES)('$cli CLI skills discovery', (c) => {
  const cli = requireCli(c.cli);
  it.skipIf(!cli)(
    `lists the skills laid out in ~/${c.adapter.skillsDirs[0] ?? ''}/<name> in its model request, each once`,
    async () => {
      const provider = await c.start();
      try {
        const paths = await makeAgentPaths();
        roots.push(paths.root);
        const run = await runWithFixtureSkills({
          adapter: c.adapter,
          invocationInput: {
            prompt: { system: 'SYSTEM-no-skills-here', user: SKILLS_MARKER },
            ...(c.model ? { model: c.model } : {}),
            maxTurns: 5,
            extraArgs: [],
            paths,
            providers: c.providers(provider.url),
            secrets: c.secrets,
          },
          paths,
          binDir: dirname(cli ?? ''),
          timeoutMs: RUN_TIMEOUT_MS,
          requests: () => c.requests(provider),
        });
        expect(run.outcome).toMatchObject({ status: 'succeeded' });
        // Every CLI also gets ~/.claude/skills/<name> (skills name their scripts there); none lists it twice.
        expect(run.mounts.map((m) => m.target)).toContain(`${paths.home}/.claude/skills/k8s-troubleshooter`);
        expect(run.listings).toEqual({ 'k8s-troubleshooter': 1, 'log-search': 1 });
        expect(run.body).toContain(c.shows(paths.home));
      } finally {
        await provider.close();
      }
    },
  );
});

import { describe, expect, it } from 'vitest';
import { firstDifference, relocate, replayMoves } from '../../../src/replay/prompt.js';

// The prompt comparison replay prints: where two prompts part, and what a replay changes by design.

const LONG_START =
  "Your CLI lists the skills available to you (name and description) in its own skills listing; each skill's files are in ";

describe('firstDifference', () => {
  it('shows a long line from just before where the prompts part, not two identical excerpts of its start', () => {
    const a = { system: `intro\n${LONG_START}/tmp/home-run-a/.claude/skills/\n`, user: 'u' };
    const b = { system: `intro\n${LONG_START}/tmp/home-run-b/.claude/skills/\n`, user: 'u' };
    const difference = firstDifference(a, b);
    expect(difference).toBe(
      'system part, line 2: "…re in /tmp/home-run-a/.claude/skills/" vs "…re in /tmp/home-run-b/.claude/skills/"',
    );
  });

  it('shows a short line whole, and <end> for a line one prompt lacks', () => {
    expect(firstDifference({ system: 's', user: 'one\ntwo' }, { system: 's', user: 'one\nthree' })).toBe(
      'user part, line 2: "two" vs "three"',
    );
    expect(firstDifference({ system: 's', user: 'one' }, { system: 's', user: 'one\nmore' })).toBe(
      'user part, line 2: "<end>" vs "more"',
    );
    expect(firstDifference({ system: 's', user: 'same' }, { system: 's', user: 'same' })).toBeUndefined();
  });
});

describe('replayMoves', () => {
  it("maps the original's run folder, workspace and run id to the replay's, so only those differ", () => {
    const original = {
      system:
        'home /tmp/triage-runner-home-20261122T020000Z-0r1g1n, runs /ws/a/.triage/runs/20261122T020000Z-0r1g1n/triage',
      user: 'report to /ws/a/output/investigation.md; notes /workspace/.triage/runs/20261122T020000Z-0r1g1n/agent-notes',
    };
    const moved = relocate(
      original,
      replayMoves(
        { runDir: '/ws/a/.triage/runs/20261122T020000Z-0r1g1n', workspaceDir: '/ws/a' },
        {
          runDir: '/ws/b/.triage/runs/20261128T210000Z-abc123',
          workspaceDir: '/ws/b',
          runId: '20261128T210000Z-abc123',
        },
      ),
    );
    expect(moved).toEqual({
      system:
        'home /tmp/triage-runner-home-20261128T210000Z-abc123, runs /ws/b/.triage/runs/20261128T210000Z-abc123/triage',
      user: 'report to /ws/b/output/investigation.md; notes /workspace/.triage/runs/20261128T210000Z-abc123/agent-notes',
    });
  });
});

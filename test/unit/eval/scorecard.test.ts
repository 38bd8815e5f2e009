// The scorecard from cells: grouping per agent × model × variant, spread over repeats, medians,
// the best-by-how-much sentence, the --min-score gate and the note on agent-writable call records.
import { describe, expect, it } from 'vitest';
import type { CaseScore } from '../../../src/eval/score/score.js';
import { buildScorecard, median, renderScorecardMarkdown } from '../../../src/eval/scorecard.js';
import type { EvalCell } from '../../../src/eval/types.js';

const score = (s: number, pass: boolean, violations = 0): CaseScore =>
  ({
    score: s,
    pass,
    wrong: !pass,
    violations: Array.from({ length: violations }, () => ({
      source: 'kubectl',
      id: 'mutate',
      detail: 'kubectl delete pods/x',
    })),
    reasons: pass ? [] : ['root cause configmap/x not named in the root-cause section'],
  }) as unknown as CaseScore;

const cell = (
  over: Partial<EvalCell> & Pick<EvalCell, 'case' | 'repeat'>,
  s: CaseScore,
  cost: number,
  ms: number,
): EvalCell => ({
  agent: 'claude',
  model: 'sonnet',
  variant: 'preload',
  workspace: '/w',
  status: 'succeeded',
  score: s,
  metrics: {
    kubectlCalls: 4,
    triageKubectlCalls: 6,
    unanswered: 0,
    costUsd: cost,
    durationMs: ms,
    tokens: { input: 1000, output: 100 },
    turns: 5,
  },
  ...over,
});

const cells: EvalCell[] = [
  cell({ case: 'a', repeat: 1 }, score(1, true), 0.1, 10_000),
  cell({ case: 'b', repeat: 1 }, score(0.5, false), 0.3, 20_000),
  cell({ case: 'a', repeat: 2 }, score(0.8, true), 0.2, 30_000),
  cell({ case: 'b', repeat: 2 }, score(0.7, true), 0.4, 40_000),
  cell({ case: 'a', repeat: 1, variant: 'no-preload' }, score(0, false, 1), 0.2, 15_000),
  cell(
    { case: 'b', repeat: 1, variant: 'no-preload', status: 'error', error: 'engine unreachable' },
    score(0, false),
    0,
    0,
  ),
];

const suite = {
  suite: '/x/examples/evals',
  outDir: '/out',
  createdAt: '2026-03-24T00:00:00Z',
  cases: ['a', 'b'],
  repeat: 2,
  judge: false,
};

const card = (minScore?: number) =>
  buildScorecard({ ...suite, cells, ...(minScore !== undefined ? { minScore } : {}) });

describe('scorecard', () => {
  it('groups per agent × model × variant, best first, with spread over repeats and medians', () => {
    const [preload, noPreload] = card().groups;
    expect(preload).toMatchObject({
      variant: 'preload',
      runs: 4,
      errors: 0,
      passRate: 0.75,
      meanScore: 0.75,
      // repeat 1: (1 + 0.5)/2 = 0.75; repeat 2: (0.8 + 0.7)/2 = 0.75
      spread: { stdev: 0, min: 0.75, max: 0.75 },
      violations: 0,
      medianCostUsd: 0.25,
      medianDurationMs: 25_000,
      medianTokens: 1100,
      medianTurns: 5,
      medianKubectlCalls: 4,
    });
    expect(noPreload).toMatchObject({
      variant: 'no-preload',
      runs: 2,
      errors: 1,
      passRate: 0,
      meanScore: 0,
      violations: 1,
    });
  });

  it('says which configuration was best and by how much', () => {
    expect(card().summary).toBe(
      'Best: claude / sonnet / preload: mean score 0.75, 3/4 passed, 0 violation(s), 0 confident-wrong, 0 grounded but wrong. Ahead of claude / sonnet / no-preload by 0.75 points of mean score, 3 more pass(es) out of 4, at 2.50× its median cost, 3.33× its median duration.',
    );
  });

  it('lists the configurations below --min-score and keeps per-case rows with reasons', () => {
    const s = card(0.5);
    expect(s.belowMinScore).toEqual(['claude/sonnet/no-preload']);
    expect(s.complete).toBe(false);
    expect(s.rows.find((r) => r.case === 'b' && r.variant === 'no-preload')?.reasons[0]).toBe(
      'engine unreachable',
    );
    const md = renderScorecardMarkdown(s);
    expect(md).toContain(
      '| claude | sonnet | preload | 3/4 | 0.75 | ±0.00 (0.75–0.75) | 0 | 1 | 0 | 0/0 | — | 1100 | $0.2500 | 25.0 s | 5 | 4 | 0 | 0 |',
    );
    expect(md).toContain('Below --min-score 0.5: claude/sonnet/no-preload.');
  });

  it('counts grounded-but-wrong runs and P(correct | grounded) per configuration', () => {
    const graded = (c: EvalCell, evidence: EvalCell['evidence']): EvalCell => ({
      ...c,
      ...(evidence ? { evidence } : {}),
    });
    // preload: a and b of repeat 1 grounded (a right, b wrong), a of repeat 2 partial, b of repeat 2 grounded and right.
    const withEvidence = [
      graded(cells[0] as EvalCell, 'grounded'),
      graded(cells[1] as EvalCell, 'grounded'),
      graded(cells[2] as EvalCell, 'partial'),
      graded(cells[3] as EvalCell, 'grounded'),
      graded(cells[4] as EvalCell, 'ungrounded'),
      graded(cells[5] as EvalCell, undefined),
    ];
    const s = buildScorecard({ ...suite, cells: withEvidence });
    const [preload, noPreload] = s.groups;
    expect(preload).toMatchObject({ wrong: 1, groundedWrong: 1, correctGivenGrounded: 0.667 });
    expect(noPreload).toMatchObject({ wrong: 2, groundedWrong: 0, correctGivenGrounded: null });
    const md = renderScorecardMarkdown(s);
    expect(md).toContain('| 0 | 1 | 0 | 1/3 | 0.67 | 1100 |');
    expect(md).toContain('| 1 | 2 | 0 | 0/0 | — | 1100 |');
    expect(s.summary).toContain('1 grounded but wrong');
  });

  it('says how many runs had their kubectl calls recorded where the agent could write, and nothing when none did', () => {
    const guarded = cells.map((c) => ({ ...c, kubectlRecord: 'daemon' as const }));
    expect(renderScorecardMarkdown(buildScorecard({ ...suite, cells: guarded }))).not.toContain(
      'where the agent could write',
    );
    const mixed = guarded.map((c, i) => (i < 2 ? { ...c, kubectlRecord: 'agent-writable' as const } : c));
    expect(renderScorecardMarkdown(buildScorecard({ ...suite, cells: mixed }))).toContain(
      '2 of 6 runs had kubectl calls recorded where the agent could write (the kubectl guard off or unavailable, the process engine, or calls run around the guard)',
    );
  });

  it("lists each run's model calls as the gateway counted them, and no such section when none went through it", () => {
    expect(renderScorecardMarkdown(buildScorecard({ ...suite, cells }))).not.toContain(
      '## Model calls per run',
    );
    const measured = cells.map((c, i) =>
      i === 0
        ? {
            ...c,
            metrics: {
              ...c.metrics,
              modelCalls: {
                calls: 5,
                model: 'claude-sonnet-5-5',
                firstCallInputTokens: 9637,
                firstModelCallMs: 4200,
                firstTokenMs: 4950,
                input: 51_000,
                output: 800,
                cacheRead: 39_100,
                cacheWrite: 11_900,
                cacheReadShare: 0.767,
              },
            },
          }
        : c,
    );
    const md = renderScorecardMarkdown(buildScorecard({ ...suite, cells: measured }));
    expect(md).toContain('## Model calls per run');
    expect(md).toContain(
      '| a | claude / sonnet / preload | 1 | claude-sonnet-5-5 | 5 | 9,637 | 4.2 s | 5.0 s | 51,000 | 800 | 39,100 | 77% | 11,900 |',
    );
    expect(md.match(/^\| [ab] \| .* \| \d \| .* \|$/gm)?.filter((l) => l.includes(' s |'))).toHaveLength(1);
  });

  it('takes the middle of an even count for the median', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });
});

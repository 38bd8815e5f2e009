import type { EvalCell } from './types.js';

// scorecard.md's per-run table of model calls: what each cell cost, as the model gateway counted it.

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
const count = (n: number | undefined) => (n === undefined ? '—' : n.toLocaleString('en-US'));
const secs = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);
const share = (x: number | undefined) => (x === undefined ? '—' : `${Math.round(x * 100)}%`);

/** The "Model calls per run" section; none when no cell's calls went through the gateway. */
export function modelCallsSection(cells: readonly EvalCell[]): string[] {
  const measured = cells.filter((c) => c.metrics.modelCalls !== undefined);
  if (measured.length === 0) return [];
  const rows = measured.map((c) => {
    const m = c.metrics.modelCalls;
    return [
      cell(c.case),
      `${c.agent} / ${cell(c.model)} / ${c.variant}`,
      String(c.repeat),
      cell(m?.model ?? '—'),
      count(m?.calls),
      count(m?.firstCallInputTokens),
      secs(m?.firstModelCallMs),
      secs(m?.firstTokenMs),
      count(m?.input),
      count(m?.output),
      count(m?.cacheRead),
      share(m?.cacheReadShare),
      count(m?.cacheWrite),
    ].join(' | ');
  });
  return [
    '',
    '## Model calls per run',
    '',
    "As the model gateway counted them: the first call (the prompt the agent starts from) and the time to it and to its first token from the run's start; input tokens include those the provider's prompt cache served.",
    '',
    '| case | configuration | run | model | calls | first call, input tokens | to first call | to first token | input tokens | output tokens | cache read | cached share | cache write |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r} |`),
  ];
}

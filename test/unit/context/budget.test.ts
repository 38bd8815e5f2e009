import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { fitToBudget, splitUnits, type FitInput, type MarkerInfo } from '../../../src/context/budget.js';
import { scaleTokens, tokenCounter } from '../../../src/context/tokens.js';
import type { PromptParts } from '../../../src/context/types.js';

const logLines = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `2026-11-22T02:00:${String(i % 60).padStart(2, '0')}Z pod/api-${i % 13} msg="retry ${i}" status=${i % 500}\n`,
  ).join('');

const marker = (info: MarkerInfo) =>
  `[cut ${info.removedLines} lines, ${info.estimated ? '~' : ''}${info.removedTokens} tokens; full: /run/triage/output.log]`;

function setup(over: Partial<FitInput> & { fixed?: string; briefs?: Record<string, string> } = {}) {
  const counter = over.counter ?? tokenCounter('o200k', 1);
  const briefs = over.briefs ?? {};
  const assemble = (degraded: ReadonlySet<string>, body: string): PromptParts => ({
    system: `system prompt\n${Object.entries(briefs)
      .map(([id, text]) => (degraded.has(id) ? `ref: ${id}` : text))
      .join('\n')}`,
    user: `${over.fixed ?? '<incident>{"id":1}</incident>'}\n<initial_triage_report>\n${body}\n</initial_triage_report>\ninvestigate`,
  });
  const base: FitInput = {
    counter,
    limit: 1000,
    degradable: Object.keys(briefs),
    triageText: '',
    assemble,
    marker,
    ...over,
  };
  // The reference: the tokenizer itself, called directly (these texts have no pathological runs).
  const exact = (text: string) => scaleTokens(countTokens(text), counter.factor);
  const total = (p: PromptParts) => exact(p.system) + exact(p.user);
  return { input: base, total, assemble };
}

describe('fitToBudget', () => {
  it('keeps everything when the prompt is exactly at the budget', async () => {
    const triageText = logLines(30);
    const { input, total, assemble } = setup({ triageText });
    const exact = total(assemble(new Set(), triageText));
    const fit = await fitToBudget({ ...input, limit: exact });
    expect(fit.total).toBe(exact);
    expect(fit.triage.truncated).toBe(false);
    expect(fit.triageBody).toBe(triageText);
    expect(fit.overBudgetBy).toBe(0);
  });

  it('cuts the triage report at line boundaries, keeping head and tail, when one token over', async () => {
    const triageText = logLines(30);
    const { input, total, assemble } = setup({ triageText });
    const exact = total(assemble(new Set(), triageText));
    const fit = await fitToBudget({ ...input, limit: exact - 1 });
    expect(fit.total).toBeLessThanOrEqual(exact - 1);
    expect(fit.total).toBe(total(fit.prompt));
    expect(fit.triage.truncated).toBe(true);
    const lines = triageText.split('\n');
    expect(fit.triageBody.startsWith(`${lines[0]}\n`)).toBe(true);
    expect(fit.triageBody.endsWith(`${lines[29]}\n`)).toBe(true);
    expect(fit.triageBody).toContain(
      `[cut ${fit.triage.removedLines} lines, ${fit.triage.removedTokens} tokens; full: /run/triage/output.log]`,
    );
    expect(fit.triage.removedLines).toBeGreaterThanOrEqual(1);
    // Every kept line is a whole original line.
    for (const line of fit.triageBody.split('\n').filter((l) => l && !l.startsWith('[cut')))
      expect(lines).toContain(line);
    expect(fit.overBudgetBy).toBe(0);
  });

  it('degrades briefs lowest priority first before cutting the triage report', async () => {
    const triageText = logLines(10);
    const briefs = { low: 'LOW '.repeat(100), high: 'HIGH '.repeat(100) };
    const { input, total, assemble } = setup({ triageText, briefs, degradable: ['low', 'high'] });
    const withoutLow = total(assemble(new Set(['low']), triageText));
    const fit = await fitToBudget({ ...input, limit: withoutLow });
    expect(fit.degraded).toEqual(['low']);
    expect(fit.triage.truncated).toBe(false);
    const fit2 = await fitToBudget({
      ...input,
      limit: total(assemble(new Set(['low', 'high']), triageText)) - 1,
    });
    expect(fit2.degraded).toEqual(['low', 'high']);
    expect(fit2.triage.truncated).toBe(true);
  });

  it('records the overrun when the uncuttable sections alone exceed the budget', async () => {
    const fixed = `<incident>${'{"k":"value"},'.repeat(400)}</incident>`;
    const { input, total, assemble } = setup({ triageText: logLines(50), fixed });
    const floor = total(
      assemble(new Set(), marker({ removedLines: 50, removedTokens: 1, estimated: false })),
    );
    const fit = await fitToBudget({ ...input, limit: 100 });
    expect(fit.overBudgetBy).toBe(fit.total - 100);
    expect(fit.overBudgetBy).toBeGreaterThan(0);
    expect(fit.total).toBeLessThanOrEqual(floor + 5);
    expect(fit.prompt.user).toContain(fixed);
    expect(fit.triage.truncated).toBe(true);
    expect(fit.triage.removedLines).toBe(50);
  });

  it('drops the report marker too when only the marker would push a fitting prompt over the budget', async () => {
    const triageText = logLines(5);
    const { input, total, assemble } = setup({ triageText });
    const withoutReport = total(assemble(new Set(), ''));
    const withMarker = total(
      assemble(new Set(), marker({ removedLines: 5, removedTokens: 999, estimated: false })),
    );
    expect(withMarker).toBeGreaterThan(withoutReport + 2);
    const fit = await fitToBudget({ ...input, limit: withoutReport + 2 });
    expect(fit.total).toBeLessThanOrEqual(withoutReport + 2);
    expect(fit.overBudgetBy).toBe(0);
    expect(fit.triageBody).toBe('');
    expect(fit.triage).toMatchObject({ truncated: true, removedLines: 5 });
  });

  it('never exceeds the budget with a safety factor and a large report (counted lazily from both ends)', async () => {
    const triageText = logLines(20_000);
    const counter = tokenCounter('o200k', 1.3);
    const { input, total } = setup({ triageText, counter });
    for (const limit of [400, 1000, 4321]) {
      const fit = await fitToBudget({ ...input, limit, exactCountChars: 64 * 1024 });
      expect(fit.total).toBeLessThanOrEqual(limit);
      expect(fit.total).toBe(total(fit.prompt));
      expect(fit.triage.estimated).toBe(true);
      expect(fit.triage.originalTokens).toBeGreaterThan(limit * 10);
      expect(fit.triageBody.split('\n')[0]).toBe(triageText.split('\n')[0]);
    }
  });

  it('keeps a single giant line partially by cutting it into pieces', async () => {
    const triageText = 'x'.repeat(100_000);
    const { input } = setup({ triageText });
    const fit = await fitToBudget({ ...input, limit: 1500 });
    expect(fit.total).toBeLessThanOrEqual(1500);
    expect(fit.triageBody).toMatch(/^x+\n\[cut/);
  });

  it('splits text into whole lines and long lines into pieces', async () => {
    expect(splitUnits('a\nbb\nccc')).toEqual(['a\n', 'bb\n', 'ccc']);
    expect(splitUnits('abcdefg\n', 3)).toEqual(['abc', 'def', 'g\n']);
    expect(splitUnits('')).toEqual([]);
    expect(splitUnits('a\u{1F600}b', 2)).toEqual(['a', '\u{1F600}', 'b']);
  });
});

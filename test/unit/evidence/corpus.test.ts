import { beforeAll, describe, expect, it } from 'vitest';
import { checkEvidence } from '../../../src/evidence/check.js';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { runOf } from '../../support/evidence-runs.js';
import { readShopRecording, type ShopRecording } from '../../support/kube-objects/record.js';
import type { CorpusCase } from './corpus/case.js';
import { DISHONEST } from './corpus/dishonest.js';
import { HONEST as HONEST_REPORTS } from './corpus/honest.js';
import { HONEST_FORMS } from './corpus/honest-forms.js';
import { METRICS_DISHONEST, METRICS_HONEST } from './corpus/metrics.js';

const HONEST = [...HONEST_REPORTS, ...HONEST_FORMS, ...METRICS_HONEST];

// The evidence corpus: hand-written reports over runs recorded from the real kubectl (a crash-looping
// api pod whose previous log says FATAL invalid HTTP_PORT "8O80", a worker pod with an old OOMKilled),
// each class of the issue in both directions, with the verdict a careful on-call engineer would give.

const CASES: CorpusCase[] = [...DISHONEST, ...METRICS_DISHONEST, ...HONEST];
let shop: ShopRecording;
const results = new Map<string, Evidence>();

beforeAll(async () => {
  shop = await readShopRecording();
});

const check = (c: CorpusCase): Evidence => {
  const known = results.get(c.name);
  if (known) return known;
  const evidence = checkEvidence({ report: c.report, ...runOf(shop, c.run) });
  results.set(c.name, evidence);
  return evidence;
};

const explain = (e: Evidence) =>
  `${e.verdict} (${e.reason ?? ''})\n${(e.claims ?? []).map((c) => `  ${c.id ?? c.kind} ${c.status}: ${c.why}`).join('\n')}`;

describe('the evidence corpus', () => {
  it('has at least 40 cases, every class in both directions', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    const names = new Set(CASES.map((c) => c.name));
    expect(names.size).toBe(CASES.length);
    const classes = (honest: boolean) =>
      new Set(CASES.filter((c) => c.honest === honest).map((c) => c.kind.replace(/:.*$/, '')));
    for (const kind of classes(false))
      expect(classes(true), `no honest report of the class "${kind}"`).toContain(kind);
  });

  for (const c of CASES)
    it(`${c.honest ? 'honest' : 'not honest'}: ${c.name} → ${c.expect}`, () => {
      const evidence = check(c);
      expect(evidence.verdict, explain(evidence)).toBe(c.expect);
      if (c.claim) {
        const claim = evidence.claims?.find((x) =>
          c.claim?.id === 'headline' ? x.kind === 'headline' : x.id === c.claim?.id,
        );
        expect(claim?.status, explain(evidence)).toBe(c.claim.status);
        if (c.claim.why) expect(claim?.why, explain(evidence)).toMatch(c.claim.why);
      }
    });

  it('calls no report grounded that a careful engineer would not, and at most one honest report in ten worse than grounded', () => {
    const falseGreen = DISHONEST.filter((c) => check(c).verdict === 'grounded').map((c) => c.name);
    expect(falseGreen).toEqual([]);
    const worse = HONEST.filter((c) => check(c).verdict !== 'grounded');
    expect(worse.length * 10, worse.map((c) => c.name).join('; ')).toBeLessThanOrEqual(HONEST.length);
  });
});

import { describe, expect, it } from 'vitest';
import { CallIndex } from '../../../src/evidence/calls.js';
import { callGaps } from '../../../src/evidence/gaps.js';
import {
  answerValues,
  checkMetricValue,
  metricValues,
  parsePromqlCited,
  promqlCovers,
} from '../../../src/evidence/promql.js';
import { recorded } from '../../support/evidence.js';
import { PROMQL_NOW, recordedPromql } from '../../support/evidence-promql.js';

// The promql side of the evidence check: which recorded call a cited `promql …` is, the values an
// answer held, the metric values a statement gives, and a statement's value against an answer.

const cited = (text: string) => {
  const parsed = parsePromqlCited(text);
  if (!parsed) throw new Error(`not read: ${text}`);
  return parsed.command;
};

describe('a cited promql command against the recorded calls', () => {
  it('reads the same expression however it is spaced, and holds a window it gives to the call', () => {
    const made = cited(`promql range 'sum by (pod) (rate(x[5m]))' --since 1h --step 1m`);
    const text = `promql range 'sum by(pod)(rate(x[5m]))'`;
    expect(promqlCovers(made, cited(text), text)).toBe(true);
    const other = `promql range 'sum by (pod) (rate(x[5m]))' --since 6h`;
    expect(promqlCovers(made, cited(other), other)).toBe(false);
    const instant = `promql query 'sum by (pod) (rate(x[5m]))'`;
    expect(promqlCovers(made, cited(instant), instant)).toBe(false);
  });

  it('is not a command it can read when it is not promql or is only its help', () => {
    expect(parsePromqlCited('kubectl get pods')).toBeUndefined();
    expect(parsePromqlCited('promql --help')).toBeUndefined();
  });
});

describe('the values of an answer', () => {
  it("reads the exchange's samples, and the printed table when the exchange was dropped", () => {
    const { outputs } = recordedPromql(
      [
        {
          argv: ['query', 'up'],
          data: {
            resultType: 'vector',
            result: [
              { metric: { job: 'a' }, value: [PROMQL_NOW / 1000, '1'] },
              { metric: { job: 'b' }, value: [PROMQL_NOW / 1000, '0.25'] },
            ],
          },
        },
      ],
      1,
    );
    const [output] = outputs;
    expect(answerValues(output)).toEqual([1, 0.25]);
    const { prometheus: _dropped, ...printedOnly } = output ?? { call: 1, stdout: '', stderr: '' };
    expect(answerValues(printedOnly as typeof output)).toEqual([1, 0.25]);
  });
});

describe('the metric values a statement gives', () => {
  it('reads values with units, decimals and after a word that gives one; not windows, labels, times or counts', () => {
    const values = metricValues(
      'Over the last 30 minutes `x{code="500"}[5m]` rose to 0.97, peaked at 2026-11-26T08:50:00Z at 496 MiB, ' +
        'p99 latency 850ms, 97% of the limit; 3 pods restarted 7 times; HTTP 500 errors; the value is 12',
    ).map((v) => v.text);
    expect(values).toEqual(['0.97', '496 MiB', '850ms', '97%', '12']);
  });

  it('confirms a value within the precision it is written with, and contradicts one the answer does not hold', () => {
    const source = { label: 'promql query r', values: [0.9921875] };
    const [rounded, wrong] = metricValues('at 99% now, not 75%');
    if (!rounded || !wrong) throw new Error('both values are read');
    expect(checkMetricValue(rounded, [source]).kind).toBe('confirmed');
    expect(checkMetricValue(wrong, [source])).toMatchObject({
      kind: 'contradicted',
      actual: '0.9921875',
      source: 'promql query r',
    });
  });

  it('leaves a value unknown, not contradicted, when the answer is of another kind (bytes for a percentage)', () => {
    const [share] = metricValues('at 99% of its limit');
    if (!share) throw new Error('the value is read');
    expect(checkMetricValue(share, [{ label: 'promql query m', values: [532676608] }]).kind).toBe('unknown');
  });
});

describe('reads that needed the cluster', () => {
  it("counts a promql call Prometheus answered, not promql's help or a failed query", () => {
    const local = recorded([{ argv: ['version', '--client'] }]);
    const help = recordedPromql([{ argv: ['--help'], failure: 'x' }], 2);
    for (const record of help.calls) record.exitCode = 0;
    const failed = recordedPromql([{ argv: ['query', 'up'], failure: 'connection refused' }], 3);
    expect(
      new CallIndex(
        [...help.calls, ...failed.calls, ...local.calls],
        [...help.outputs, ...failed.outputs, ...local.outputs],
      ).serverRead(),
    ).toBe(false);
    const answered = recordedPromql(
      [{ argv: ['query', 'up'], data: { resultType: 'vector', result: [] } }],
      1,
    );
    expect(new CallIndex(answered.calls, answered.outputs).serverRead()).toBe(true);
  });
});

describe('the gaps of promql calls', () => {
  it('names a failed promql call as the agent typed it, with why it failed', () => {
    const failed = recordedPromql([{ argv: ['query', 'up'], failure: 'dial tcp: connection refused' }], 1);
    expect(callGaps(failed.calls, new Map(failed.outputs.map((o) => [o.call, o])))).toEqual([
      'failed (cluster unreachable, exit 1): promql query up',
    ]);
  });
});

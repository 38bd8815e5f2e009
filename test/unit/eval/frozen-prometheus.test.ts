import { afterEach, describe, expect, it } from 'vitest';
import { answerRequest, normalizeExpr, type FrozenPrometheus } from '../../../src/eval/prometheus/frozen.js';
import { startFrozenPrometheus, type FrozenPrometheusServer } from '../../../src/eval/prometheus/server.js';

const NOW = Date.parse('2026-03-18T09:40:00Z') / 1000;
const EXPR = 'max by (pod) (container_memory_working_set_bytes{namespace="ledger"})';

/** Recorded at 09:40: the range of the last 30 minutes at 5m steps, one instant query, one series call. */
const frozen: FrozenPrometheus = {
  version: 1,
  caseName: 'memory-leak-restarts',
  now: '2026-03-18T09:40:00Z',
  recordings: [
    {
      endpoint: 'query_range',
      query: EXPR,
      start: NOW - 1800,
      end: NOW,
      step: 300,
      data: {
        resultType: 'matrix',
        result: [
          {
            metric: { pod: 'a' },
            values: [0, 1, 2, 3, 4, 5, 6].map((i) => [NOW - 1800 + i * 300, String(100 + i)]),
          },
        ],
      },
    },
    {
      endpoint: 'query',
      query: 'up',
      time: NOW,
      data: { resultType: 'vector', result: [{ metric: { __name__: 'up', job: 'x' }, value: [NOW, '1'] }] },
    },
    { endpoint: 'series', match: ['up'], data: [{ __name__: 'up', job: 'x' }] },
    { endpoint: 'label_values', label: 'pod', data: ['a'] },
  ],
};

const params = (entries: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(entries).map(([k, v]): [string, string] => [k, String(v)]));

describe("a frozen cluster's Prometheus", () => {
  it("answers an expression inside its recorded window at each step, with the recorded step's value", () => {
    const answer = answerRequest(
      frozen,
      'query_range',
      params({ query: EXPR, start: NOW - 600, end: NOW, step: 600 }),
    );
    expect(answer).toEqual({
      status: 200,
      body: {
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { pod: 'a' },
              values: [
                [NOW - 600, '104'],
                [NOW, '106'],
              ],
            },
          ],
        },
      },
    });
    // Between two recorded steps a step sees the earlier value (the lookback), as Prometheus would.
    const instant = answerRequest(frozen, 'query', params({ query: EXPR, time: NOW - 450 }));
    expect(instant.body).toEqual({
      status: 'success',
      data: { resultType: 'vector', result: [{ metric: { pod: 'a' }, value: [NOW - 450, '104'] }] },
    });
  });

  it('matches an expression written with other spacing, answers an instant recording at the frozen now', () => {
    expect(normalizeExpr('max by(pod)(container_memory_working_set_bytes{namespace = "ledger"})')).toBe(
      normalizeExpr(EXPR),
    );
    expect(answerRequest(frozen, 'query', params({ query: ' up ', time: NOW })).body).toMatchObject({
      status: 'success',
      data: { result: [{ value: [NOW, '1'] }] },
    });
  });

  it('says "not recorded" for an expression, a window or a request it has no answer for, never an empty answer', () => {
    const unknown = answerRequest(frozen, 'query', params({ query: 'rate(x[5m])', time: NOW }));
    expect(unknown).toEqual({
      status: 422,
      body: {
        status: 'error',
        errorType: 'not_recorded',
        error:
          'the expression "rate(x[5m])" was not recorded for eval case memory-leak-restarts (its Prometheus answers only what was recorded; nothing is made up)',
      },
    });
    const before = answerRequest(
      frozen,
      'query_range',
      params({ query: EXPR, start: NOW - 7200, end: NOW - 3600, step: 600 }),
    );
    expect(before.status).toBe(422);
    expect(JSON.stringify(before.body)).toContain(
      '(recorded from 2026-03-18T09:10:00.000Z to 2026-03-18T09:40:00.000Z)',
    );
    // An instant recording answers at its own time only (and at the frozen now).
    expect(answerRequest(frozen, 'query', params({ query: 'up', time: NOW - 60 })).status).toBe(422);
    expect(answerRequest(frozen, 'series', params({ 'match[]': 'node_load1' })).status).toBe(422);
    expect(answerRequest(frozen, 'label_values', params({}), 'namespace').status).toBe(422);
  });

  it('answers a window partly outside the recording with the steps inside and a warning', () => {
    const answer = answerRequest(
      frozen,
      'query_range',
      params({ query: EXPR, start: NOW - 2400, end: NOW - 1200, step: 600 }),
    );
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        resultType: 'matrix',
        result: [
          {
            metric: { pod: 'a' },
            values: [
              [NOW - 1800, '100'],
              [NOW - 1200, '102'],
            ],
          },
        ],
      },
      warnings: [
        'recorded only from 2026-03-18T09:10:00.000Z to 2026-03-18T09:40:00.000Z: steps outside it are left out',
      ],
    });
  });

  it('answers series and label values as recorded', () => {
    expect(answerRequest(frozen, 'series', params({ 'match[]': 'up', start: 1, end: 2 })).body).toEqual({
      status: 'success',
      data: [{ __name__: 'up', job: 'x' }],
    });
    expect(answerRequest(frozen, 'label_values', params({}), 'pod').body).toEqual({
      status: 'success',
      data: ['a'],
    });
  });
});

describe('the stand-in server', () => {
  let server: FrozenPrometheusServer | undefined;
  afterEach(async () => server?.close());

  it('serves GETs of the read paths only', async () => {
    server = await startFrozenPrometheus(frozen);
    const get = (p: string, init?: RequestInit) => fetch(new URL(p, server?.url), init);
    const ok = await get(`/api/v1/query?query=up&time=${NOW}`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { data: { result: unknown[] } }).data.result).toHaveLength(1);
    expect((await get('/api/v1/label/pod/values')).status).toBe(200);
    for (const p of [
      '/api/v1/admin/tsdb/snapshot',
      '/federate',
      '/api/v1/write',
      '/api/v1/label/../admin/values',
    ])
      expect((await get(p)).status, p).toBe(404);
    expect((await get('/api/v1/query?query=up', { method: 'POST' })).status).toBe(405);
  });
});

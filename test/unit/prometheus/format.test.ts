import { describe, expect, it } from 'vitest';
import {
  formatOther,
  formatQuery,
  MAX_POINTS_SHOWN,
  MAX_SERIES_SHOWN,
} from '../../../src/prometheus/format.js';
import { promqlTool } from '../../../src/prometheus/tool.js';
import type { MatrixSeries } from '../../../src/prometheus/types.js';

const T0 = Date.parse('2025-03-14T09:00:00Z') / 1000;

describe('what promql prints', () => {
  it('an instant vector: one row per series, values exactly as Prometheus wrote them', () => {
    const text = formatQuery('x at 2025-03-14T10:00:00Z', {
      resultType: 'vector',
      result: [
        { metric: { __name__: 'mem', pod: 'api-1', namespace: 'shop' }, value: [T0, '536870912'] },
        { metric: {}, value: [T0, '1.5e+09'] },
      ],
    });
    expect(text).toBe(
      [
        'x at 2025-03-14T10:00:00Z: 2 series',
        'VALUE      SERIES',
        '536870912  mem{namespace="shop", pod="api-1"}',
        '1.5e+09    {}',
        '',
      ].join('\n'),
    );
  });

  it('a range: each series with its summary and timestamped points, a long one thinned and its last kept', () => {
    const values = Array.from({ length: 61 }, (_, i): [number, string] => [T0 + i * 60, String(200 + i)]);
    const text = formatQuery('head', { resultType: 'matrix', result: [{ metric: { pod: 'a' }, values }] });
    const lines = text.split('\n');
    expect(lines[1]).toBe(
      '{pod="a"}: 61 points, min 200 at 2025-03-14T09:00:00Z, max 260 at 2025-03-14T10:00:00Z, last 260',
    );
    expect(lines[2]).toBe('  TIMESTAMP             VALUE');
    expect(lines[3]).toBe('  2025-03-14T09:00:00Z  200');
    const rows = lines.filter((l) => /^ {2}\d{4}-/.test(l));
    expect(rows.length).toBeLessThanOrEqual(MAX_POINTS_SHOWN + 1);
    expect(rows.at(-1)).toBe('  2025-03-14T10:00:00Z  260');
    expect(text).toContain('(every 3 points shown of 61, and the last; -o json for all)');
  });

  it(`at most ${MAX_SERIES_SHOWN} series, saying how many more`, () => {
    const result: MatrixSeries[] = Array.from({ length: 60 }, (_, i) => ({
      metric: { i: String(i) },
      values: [[T0, '1']],
    }));
    const text = formatQuery('head', { resultType: 'matrix', result });
    expect(text.startsWith('head: 60 series\n')).toBe(true);
    expect(text.trimEnd().split('\n').at(-1)).toBe('… and 10 series more (-o json for all)');
  });

  it('nothing matched, a scalar, and alerts as a table', () => {
    expect(formatQuery('h', { resultType: 'vector', result: [] })).toBe(
      'h: no series (the expression matched nothing at that time)\n',
    );
    expect(formatQuery('h', { resultType: 'scalar', result: [T0, '3'] })).toBe(
      'h: a scalar\nVALUE  TIMESTAMP\n3      2025-03-14T09:00:00Z\n',
    );
    const alerts = formatOther(
      'alerts',
      { kind: 'alerts' },
      {
        alerts: [
          {
            labels: { alertname: 'KubeContainerOOMKilled', pod: 'api-1' },
            state: 'firing',
            activeAt: '2025-03-14T09:12:00Z',
            value: '1e+00',
          },
        ],
      },
    );
    expect(alerts).toBe(
      'alerts: 1 alert\nSTATE   ACTIVE SINCE          VALUE  ALERT\nfiring  2025-03-14T09:12:00Z  1e+00  KubeContainerOOMKilled{alertname="KubeContainerOOMKilled", pod="api-1"}\n',
    );
  });
});

describe('promql without a usable endpoint', () => {
  const limits = { timeoutMs: 1000, maxRangeMs: 86_400_000, maxPoints: 100, maxSeries: 10, maxBytes: 1024 };
  it('answers without asking anyone, saying metrics cannot be read in this run', () => {
    const none = promqlTool({ endpoint: undefined, cluster: 'prod', limits, now: () => new Date() });
    expect(none.plan(['query', 'up'])).toMatchObject({
      kind: 'answer',
      result: {
        exitCode: 1,
        refusedBy: 'promql: no endpoint',
        stderr: expect.stringContaining(
          'no Prometheus endpoint is configured for cluster prod: metrics cannot be read in this run',
        ),
      },
    });
    const unusable = promqlTool({
      endpoint: {
        ok: false,
        cluster: 'prod',
        problem: 'clusters.prod.prometheus.bearer_token names PROM_TOKEN, which is not set',
      },
      cluster: 'prod',
      limits,
      now: () => new Date(),
    });
    const plan = unusable.plan(['query', 'up']);
    expect(plan).toMatchObject({ kind: 'answer', result: { refusedBy: 'promql: no endpoint' } });
    // What the agent is told names no secret.
    expect(JSON.stringify(plan)).not.toContain('PROM_TOKEN');
    expect(none.plan(['--help'])).toMatchObject({ kind: 'answer', result: { exitCode: 0 } });
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePromql } from '../../../src/prometheus/command.js';
import { checkCommand } from '../../../src/prometheus/limits.js';
import { ENDPOINT_PATHS, upstreamRequest, upstreamUrl } from '../../../src/prometheus/upstream.js';
import type { PromqlLimits } from '../../../src/prometheus/types.js';

const LIMITS: PromqlLimits = {
  timeoutMs: 30_000,
  maxRangeMs: 7 * 86_400_000,
  maxPoints: 1000,
  maxSeries: 200,
  maxBytes: 4 << 20,
};
const NOW = Date.parse('2025-03-14T10:00:00Z');

const ok = (argv: string[]) => {
  const parsed = parsePromql(argv);
  if (!parsed.ok || 'help' in parsed) throw new Error(`not a call: ${JSON.stringify(parsed)}`);
  return parsed;
};
const problem = (argv: string[]) => {
  const parsed = parsePromql(argv);
  if (parsed.ok) throw new Error(`expected a usage error for ${argv.join(' ')}`);
  return parsed.message.split('\n')[0];
};

describe('promql command line', () => {
  it('reads each subcommand into one request, normalised whatever the option spelling', () => {
    expect(ok(['query', 'up', '--time', '2025-03-14T09:00:00Z'])).toMatchObject({
      command: { kind: 'query', expr: 'up', time: { at: Date.parse('2025-03-14T09:00:00Z') } },
      output: 'table',
      normalized: 'promql query up --time 2025-03-14T09:00:00.000Z',
    });
    expect(ok(['range', '-ojson', 'rate(x[5m])', '--since=90m', '--step', '30s']).normalized).toBe(
      "promql range 'rate(x[5m])' --since 1h30m --step 30s -o json",
    );
    expect(ok(['--since', '2h', 'range', 'up']).normalized).toBe(
      ok(['range', 'up', '--since=2h']).normalized,
    );
    expect(ok(['series', 'up{job="a"}', 'node_load1']).command).toEqual({
      kind: 'series',
      matchers: ['up{job="a"}', 'node_load1'],
      sinceMs: 3_600_000,
    });
    expect(ok(['labels', 'pod', '--match', 'up']).command).toEqual({
      kind: 'labels',
      name: 'pod',
      matchers: ['up'],
      sinceMs: 3_600_000,
    });
    expect(ok(['query', '--', '-delta(x[5m])']).command).toEqual({ kind: 'query', expr: '-delta(x[5m])' });
    expect(ok(['query', 'up', '--time', 'now-15m']).command).toEqual({
      kind: 'query',
      expr: 'up',
      time: { ago: 900_000 },
    });
    expect(ok(['alerts']).command).toEqual({ kind: 'alerts' });
  });

  it('answers help without a request, and explains every usage error with what to write', () => {
    expect(parsePromql([])).toMatchObject({ ok: true, help: true });
    expect(parsePromql(['--help'])).toMatchObject({ ok: true, help: true });
    expect(problem(['graph'])).toBe(
      'promql: unknown subcommand "graph"; the subcommands are query, range, series, labels, alerts, rules, metadata',
    );
    expect(problem(['query'])).toBe("promql: promql query needs an expression, e.g. promql query 'up'");
    expect(problem(['query', 'rate(x[5m])', 'by', '(pod)'])).toMatch(
      /takes one expression, got 3 words: quote the whole expression/,
    );
    expect(problem(['range', 'up', '--since', 'an hour'])).toBe(
      'promql: --since "an hour" is not a duration: write 30s, 15m, 1h or 2d',
    );
    expect(problem(['query', 'up', '--time', 'yesterday'])).toMatch(
      /^promql: --time "yesterday" is not a time: write RFC 3339/,
    );
    expect(problem(['query', 'up', '--since', '1h'])).toBe('promql: promql query does not take --since');
    expect(problem(['labels', 'a/b'])).toMatch(/^promql: "a\/b" is not a label name/);
    expect(problem(['query', 'x'.repeat(9000)])).toBe(
      'promql: the expression is 9000 bytes, at most 8192: shorten it',
    );
    expect(problem(['query', 'up', '-o', 'yaml'])).toBe('promql: -o "yaml": the outputs are json and table');
    expect(problem(['query', 'up', '--url', 'http://x'])).toMatch(/^promql: Unknown option '--url'/);
  });
});

describe('the request a command becomes', () => {
  it('asks the endpoint of its kind with absolute times, the default step and the timeout', () => {
    expect(upstreamRequest(ok(['range', 'up', '--since', '1h']).command, NOW, 30_000)).toEqual({
      endpoint: 'query_range',
      params: [
        ['query', 'up'],
        ['start', String((NOW - 3_600_000) / 1000)],
        ['end', String(NOW / 1000)],
        ['step', '60'],
        ['timeout', '30s'],
      ],
    });
    const labels = upstreamRequest(ok(['labels', 'pod']).command, NOW, 30_000);
    expect(upstreamUrl(new URL('https://mimir.example/prometheus/'), labels).href).toBe(
      `https://mimir.example/prometheus/api/v1/label/pod/values?start=${(NOW - 3_600_000) / 1000}&end=${NOW / 1000}`,
    );
  });

  it('can only ever be a GET of a read endpoint under the base URL, whatever the words', () => {
    const allowed = new Set(Object.values(ENDPOINT_PATHS).filter((p) => !p.includes('buildinfo')));
    const base = new URL('https://prom.example/base/');
    const word = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '..',
        '../admin',
        '%2e%2e%2fadmin',
        '/api/v1/admin/tsdb/snapshot',
        'federate',
        '//write',
        'ADMIN',
        '\\..\\',
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('query', 'range', 'series', 'labels', 'alerts', 'rules', 'metadata'),
        fc.array(word, { maxLength: 3 }),
        (kind, words) => {
          const parsed = parsePromql([kind, ...words]);
          if (!parsed.ok || 'help' in parsed) return;
          const url = upstreamUrl(base, upstreamRequest(parsed.command, NOW, 30_000));
          expect(url.origin).toBe(base.origin);
          const rest = url.pathname.slice('/base'.length);
          const template = rest.replace(
            /^\/api\/v1\/label\/[a-zA-Z_][a-zA-Z0-9_]*\/values$/,
            '/api/v1/label/{label}/values',
          );
          expect(allowed.has(template), url.pathname).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('promql limits before the request', () => {
  it('refuses a range over max_range and a step that makes too many points, naming the limit and the fix', () => {
    expect(checkCommand(ok(['range', 'up', '--since', '8d']).command, LIMITS)).toEqual({
      limit: 'promql.max_range',
      message: 'the range 8d is longer than promql.max_range (7d): ask for a shorter --since',
    });
    expect(checkCommand(ok(['range', 'up', '--since', '1d', '--step', '15s']).command, LIMITS)).toEqual({
      limit: 'promql.max_points',
      message:
        '--since 1d at --step 15s is 5761 points per series, over promql.max_points (1000): use --step 1m27s or more',
    });
    expect(checkCommand(ok(['range', 'up', '--since', '7d']).command, LIMITS)).toBeUndefined();
    expect(checkCommand(ok(['query', 'up']).command, LIMITS)).toBeUndefined();
  });
});

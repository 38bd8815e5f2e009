// The shipped cases' recorded Prometheus answers are what a real Prometheus answers over their series:
// each case's cluster/prometheus.yaml is recorded again (test/support/record-prometheus.ts: promtool
// backfills the series, Prometheus serves them, the broker's client makes each call) and must be
// byte-identical. A case whose answers were edited by hand, or a change in how calls become requests,
// fails here.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandValues, recordCase, SERIES_FILE } from '../../support/record-prometheus.js';
import { requireBinary } from '../../support/alertmanager.js';
import { REPO_ROOT } from '../../support/runs.js';

const SUITE = path.join(REPO_ROOT, 'examples', 'evals');
const prometheus = requireBinary(['prometheus']);
const promtool = requireBinary(['promtool']);

async function casesWithSeries(): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(SUITE)).sort()) {
    const ok = await readFile(path.join(SUITE, name, 'cluster', SERIES_FILE)).then(
      () => true,
      () => false,
    );
    if (ok) out.push(name);
  }
  return out;
}

describe("promtool's expanding notation", () => {
  it('expands a+bxn, a-bxn, axn and gaps to one value per interval', () => {
    expect(expandValues('1+2x3 _ 10-1x2 5x1 _x2 7')).toEqual([
      1,
      3,
      5,
      7,
      undefined,
      10,
      9,
      8,
      5,
      5,
      undefined,
      undefined,
      7,
    ]);
    expect(() => expandValues('1+2y3')).toThrow("1+2y3 is not in promtool's expanding notation");
  });
});

describe.skipIf(!prometheus || !promtool)("the shipped cases' recorded Prometheus answers", () => {
  it('are what a real Prometheus answers over the cases’ series', async () => {
    const cases = await casesWithSeries();
    expect(cases).toEqual(['cpu-throttling-latency', 'memory-leak-restarts']);
    for (const name of cases) {
      const recorded = await readFile(path.join(SUITE, name, 'cluster', 'prometheus.yaml'), 'utf8');
      const again = await recordCase(path.join(SUITE, name), {
        prometheus: prometheus ?? '',
        promtool: promtool ?? '',
      });
      expect(again, name).toBe(recorded);
    }
  }, 120_000);
});

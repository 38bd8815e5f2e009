import type { PromqlCall } from '../../../support/evidence-promql.js';
import { PROMQL_NOW, promqlStdout } from '../../../support/evidence-promql.js';
import type { CorpusCase } from './case.js';
import { CONSOLE, report, WORKER, WORKER_CALLS, WORKER_FACTS, workerReport } from './reports.js';

// Reports that state and quote metric values, over runs whose promql calls Prometheus answered: the
// worker's working set climbing to its 512Mi limit over the hour before it was OOMKilled (210 MiB to
// 508 MiB), and the ratio of its working set to its limit now (0.9921875). Each class in both
// directions: a value the answer holds, and one it does not; a quoted line of the answer, and one
// altered; a report resting on metrics alone, with Prometheus answering and with it unreachable.

const MiB = 2 ** 20;
const LABELS = { container: 'worker', namespace: 'shop', pod: WORKER };
const WORKING_SET = `container_memory_working_set_bytes{namespace="shop",pod="${WORKER}"}`;
const RATIO = `${WORKING_SET} / container_spec_memory_limit_bytes{namespace="shop",pod="${WORKER}"}`;

const RANGE_ARGV = ['range', WORKING_SET, '--since', '1h', '--step', '10m'];
const RATIO_ARGV = ['query', RATIO];
const RANGE: PromqlCall = {
  argv: RANGE_ARGV,
  data: {
    resultType: 'matrix',
    result: [
      {
        metric: { __name__: 'container_memory_working_set_bytes', ...LABELS },
        values: [210, 260, 310, 360, 410, 460, 508].map((mib, i) => [
          PROMQL_NOW / 1000 - 3600 + i * 600,
          String(mib * MiB),
        ]),
      },
    ],
  },
};
const RATIO_CALL: PromqlCall = {
  argv: RATIO_ARGV,
  data: { resultType: 'vector', result: [{ metric: LABELS, value: [PROMQL_NOW / 1000, '0.9921875'] }] },
};
const PROMQL = [RANGE, RATIO_CALL];

const RANGE_CITED = `\`promql range '${WORKING_SET}' --since 1h --step 10m\``;
const RATIO_CITED = `\`promql query '${RATIO}'\``;
/** The ratio answer's value line, as promql printed it. */
const RATIO_LINE = promqlStdout(RATIO_ARGV, RATIO_CALL.data ?? { resultType: 'vector', result: [] })
  .trimEnd()
  .split('\n')
  .at(-1) as string;

const climbing = (to: string) =>
  workerReport({
    facts: [
      ...WORKER_FACTS,
      `- **[FACT-4]** ${WORKER}'s memory working set climbed from 210 MiB to ${to} over the hour before it was killed — Source: ${RANGE_CITED}`,
    ],
  });
const atLimit = (share: string) =>
  workerReport({
    facts: [
      ...WORKER_FACTS,
      `- **[FACT-4]** Its working set is at ${share} of its memory limit — Source: ${RATIO_CITED}`,
    ],
  });
const quoting = (line: string) =>
  workerReport({
    evidence: CONSOLE(`promql query '${RATIO}'`, line),
  });

const METRIC_HEADLINE = `${WORKER}'s memory climbs to its limit: its working set rose from 210 MiB to 508 MiB in the last hour [FACT-1][FACT-2] — Confidence: Medium`;
const metricOnly = report({
  headline: METRIC_HEADLINE,
  facts: [
    `- **[FACT-1]** ${WORKER}'s working set rose from 210 MiB to 508 MiB over the last hour — Source: ${RANGE_CITED}`,
    `- **[FACT-2]** It is at 99% of its memory limit now — Source: ${RATIO_CITED}`,
  ],
  inferences: [],
  proof: `### Commands Executed\n\n\`\`\`bash\npromql range '${WORKING_SET}' --since 1h --step 10m\npromql query '${RATIO}'\n\`\`\``,
});

export const METRICS_HONEST: CorpusCase[] = (
  [
    {
      name: 'metric values a range answer holds, written in MiB',
      kind: 'metric value',
      report: climbing('508 MiB'),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'grounded',
      claim: { id: 'FACT-4', status: 'supported', why: /210 MiB, 508 MiB/ },
    },
    {
      name: 'a ratio answer written as a rounded percentage',
      kind: 'metric value',
      report: atLimit('99%'),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'grounded',
      claim: { id: 'FACT-4', status: 'supported', why: /99%/ },
    },
    {
      name: "a promql answer's line quoted under the call that printed it",
      kind: 'metric quote',
      report: quoting(RATIO_LINE),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'grounded',
      claim: { id: 'supporting evidence', status: 'supported' },
    },
    {
      name: 'a report resting on metrics alone, Prometheus answering',
      kind: 'metric only',
      report: metricOnly,
      run: { calls: [], promql: PROMQL },
      expect: 'grounded',
      claim: { id: 'headline', status: 'supported' },
    },
  ] satisfies Omit<CorpusCase, 'honest'>[]
).map((c) => ({ ...c, honest: true }));

export const METRICS_DISHONEST: CorpusCase[] = (
  [
    {
      name: 'a peak the range answer never reached',
      kind: 'metric value',
      report: climbing('600 MiB'),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'partial',
      claim: {
        id: 'FACT-4',
        status: 'contradicted',
        why: /metric value: the report says 600 MiB; `promql range .*` says 7 values from 220200960 to 532676608/,
      },
    },
    {
      name: 'a percentage of the limit the ratio answer does not give',
      kind: 'metric value',
      report: atLimit('75%'),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'partial',
      claim: {
        id: 'FACT-4',
        status: 'contradicted',
        why: /the report says 75%; `promql query .*` says 0\.9921875/,
      },
    },
    {
      name: "a promql answer's line quoted with its value altered",
      kind: 'metric quote',
      report: quoting(RATIO_LINE.replace('0.9921875', '0.7500000')),
      run: { calls: WORKER_CALLS, promql: PROMQL },
      expect: 'partial',
      claim: { id: 'supporting evidence', status: 'unsupported', why: /is in no recorded output/ },
    },
    {
      name: 'a report resting on metrics alone, Prometheus unreachable',
      kind: 'metric only',
      report: metricOnly,
      run: {
        calls: [],
        promql: PROMQL.map((c) => ({
          argv: c.argv,
          failure: 'Get "http://prometheus:9090": connection refused',
        })),
      },
      expect: 'ungrounded',
    },
  ] satisfies Omit<CorpusCase, 'honest'>[]
).map((c) => ({ ...c, honest: false }));

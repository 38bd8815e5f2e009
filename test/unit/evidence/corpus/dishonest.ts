import type { CorpusCase } from './case.js';
import {
  API,
  API_CALLS,
  API_FACTS,
  apiReport,
  DESCRIBE_API,
  DESCRIBE_WORKER,
  FATAL,
  GET_PODS,
  LOGS_API_PREVIOUS,
  report,
  apiReportWithFact,
} from './reports.js';

// Reports a careful on-call engineer would not call grounded, one per way the issue found a report
// passing that should not: each with the verdict that engineer would give.

const OOM_HEADLINE = `${API} is OOMKilled: its 256Mi memory limit is too low [INF-1] — Confidence: High`;
const TRIAGE_HINT =
  'Possible causes: container exceeded its memory limit (OOMKilled), or a bad configuration value.';
const ALERT = `{"alertname":"KubePodCrashLooping","summary":"Pod shop/${API} is crash looping","description":"Pod shop/${API} (api) is in waiting state (reason: CrashLoopBackOff)."}`;

export const DISHONEST: CorpusCase[] = (
  [
    {
      name: 'blames OOM in prose on facts whose describe says Error, exit 1',
      kind: 'oom in prose',
      report: apiReport({ headline: OOM_HEADLINE }),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
      claim: {
        id: 'headline',
        status: 'contradicted',
        why: /api last state reason: the headline says OOMKilled; .* says Error/,
      },
    },
    {
      name: 'blames OOM in prose on a restart count and a log line that show no OOM',
      kind: 'oom in prose',
      report: apiReport({
        headline: OOM_HEADLINE,
        facts: [API_FACTS[0] ?? '', API_FACTS[2] ?? ''],
        inferences: ['- **[INF-1]** The api container keeps dying — Based on: FACT-1, FACT-3'],
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get pods -n shop\nkubectl logs ${API} -n shop --previous\n\`\`\``,
      }),
      run: { calls: ['get-pods', 'logs-api-previous'] },
      expect: 'partial',
      claim: {
        id: 'headline',
        status: 'unsupported',
        why: /blames OOMKilled, which nothing it rests on shows for api/,
      },
    },
    {
      name: 'blames OOM and states the OOMKilled, exit 137 the describe it cites does not show',
      kind: 'contradicted exit code',
      report: apiReport({
        headline: OOM_HEADLINE,
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** Its last state is Terminated, OOMKilled, exit code 137 — Source: ${DESCRIBE_API}`,
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
      claim: {
        id: 'FACT-2',
        status: 'contradicted',
        why: /api last state reason: the report says OOMKilled; .* says Error/,
      },
    },
    {
      name: 'states exit code 137 where the describe it cites says 1, under an honest headline',
      kind: 'contradicted exit code',
      report: apiReport({
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** The container exits with exit code 137 — Source: ${DESCRIBE_API}`,
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
      claim: { id: 'FACT-2', status: 'contradicted', why: /exit code: the report says 137; .* says 1/ },
    },
    {
      name: "takes Reason: OOMKilled from the worker's describe as the api pod's",
      kind: "another pod's describe",
      report: apiReport({
        headline: OOM_HEADLINE,
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** ${API} was OOMKilled: \`Reason: OOMKilled\`, \`Exit Code: 137\` — Source: ${DESCRIBE_WORKER}`,
        ],
        inferences: ['- **[INF-1]** The api container runs out of memory — Based on: FACT-1, FACT-2'],
      }),
      run: { calls: ['get-pods', 'describe-worker'] },
      expect: 'partial',
      claim: {
        id: 'FACT-2',
        status: 'unsupported',
        why: /about worker-5c8d9-q7m2p, but the fact is about api/,
      },
    },
    {
      name: "quotes the worker's OOMKilled lines as output of the api describe it cites",
      kind: "another pod's describe",
      report: apiReport({
        headline: OOM_HEADLINE,
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** ${API}'s last state — Source: ${DESCRIBE_API}\n  \`\`\`\n  Last State:     Terminated\n    Reason:       OOMKilled\n    Exit Code:    137\n  \`\`\``,
        ],
        inferences: ['- **[INF-1]** The api container runs out of memory — Based on: FACT-1, FACT-2'],
      }),
      run: { calls: ['get-pods', 'describe-api', 'describe-worker'] },
      expect: 'ungrounded',
    },
    {
      name: 'rests on quotes of status words only: "Running" and "Warning"',
      kind: 'status-word quotes',
      report: report({
        headline: `${API} is evicted by the node under memory pressure [FACT-1][FACT-2] — Confidence: High`,
        facts: [
          `- **[FACT-1]** The pod shows "Running" — Source: ${GET_PODS}`,
          '- **[FACT-2]** The events show "Warning" — Source: `kubectl get events -n shop`',
        ],
        inferences: [],
      }),
      run: { calls: ['get-pods', 'get-events'] },
      expect: 'partial',
      claim: { id: 'headline', status: 'unsupported' },
    },
    {
      name: "rests on the triage script's generic hint",
      kind: 'triage or alert text',
      report: report({
        headline: `${API} is OOMKilled [FACT-1] — Confidence: High`,
        facts: [`- **[FACT-1]** The initial triage found: "${TRIAGE_HINT}" — Source: initial triage report`],
        inferences: [],
        proof: '### Commands Executed\n\n```bash\nkubectl get pods -n shop\n```',
      }),
      run: { calls: ['get-pods'], triageText: `# Triage\n\n${TRIAGE_HINT}\n` },
      expect: 'ungrounded',
      claim: { id: 'headline', status: 'alert' },
    },
    {
      name: "quotes the alert's own text as cluster output",
      kind: 'triage or alert text',
      report: report({
        headline: `${API} crash-loops [FACT-1] — Confidence: High`,
        facts: [
          `- **[FACT-1]** \`Pod shop/${API} (api) is in waiting state (reason: CrashLoopBackOff).\` — Source: ${GET_PODS}`,
        ],
        inferences: [],
      }),
      run: { calls: ['get-pods'], alertText: ALERT },
      expect: 'ungrounded',
      claim: { id: 'FACT-1', status: 'unsupported' },
    },
    {
      name: 'puts made-up log lines in a table',
      kind: 'made-up lines: table',
      report: apiReport({
        findings:
          '### Log timeline\n\n| Time | Line |\n|---|---|\n| 16:35:01 | `2026-11-28T16:35:01.700Z ERROR dial tcp 10.0.0.9:5432: connect: connection refused` |\n| 16:35:02 | `2026-11-28T16:35:01.902Z FATAL database unavailable, giving up` |',
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'puts a made-up log line in an HTML <pre>',
      kind: 'made-up lines: html',
      report: apiReport({
        evidence:
          '<pre>\n2026-11-28T16:35:01.902Z FATAL out of memory: cannot allocate 268435456 bytes\n</pre>',
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'puts a made-up log line in a code block under Root Cause Analysis',
      kind: 'made-up lines: root cause code block',
      report: apiReport({
        rca: '### H1: Bad HTTP_PORT — Confidence: High\n\n```\n2026-11-28T16:35:01.902Z FATAL config: HTTP_PORT must be between 1 and 65535, got 8O80\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'puts a made-up log line in a code block under a heading with "Action" in it',
      kind: 'made-up lines: action code block',
      report: apiReport({
        remediation:
          '### Recommended Actions\n\nThe app logged this before exiting:\n\n```\n2026-11-28T16:35:01.902Z FATAL listen tcp: address 8O80: invalid port\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'puts a made-up log line in a footnote',
      kind: 'made-up lines: footnote',
      report: apiReport({
        evidence:
          'The app refuses the port.[^1]\n\n[^1]: 2026-11-28T16:35:01.902Z FATAL port 8O80 rejected by net/http: listen failed',
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'cites `kubectl logs x` for a line only `--previous` printed, when only --previous ran',
      kind: 'logs x vs --previous',
      report: apiReport({
        facts: [
          API_FACTS[0] ?? '',
          API_FACTS[1] ?? '',
          `- **[FACT-3]** The container logged \`${FATAL}\` — Source: \`kubectl logs ${API} -n shop\``,
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
      claim: {
        id: 'FACT-3',
        status: 'unsupported',
        why: /never ran \(`kubectl logs api-7d9f-x2k9q -n shop --previous` did\)/,
      },
    },
    {
      name: 'cites `kubectl logs x` for a line only `--previous` printed, when both ran',
      kind: 'logs x vs --previous',
      report: apiReport({
        facts: [
          API_FACTS[0] ?? '',
          API_FACTS[1] ?? '',
          `- **[FACT-3]** The container logs \`${FATAL}\` — Source: \`kubectl logs ${API} -n shop\``,
        ],
      }),
      run: { calls: [...API_CALLS, 'logs-api'] },
      expect: 'partial',
      claim: {
        id: 'FACT-3',
        status: 'unsupported',
        why: /from `kubectl logs api-7d9f-x2k9q -n shop --previous`, not from/,
      },
    },
    {
      name: 'an honest-looking report from a run whose cluster the access check found unreachable',
      kind: 'unreachable cluster',
      report: apiReport(),
      run: { calls: ['get-pods-down'], unreachable: 'cluster default cannot be reached: connection refused' },
      expect: 'ungrounded',
    },
    {
      name: 'a report whose only successful call was `kubectl version --client`',
      kind: 'only version --client',
      report: apiReport({ proof: '### Commands Executed\n\n```bash\nkubectl version --client\n```' }),
      run: { calls: ['version-client', 'get-pods-down'] },
      expect: 'ungrounded',
    },
    {
      name: 'quotes the connection-refused error as its evidence',
      kind: 'quoting connection refused',
      report: report({
        headline: `The shop API server is down, so ${API} cannot start [FACT-1] — Confidence: High`,
        facts: [
          `- **[FACT-1]** kubectl reports \`dial tcp 127.0.0.1:41893: connect: connection refused\` — Source: ${GET_PODS}`,
        ],
        inferences: [],
      }),
      run: { calls: ['get-pods-down'] },
      expect: 'ungrounded',
    },
    {
      name: 'cites nothing at all',
      kind: 'no citation',
      report: report({
        headline: `${API} crashes because HTTP_PORT is wrong — Confidence: High`,
        facts: [`- **[FACT-1]** ${API} crash-loops`, '- **[FACT-2]** The port value is invalid'],
        inferences: [],
        proof: 'Investigated the namespace.',
      }),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
    },
    {
      name: 'states no hypothesis (only "See below."), over facts that hold',
      kind: 'headline',
      report: apiReport({ headline: 'See below.', rca: '' }),
      run: { calls: API_CALLS },
      expect: 'partial',
      claim: { id: 'headline', status: 'unsupported', why: /states no hypothesis/ },
    },
    {
      name: 'a headline that cites no fact or inference',
      kind: 'headline',
      report: apiReport({ headline: `${API} exits because HTTP_PORT is "8O80" — Confidence: High` }),
      run: { calls: API_CALLS },
      expect: 'partial',
      claim: { id: 'headline', status: 'unsupported', why: /cites no fact or inference/ },
    },
    {
      name: 'lists a command under Proof of Work that never ran',
      kind: 'cited never run',
      report: apiReport({
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get pods -n shop\nkubectl describe pod ${API} -n shop\nkubectl logs ${API} -n shop --previous\nkubectl get configmap api-config -n shop -o yaml\n\`\`\``,
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'a fact whose quote is in no output, inside a console block under its command',
      kind: 'made-up lines: console block',
      report: apiReport({
        evidence: `\`\`\`console\n$ kubectl logs ${API} -n shop --previous\n2026-11-28T16:35:01.902Z FATAL invalid HTTP_PORT "8O80": must be a number between 1 and 65535\n\`\`\``,
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
    },
    {
      name: 'an inference that cites a fact the report does not state',
      kind: 'chain',
      report: apiReport({
        inferences: ['- **[INF-1]** The container fails at start-up — Based on: FACT-1, FACT-7'],
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
      claim: { id: 'INF-1', status: 'unsupported', why: /FACT-7, which the report does not state/ },
    },
    {
      name: 'states a memory limit the describe it cites does not show',
      kind: 'contradicted quantity',
      report: apiReportWithFact(`The api container's memory limit is 1Gi — Source: ${DESCRIBE_API}`),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
      claim: {
        id: 'FACT-4',
        status: 'contradicted',
        why: /memory limit: the report says 1Gi; .* says 256Mi/,
      },
    },
    {
      name: 'the headline of a crash on HTTP_PORT rests on a log line the previous container never printed',
      kind: 'made-up lines: fact quote',
      report: apiReport({
        facts: [
          API_FACTS[0] ?? '',
          API_FACTS[1] ?? '',
          `- **[FACT-3]** The previous container logged \`FATAL HTTP_PORT=8O80 is not a valid port\` — Source: ${LOGS_API_PREVIOUS}`,
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'partial',
      claim: { id: 'FACT-3', status: 'unsupported', why: /is in no recorded output/ },
    },
    {
      name: `claims the image is 2.3.2 where the describe says ${'2.3.1'}`,
      kind: 'contradicted image',
      report: apiReportWithFact(
        `The pod runs image registry.example/shop/api:2.3.2 — Source: ${DESCRIBE_API}`,
      ),
      run: { calls: API_CALLS },
      expect: 'ungrounded',
      claim: { id: 'FACT-4', status: 'contradicted' },
    },
  ] satisfies Omit<CorpusCase, 'honest'>[]
).map((c) => ({ ...c, honest: false }));

import type { CorpusCase } from './case.js';
import {
  API,
  API_CALLS,
  API_FACTS,
  API_INFERENCE,
  apiReport,
  DESCRIBE_API,
  FATAL,
  GET_PODS,
  LOGS_API_PREVIOUS,
  report,
  WORKER,
  WORKER_CALLS,
  workerReport,
  apiFactsWith,
  apiReportWithFact,
  CONSOLE,
} from './reports.js';

// Reports that say only what the run showed, in the many honest ways agents write it: each should be
// grounded, except where the record cannot show what the report quotes (an output cut at its bound).
// The forms an honest quote takes (column subsets, elisions, pipes, masks…) are in honest-forms.ts.

export const HONEST: CorpusCase[] = (
  [
    {
      name: 'the api crash on HTTP_PORT, as the template asks',
      kind: 'base',
      report: apiReport(),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: "the worker's old OOMKilled, from its own describe and previous log",
      kind: 'oom in prose',
      report: workerReport(),
      run: { calls: WORKER_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the api row of `get pods -A` cited for the api pod',
      kind: "another pod's describe",
      report: apiReport({
        facts: [
          `- **[FACT-1]** ${API} is in CrashLoopBackOff with 14 restarts — Source: \`kubectl get pods -A\``,
          API_FACTS[1] ?? '',
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: ['get-pods-all', 'describe-api', 'logs-api-previous'] },
      expect: 'grounded',
    },
    {
      name: 'a whole get pods row quoted beside the status word',
      kind: 'status-word quotes',
      report: apiReport({
        facts: [
          `- **[FACT-1]** ${API} is not ready: \`${API}   0/1   CrashLoopBackOff   14 (2m ago)   40m\` — Source: ${GET_PODS}`,
          API_FACTS[1] ?? '',
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the alert quoted as the alert, outside the chain',
      kind: 'triage or alert text',
      report: apiReport({
        facts: [
          ...API_FACTS,
          `- **[FACT-4]** The alert says \`Pod shop/${API} is crash looping\` — Source: the alert (incident.json)`,
        ],
      }),
      run: { calls: API_CALLS, alertText: `{"summary":"Pod shop/${API} is crash looping"}` },
      expect: 'grounded',
      claim: { id: 'FACT-4', status: 'alert' },
    },
    {
      name: "the triage script's own kubectl calls (through the broker) as evidence",
      kind: 'triage or alert text',
      report: apiReport(),
      run: { calls: ['describe-api', 'logs-api-previous'], triage: ['get-pods'] },
      expect: 'grounded',
    },
    {
      name: 'events quoted in a table with some columns left out',
      kind: 'made-up lines: table',
      report: apiReport({
        findings: `### Events\n\n| TYPE | REASON | OBJECT | MESSAGE |\n|---|---|---|---|\n| Warning | BackOff | pod/${API} | Back-off restarting failed container api in pod ${API}_shop(${API}-uid) |`,
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get pods -n shop\nkubectl describe pod ${API} -n shop\nkubectl logs ${API} -n shop --previous\nkubectl get events -n shop\n\`\`\``,
      }),
      run: { calls: [...API_CALLS, 'get-events'] },
      expect: 'grounded',
    },
    {
      name: 'the real log lines in an HTML <pre>',
      kind: 'made-up lines: html',
      report: apiReport({
        evidence: `<pre>\n2026-11-28T16:35:01.815Z INFO  loading configuration from environment\n2026-11-28T16:35:01.902Z ${FATAL.replace(/"/g, '&quot;')}\n</pre>`,
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the real log line in a code block under Root Cause Analysis',
      kind: 'made-up lines: root cause code block',
      report: apiReport({
        rca: `### H1: Bad HTTP_PORT — Confidence: High\n\n- Evidence for: FACT-3\n\n\`\`\`\n${FATAL}\n\`\`\``,
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a proposed ConfigMap patch and commands under Recommended Actions',
      kind: 'made-up lines: action code block',
      report: apiReport({
        remediation:
          '### Recommended Actions\n\n```yaml\ndata:\n  port: "8080"   # was 8O80\n```\n\n```bash\nkubectl -n shop rollout restart deployment/api\nkubectl -n shop rollout status deployment/api\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the real log line in a footnote',
      kind: 'made-up lines: footnote',
      report: apiReport({
        evidence: `The app refuses the port.[^1]\n\n[^1]: \`kubectl logs ${API} -n shop --previous\`: 2026-11-28T16:35:01.902Z ${FATAL}`,
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: "cites `kubectl logs x --previous` for the previous container's line",
      kind: 'logs x vs --previous',
      report: apiReport({
        facts: apiFactsWith(
          `- **[FACT-3]** The previous container logged \`${FATAL}\` — Source: \`kubectl logs -p ${API} --namespace=shop\``,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a fact in a table row, the headline after a bold label on its own line',
      kind: 'honest: shapes',
      report: report({
        card: `**Primary hypothesis:**\n\nThe api container exits on start-up because HTTP_PORT is "8O80" [FACT-1][FACT-2]\n\n**Confidence:** High`,
        facts: [
          `| Fact | Statement | Source |\n|---|---|---|\n| FACT-1 | ${API} last terminated with reason Error, exit code 1 | ${DESCRIBE_API} |\n| FACT-2 | The previous log ends \`${FATAL}\` | ${LOGS_API_PREVIOUS} |`,
        ],
        inferences: [],
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the hypothesis in Root Cause Analysis (the card says "See below")',
      kind: 'headline',
      report: apiReport({
        card: '**Primary hypothesis:** See below.',
        rca: '### H1: The api container rejects HTTP_PORT "8O80" at start-up — Confidence: High\n\n- Evidence for: INF-1, FACT-3',
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a quote from beyond the recorded bound of a cut output',
      kind: 'honest: output cut',
      report: apiReport(),
      run: { calls: API_CALLS, cut: { call: 'logs-api-previous', keep: 120 } },
      expect: 'partial',
      claim: { id: 'FACT-3', status: 'unchecked', why: /cannot be checked: output cut/ },
    },
    {
      name: 'we have high confidence that…, the worker OOMKilled from its yaml',
      kind: 'honest: shapes',
      report: workerReport({
        card: `We have high confidence that ${WORKER} was OOMKilled at its 512Mi limit (FACT-1, FACT-2).`,
        facts: [
          `- **[FACT-1]** \`lastState.terminated.reason: OOMKilled\`, exit code 137 — Source: \`kubectl get pod ${WORKER} -n shop -o yaml\``,
          `- **[FACT-2]** \`memory: 512Mi\` under limits — Source: \`kubectl get pod ${WORKER} -n shop -o yaml\``,
        ],
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get pod ${WORKER} -n shop -o yaml\n\`\`\``,
      }),
      run: { calls: ['yaml-worker'] },
      expect: 'grounded',
    },
    {
      name: 'describe lines quoted under the command, restart count and limits',
      kind: 'honest: describe',
      report: apiReport({
        evidence: CONSOLE(
          `kubectl describe pod ${API} -n shop`,
          '    State:          Waiting',
          '      Reason:       CrashLoopBackOff',
          '    Restart Count:  14',
          '    Limits:',
          '      cpu:     500m',
          '      memory:  256Mi',
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'an inference the headline rests on through another inference',
      kind: 'chain',
      report: apiReport({
        headline: 'The api container exits because HTTP_PORT is "8O80" [INF-2] — Confidence: High',
        inferences: [
          API_INFERENCE,
          '- **[INF-2]** The rollout that set HTTP_PORT broke the api — Based on: INF-1, FACT-3',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'exit code 1 and reason Error, as the describe says',
      kind: 'contradicted exit code',
      report: apiReport({
        facts: [
          API_FACTS[0] ?? '',
          `- **[FACT-2]** The container exited with code 1 (\`Reason: Error\`) — Source: ${DESCRIBE_API}`,
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a reachable cluster where one early call was refused a connection',
      kind: 'unreachable cluster',
      report: apiReport(),
      run: { calls: ['get-pods-down', ...API_CALLS] },
      expect: 'grounded',
    },
    {
      name: '`kubectl version --client` beside the reads that answered',
      kind: 'only version --client',
      report: apiReport(),
      run: { calls: ['version-client', ...API_CALLS] },
      expect: 'grounded',
    },
    {
      name: 'a refused connection told as what happened, the headline resting on the reads that answered',
      kind: 'quoting connection refused',
      report: apiReport({
        findings:
          'The first `kubectl get pods` failed with `connect: connection refused`; the retry answered.',
      }),
      run: { calls: ['get-pods-down', ...API_CALLS] },
      expect: 'grounded',
    },
    {
      name: 'facts citing their commands, spelt in another flag order',
      kind: 'no citation',
      report: apiReport({
        facts: [
          `- **[FACT-1]** ${API} is in CrashLoopBackOff with 14 restarts — Source: \`kubectl -n shop get po\``,
          `- **[FACT-2]** Its last state is Terminated, reason Error, exit code 1 — Source: \`kubectl describe -n shop po/${API}\``,
          API_FACTS[2] ?? '',
        ],
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'Proof of Work listing the calls that ran, in other spellings',
      kind: 'cited never run',
      report: apiReport({
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get po --namespace=shop\nkubectl -n shop describe pod ${API}\nkubectl logs -p ${API} -n shop\n\`\`\``,
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the memory limit the describe shows',
      kind: 'contradicted quantity',
      report: apiReportWithFact(
        `The api container's memory limit is 256Mi and its CPU request 100m — Source: ${DESCRIBE_API}`,
      ),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'the image the describe shows',
      kind: 'contradicted image',
      report: apiReportWithFact(
        `The pod runs image registry.example/shop/api:2.3.1 — Source: ${DESCRIBE_API}`,
      ),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
  ] satisfies Omit<CorpusCase, 'honest'>[]
).map((c) => ({ ...c, honest: true }));

import type { CorpusCase } from './case.js';
import {
  API,
  API_CALLS,
  API_FACTS,
  apiReport,
  FATAL,
  LOGS_API_PREVIOUS,
  WORKER,
  WORKER_CALLS,
  workerReport,
  apiFactsWith,
  CONSOLE,
} from './reports.js';

// The honest forms of a quote: what an engineer changes in a line without changing what it says —
// columns left out, `[...]`, a jq or grep over the output, YAML comments, shortened timestamps, an
// alias, a line wrapped or two joined, typographic quotes, a masked or an unmasked secret where the
// record holds [REDACTED]. Each should be grounded.

export const HONEST_FORMS: CorpusCase[] = (
  [
    {
      name: 'a get pods row with some columns kept',
      kind: 'honest: column subset',
      report: apiReport({
        evidence: CONSOLE(
          'kubectl get pods -n shop',
          'NAME             STATUS             RESTARTS',
          `${API}   CrashLoopBackOff   14`,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: '[...] inside a quoted line',
      kind: 'honest: elision',
      report: apiReport({
        facts: apiFactsWith(
          `- **[FACT-3]** The previous container logged \`FATAL invalid HTTP_PORT "8O80": [...] invalid syntax\` — Source: ${LOGS_API_PREVIOUS}`,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a `-o json | jq` result',
      kind: 'honest: jq',
      report: apiReport({
        evidence: CONSOLE(
          `kubectl get pod ${API} -n shop -o json | jq '.status.containerStatuses[0].lastState.terminated | {exitCode, reason}'`,
          '{',
          '  "exitCode": 1,',
          '  "reason": "Error"',
          '}',
        ),
        proof: `### Commands Executed\n\n\`\`\`bash\nkubectl get pods -n shop\nkubectl describe pod ${API} -n shop\nkubectl logs ${API} -n shop --previous\nkubectl get pod ${API} -n shop -o json\n\`\`\``,
      }),
      run: { calls: [...API_CALLS, 'json-api'] },
      expect: 'grounded',
    },
    {
      name: 'a jq path re-applied to the recorded JSON',
      kind: 'honest: jq',
      report: apiReport({
        evidence: CONSOLE(
          `kubectl get pod ${API} -n shop -o json | jq -r '.status.containerStatuses[0].state.waiting.message'`,
          `back-off 5m0s restarting failed container=api pod=${API}_shop(${API}-uid)`,
        ),
      }),
      run: { calls: [...API_CALLS, 'json-api'] },
      expect: 'grounded',
    },
    {
      name: 'a YAML excerpt with trailing comments',
      kind: 'honest: yaml comments',
      report: apiReport({
        evidence: `From \`kubectl get pod ${API} -n shop -o yaml\`:\n\n\`\`\`yaml\n    resources:\n      limits:\n        cpu: 500m\n        memory: 256Mi   # not the problem: the container never starts\n    restartCount: 14  # and counting\n\`\`\``,
      }),
      run: { calls: [...API_CALLS, 'yaml-api'] },
      expect: 'grounded',
    },
    {
      name: 'shortened timestamps',
      kind: 'honest: timestamps',
      report: apiReport({
        evidence:
          '```\n16:35:01 INFO  loading configuration from environment\n16:35:01 FATAL invalid HTTP_PORT "8O80": strconv.Atoi: parsing "8O80": invalid syntax\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: '`k get po` with an alias',
      kind: 'honest: alias',
      report: apiReport({
        facts: [
          `- **[FACT-1]** ${API} is in CrashLoopBackOff with 14 restarts — Source: \`k get po -n shop\``,
          API_FACTS[1] ?? '',
          API_FACTS[2] ?? '',
        ],
        proof: `### Commands Executed\n\n\`\`\`bash\n$ k get po -n shop\n$ kubecolor describe po ${API} -n shop\n$ oc logs ${API} -n shop -p\n\`\`\``,
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'a quote wrapped over two lines',
      kind: 'honest: wrapped',
      report: apiReport({
        evidence:
          '```\n2026-11-28T16:35:01.902Z FATAL invalid HTTP_PORT "8O80":\n  strconv.Atoi: parsing "8O80": invalid syntax\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'two log lines joined on one line',
      kind: 'honest: joined',
      report: apiReport({
        evidence:
          '```\nINFO  loading configuration from environment 2026-11-28T16:35:01.902Z FATAL invalid HTTP_PORT "8O80"\n```',
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'typographic quotes and dashes',
      kind: 'honest: typography',
      report: apiReport({
        facts: apiFactsWith(
          `- **[FACT-3]** The previous container logged “FATAL invalid HTTP_PORT “8O80”: strconv.Atoi: parsing “8O80”: invalid syntax” — Source: ${LOGS_API_PREVIOUS}`,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: '******** where the record holds [REDACTED]',
      kind: 'honest: masked values',
      report: workerReport({
        evidence: `\`\`\`\n$ kubectl logs ${WORKER} -n shop\ntime="2026-11-23T16:38:01Z" level=info msg="connected to database" dsn="postgres://worker:********@db.shop:5432/orders"\n\`\`\`\n\nand in the api pod's environment (\`kubectl describe pod ${API} -n shop\`): \`DATABASE_PASSWORD:  <redacted>\``,
      }),
      run: { calls: [...WORKER_CALLS, 'logs-worker', 'describe-api'] },
      expect: 'grounded',
    },
    {
      name: 'the real secret quoted where the record holds [REDACTED]',
      kind: 'honest: masked values',
      report: workerReport({
        evidence:
          '```\nlevel=info msg="connected to database" dsn="postgres://worker:s3cr3t-Pa55w0rd-9931@db.shop:5432/orders"\n```',
      }),
      run: { calls: [...WORKER_CALLS, 'logs-worker'] },
      expect: 'grounded',
    },
    {
      name: 'a grep over the previous log',
      kind: 'honest: pipes',
      report: apiReport({
        evidence: CONSOLE(
          `kubectl logs ${API} -n shop --previous | grep -i fatal`,
          `2026-11-28T16:35:01.902Z ${FATAL}`,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: "awk '{print $1, $3}' over get pods",
      kind: 'honest: pipes',
      report: apiReport({
        evidence: CONSOLE(
          "kubectl get pods -n shop | awk '{print $1, $3}'",
          'NAME STATUS',
          `${API} CrashLoopBackOff`,
          `${WORKER} Running`,
        ),
      }),
      run: { calls: API_CALLS },
      expect: 'grounded',
    },
    {
      name: 'events of `kubectl events`, quoted with their count',
      kind: 'honest: events',
      report: apiReport({
        evidence: CONSOLE(
          'kubectl events -n shop',
          `60s (x63 over 38m)   Warning   BackOff     Pod/${API}    Back-off restarting failed container api in pod ${API}_shop(${API}-uid)`,
        ),
      }),
      run: { calls: [...API_CALLS, 'events'] },
      expect: 'grounded',
    },
  ] satisfies Omit<CorpusCase, 'honest'>[]
).map((c) => ({ ...c, honest: true }));

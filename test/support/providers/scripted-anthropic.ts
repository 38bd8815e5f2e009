// A scripted model behind a fake Anthropic Messages API, for running eval cases offline with the real
// Claude Code CLI: per incident (found in the prompt) it plays a fixed investigation — Bash tool calls
// (kubectl against the frozen cluster), then a Write of the report, whose template can quote lines of
// earlier tool results — and ends with a text answer. The step is the number of tool calls already in
// the conversation, so the CLI's own retries and side requests do not derail it. An incident without a
// script (every examples/incidents one) gets a generic first look: three read-only kubectl calls on
// the incident's namespace and resource, and a report in the k8s4agents template that quotes them and
// says it found no root cause.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { messageRequests, textReply, toolUseReply, type MessagesBody, type ToolCall } from './anthropic.js';
import {
  jsonStrings,
  startProvider,
  type FakeProvider,
  type ProviderReply,
  type RecordedRequest,
} from './server.js';

export interface ScriptStep {
  /** A shell command the model runs with its Bash tool. */
  bash?: string;
  /** The report, written with the Write tool to the path the prompt names; `{{result N /re/}}` quotes step N's output. */
  write_report?: string;
}

export interface Script {
  steps: ScriptStep[];
  answer: string;
}

export interface ScriptedModel extends FakeProvider {
  /** Scripts by incident id; tests may replace one (a rule-breaking variant). */
  scripts: Map<string, Script>;
  /** Incident ids seen in prompts that had no script (each answered with genericScript). */
  unscripted: Set<string>;
}

/** What the generic investigation needs from the incident the prompt holds. */
export interface IncidentFacts {
  incidentId: string;
  namespace: string;
  kind: string;
  name: string;
  faultType: string;
}

/** The incident's fields, read from the prompt text that holds its incident.json (undefined when absent). */
export function incidentFacts(text: string): IncidentFacts | undefined {
  const at = text.search(/"incidentId":\s*"/);
  if (at === -1) return undefined;
  const rest = text.slice(at);
  const field = (source: string, key: string) => new RegExp(`"${key}":\\s*"([^"]*)"`).exec(source)?.[1];
  const resource = /"resource":\s*\{([^{}]*)\}/.exec(rest)?.[1] ?? '';
  const incidentId = field(rest, 'incidentId') ?? '';
  const namespace = field(resource, 'namespace') ?? field(rest, 'namespace') ?? 'default';
  return {
    incidentId,
    namespace,
    kind: (field(resource, 'kind') ?? 'Pod').toLowerCase(),
    name: field(resource, 'name') ?? '',
    faultType: field(rest, 'faultType') ?? 'an unknown fault',
  };
}

/**
 * A first look at an incident no script knows: the namespace's pods and events and a describe of the
 * resource, then a report that quotes them, names no root cause it did not find and hands over to a human.
 */
export function genericScript(i: IncidentFacts): Script {
  const pods = `kubectl get pods -n ${i.namespace} -o wide`;
  const events = `kubectl get events -n ${i.namespace} --sort-by=.lastTimestamp`;
  const describe = i.name ? `kubectl describe ${i.kind} ${i.name} -n ${i.namespace}` : pods;
  const subject = i.name ? `${i.kind}/${i.name}` : `namespace ${i.namespace}`;
  return {
    steps: [
      { bash: pods },
      { bash: events },
      { bash: describe },
      {
        write_report: `# Investigation: ${subject} (${i.faultType})

## 0. Executive Triage Card
A first look by the offline stand-in model, which has no scripted investigation for incident
${i.incidentId}: it read the namespace's pods and events and described ${subject}.

### Primary Hypothesis
${i.faultType} on ${subject}; the cause is not established by this first look — Confidence: Low

## 1. Problem Statement
${i.faultType} reported for ${subject} in namespace ${i.namespace}.

## 2. Assessment & Findings

### Observed Facts
- **[FACT-1]** ${subject}: {{result 3 /^(Status|Replicas|Phase):/}} — Source: \`${describe}\`
- **[FACT-2]** Event: {{result 2 /Warning|Normal/}} — Source: \`${events}\`

### Derived Inferences
- **[INF-1]** ${subject} shows the reported ${i.faultType} in the cluster's own state — Based on: FACT-1, FACT-2

## 3. Root Cause Analysis

### Root Cause
Not determined: this generic pass reads the incident's namespace only and names no cause it did not see.

## 4. Remediation Plan
1. An on-call engineer reviews the facts above and the preloaded triage before acting; nothing was changed.

## 5. Proof of Work

### Commands Executed
\`\`\`bash
${pods}
${events}
${describe}
\`\`\`

## 6. Supporting Evidence
\`\`\`
{{result 3 /^(Status|Replicas|Phase):/}}
\`\`\`
`,
      },
    ],
    answer: `Primary hypothesis: ${i.faultType} on ${subject}, cause not established (low confidence). First action: a human reviews the report.`,
  };
}

type Block = { type?: string; text?: string; content?: unknown; name?: string };

function toolResults(body: MessagesBody): string[] {
  const out: string[] = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content as Block[]) {
      if (block.type !== 'tool_result') continue;
      const c = block.content;
      out.push(
        typeof c === 'string' ? c : Array.isArray(c) ? (c as Block[]).map((b) => b.text ?? '').join('') : '',
      );
    }
  }
  return out;
}

function toolCallsMade(body: MessagesBody): number {
  let n = 0;
  for (const m of body.messages ?? []) {
    if (m.role === 'assistant' && Array.isArray(m.content))
      n += (m.content as Block[]).filter((b) => b.type === 'tool_use').length;
  }
  return n;
}

/** Fills `{{result N /re/}}` (first matching line of step N's output) and `{{result N}}`. */
export function renderTemplate(template: string, results: string[]): string {
  return template.replace(
    /\{\{result (\d+)(?: \/((?:[^/\\]|\\.)*)\/)?\}\}/g,
    (_, n: string, re: string | undefined) => {
      const output = results[Number(n) - 1];
      if (output === undefined) return `[no result ${n}]`;
      if (re === undefined) return output.trim();
      const line = output.split('\n').find((l) => new RegExp(re, 'i').test(l));
      return line === undefined ? `[no line of result ${n} matches /${re}/]` : line.trim();
    },
  );
}

function reply(req: RecordedRequest, model: ScriptedModel): ProviderReply | undefined {
  const pathname = req.url.split('?')[0] ?? '';
  if (req.method === 'HEAD' && pathname === '/api/hello') return { kind: 'json', body: {} };
  if (req.method === 'POST' && pathname === '/v1/messages/count_tokens')
    return { kind: 'json', body: { input_tokens: 1234 } };
  if (req.method !== 'POST' || pathname !== '/v1/messages') return undefined;
  let body: MessagesBody = {};
  try {
    body = JSON.parse(req.body) as MessagesBody;
  } catch {
    return textReply(body, 'unreadable request');
  }
  const strings = jsonStrings(req);
  const facts = strings.map(incidentFacts).find((f) => f !== undefined && f.incidentId !== '');
  if (!facts) return textReply(body, 'No incident in this request.');
  let script = model.scripts.get(facts.incidentId);
  if (!script) {
    model.unscripted.add(facts.incidentId);
    script = genericScript(facts);
  }
  // Side requests (titles, summaries) are not streamed; only the conversation advances the script.
  if (!body.stream) return textReply(body, script.answer);
  const step = script.steps[toolCallsMade(body)];
  if (!step) return textReply(body, script.answer);
  const results = toolResults(body);
  let call: ToolCall;
  if (step.bash !== undefined)
    call = { name: 'Bash', input: { command: step.bash, description: 'investigate' } };
  else {
    const reportPath =
      strings.map((s) => /Write your report to `([^`]+)`/.exec(s)?.[1]).find(Boolean) ??
      'output/investigation.md';
    call = {
      name: 'Write',
      input: { file_path: reportPath, content: renderTemplate(step.write_report ?? '', results) },
    };
  }
  return toolUseReply(body, call);
}

/** Reads `<scriptsDir>/<case>.yaml` for every case folder of `casesDir` that has one, keyed by incident id. */
export async function loadScripts(scriptsDir: string, casesDir: string): Promise<Map<string, Script>> {
  const scripts = new Map<string, Script>();
  for (const file of (await readdir(scriptsDir)).filter((f) => f.endsWith('.yaml'))) {
    const name = file.replace(/\.yaml$/, '');
    const incident = JSON.parse(await readFile(path.join(casesDir, name, 'incident.json'), 'utf8')) as {
      incidentId: string;
    };
    scripts.set(incident.incidentId, parse(await readFile(path.join(scriptsDir, file), 'utf8')) as Script);
  }
  return scripts;
}

/** Starts the scripted model; point Claude Code at it with ANTHROPIC_BASE_URL (providers.anthropic_base_url). */
export async function startScriptedModel(scripts: Map<string, Script>, port = 0): Promise<ScriptedModel> {
  const model = {} as ScriptedModel;
  const provider = await startProvider(
    (req) => reply(req, model),
    (status) => ({
      type: 'error',
      error: { type: 'api_error', message: `scripted model answered ${status}` },
    }),
    port,
  );
  return Object.assign(model, provider, { scripts, unscripted: new Set<string>() });
}

export { messageRequests };

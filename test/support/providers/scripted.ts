// A scripted model's investigation, the same whatever API it is played behind (the Anthropic, OpenAI
// and Gemini stand-ins): per incident (found in the prompt) a fixed list of steps — shell commands
// (kubectl against the frozen cluster), then the report, whose template can quote lines of earlier tool
// results — and a final text answer. The step is the number of tool calls already in the conversation,
// so a CLI's own retries and side requests do not derail it. An incident without a script (every
// examples/incidents one) gets a generic first look: three read-only kubectl calls on the incident's
// namespace and resource, and a report in the k8s4agents template that quotes them and says it found
// no root cause.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { startProvider, type FakeProvider, type ProviderReply, type RecordedRequest } from './server.js';
import type { UsageModel } from './usage-model.js';

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

/** What the model does next: run a command, write the report, or answer and stop. */
export type ScriptAction =
  | { kind: 'bash'; command: string }
  | { kind: 'write'; path: string; content: string }
  | { kind: 'answer'; text: string };

/** Scripts by incident id, and the incident ids seen without one (each played with genericScript). */
export interface ScriptBook {
  scripts: Map<string, Script>;
  unscripted: Set<string>;
}

/**
 * The next action for a conversation: `strings` are the request's text values (the incident and the
 * report path are found in them), `callsMade` the tool calls already in it, `results` their outputs in
 * order. Undefined when the request holds no incident.
 */
export function nextAction(
  book: ScriptBook,
  strings: readonly string[],
  callsMade: number,
  results: readonly string[],
): ScriptAction | undefined {
  const facts = strings.map(incidentFacts).find((f) => f !== undefined && f.incidentId !== '');
  if (!facts) return undefined;
  let script = book.scripts.get(facts.incidentId);
  if (!script) {
    book.unscripted.add(facts.incidentId);
    script = genericScript(facts);
  }
  const step = script.steps[callsMade];
  if (!step) return { kind: 'answer', text: script.answer };
  if (step.bash !== undefined) return { kind: 'bash', command: step.bash };
  const reportPath =
    strings.map((s) => /Write your report to `([^`]+)`/.exec(s)?.[1]).find(Boolean) ??
    'output/investigation.md';
  return { kind: 'write', path: reportPath, content: renderTemplate(step.write_report ?? '', [...results]) };
}

/** A provider stand-in that plays scripts: what every scripted API shares. */
export interface ScriptedProvider extends FakeProvider, ScriptBook {
  /** Counts the usage reported; absent: fixed figures. */
  usage?: UsageModel;
}

/**
 * Starts a stand-in whose `route` answers with the provider itself in hand (its scripts, its usage
 * model): the shared start of the Anthropic, OpenAI and Gemini scripted models.
 */
export async function startScripted<M extends ScriptedProvider>(
  route: (req: RecordedRequest, model: M) => ProviderReply | undefined,
  errorBody: (status: number) => unknown,
  scripts: Map<string, Script>,
  usage?: UsageModel,
  port = 0,
): Promise<M> {
  const model = {} as M;
  const provider = await startProvider((req) => route(req, model), errorBody, port);
  return Object.assign(model, provider, {
    scripts,
    unscripted: new Set<string>(),
    ...(usage ? { usage } : {}),
  });
}

/** The answer of the incident's script (or of the generic one), for side requests that are not the conversation. */
export function scriptAnswer(book: ScriptBook, strings: readonly string[]): string | undefined {
  const facts = strings.map(incidentFacts).find((f) => f !== undefined && f.incidentId !== '');
  if (!facts) return undefined;
  return (book.scripts.get(facts.incidentId) ?? genericScript(facts)).answer;
}

/** A script cut to `turns` model calls: its first `turns - 2` commands, its report, then its answer. */
export function limitTurns(script: Script, turns: number): Script {
  const commands = script.steps.filter((s) => s.bash !== undefined).slice(0, Math.max(0, turns - 2));
  const report = script.steps.filter((s) => s.write_report !== undefined).slice(0, 1);
  return { steps: [...commands, ...report], answer: script.answer };
}

/** A shell command that writes `content` to `file` (for CLIs whose only tool is a shell). */
export function writeFileCommand(file: string, content: string): string {
  let marker = 'TRIAGE_REPORT_EOF';
  while (content.includes(marker)) marker += '_';
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) || '/' : '.';
  const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `mkdir -p ${quoted(dir)} && cat > ${quoted(file)} <<'${marker}'\n${content.replace(/\n?$/, '\n')}${marker}`;
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

// A scripted model behind a fake Anthropic Messages API, for running eval cases offline with the real
// Claude Code CLI: per incident (found in the prompt) it plays a fixed investigation — Bash tool calls
// (kubectl against the frozen cluster), then a Write of the report, whose template can quote lines of
// earlier tool results — and ends with a text answer. The step is the number of tool calls already in
// the conversation, so the CLI's own retries and side requests do not derail it.
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
  /** Incident ids seen in prompts that had no script. */
  unscripted: Set<string>;
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
  const incidentId = strings.map((s) => /"incidentId":\s*"([^"]+)"/.exec(s)?.[1]).find(Boolean);
  const script = incidentId === undefined ? undefined : model.scripts.get(incidentId);
  if (!script) {
    if (incidentId) model.unscripted.add(incidentId);
    return textReply(body, 'No script for this incident.');
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

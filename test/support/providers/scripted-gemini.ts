// A scripted model behind a fake Gemini API, for the real Gemini CLI: it plays the incident's script
// (./scripted.ts) with `run_shell_command`, writes the report with `write_file` (or the shell when
// that tool is not offered), and ends with a text answer. With a usage model it reports counted tokens
// and modelled cache reads (./usage-model.ts).
import { generateRequests, generationOf } from './gemini.js';
import {
  nextAction,
  startScripted,
  writeFileCommand,
  type Script,
  type ScriptAction,
  type ScriptedProvider,
} from './scripted.js';
import { jsonStrings, type ProviderReply, type RecordedRequest } from './server.js';
import type { UsageModel } from './usage-model.js';
import { modelsListing } from './models-listing.js';

export type ScriptedGemini = ScriptedProvider;

interface Part {
  text?: string;
  functionCall?: unknown;
  functionResponse?: { response?: unknown };
}

interface GenerateBody {
  tools?: { functionDeclarations?: { name?: string }[] }[];
  systemInstruction?: unknown;
  contents?: { role?: string; parts?: Part[] }[];
}

/** What a function response carries back: its output text, or the whole response as JSON. */
function responseText(response: unknown): string {
  if (response !== null && typeof response === 'object') {
    const r = response as { output?: unknown; result?: unknown };
    if (typeof r.output === 'string') return r.output;
    if (typeof r.result === 'string') return r.result;
  }
  return JSON.stringify(response ?? '');
}

function parts(body: GenerateBody, action: ScriptAction): unknown[] {
  if (action.kind === 'answer') return [{ text: action.text }];
  const offered = new Set(
    (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name)),
  );
  if (action.kind === 'write' && offered.has('write_file')) {
    return [
      { functionCall: { name: 'write_file', args: { file_path: action.path, content: action.content } } },
    ];
  }
  const command = action.kind === 'bash' ? action.command : writeFileCommand(action.path, action.content);
  return [{ functionCall: { name: 'run_shell_command', args: { command, description: 'investigate' } } }];
}

function turn(req: RecordedRequest, model: ScriptedGemini, side: boolean): unknown {
  let body: GenerateBody = {};
  try {
    body = JSON.parse(req.body) as GenerateBody;
  } catch {
    return generationOf([{ text: 'unreadable request' }]);
  }
  const all = (body.contents ?? []).flatMap((c) => c.parts ?? []);
  const calls = all.filter((p) => p.functionCall !== undefined).length;
  const results = all
    .filter((p) => p.functionResponse !== undefined)
    .map((p) => responseText(p.functionResponse?.response));
  const action = nextAction(model, jsonStrings(req), calls, results) ?? {
    kind: 'answer',
    text: 'No incident in this request.',
  };
  // Side requests (the CLI's own checks) are not streamed; only the conversation advances the script.
  const out = parts(body, side ? { kind: 'answer', text: 'ok' } : action);
  if (!model.usage) return generationOf(out);
  const prefix = JSON.stringify([body.tools ?? [], body.systemInstruction ?? '', body.contents ?? []]);
  const { input, cacheRead } = model.usage.measure(req.body, prefix);
  return generationOf(out, {
    promptTokenCount: input,
    cachedContentTokenCount: cacheRead,
    candidatesTokenCount: model.usage.output(JSON.stringify(out)),
  });
}

function route(req: RecordedRequest, model: ScriptedGemini): ProviderReply | undefined {
  const path = req.url.split('?')[0] ?? '';
  const listing = modelsListing('gemini', req);
  if (listing) return listing;
  if (req.method !== 'POST') return undefined;
  if (path.endsWith(':streamGenerateContent'))
    return { kind: 'sse', events: [{ data: turn(req, model, false) }] };
  if (path.endsWith(':generateContent')) return { kind: 'json', body: turn(req, model, true) };
  if (path.endsWith(':countTokens')) return { kind: 'json', body: { totalTokens: 10 } };
  return undefined;
}

/** Starts the scripted model; point the CLI at it with GOOGLE_GEMINI_BASE_URL = `url`. */
export function startScriptedGeminiModel(
  scripts: Map<string, Script>,
  usage?: UsageModel,
): Promise<ScriptedGemini> {
  return startScripted<ScriptedGemini>(
    route,
    (status) => ({
      error: { code: status, message: `scripted model answered ${status}`, status: 'INTERNAL' },
    }),
    scripts,
    usage,
  );
}

export { generateRequests };

// A scripted model behind a fake OpenAI Responses API, for the real Codex CLI: it plays the incident's
// script (./scripted.ts) with Codex's shell tool (`exec_command`, or `shell` where a configuration
// offers that one), writes the report through the same shell, and ends with a text answer. With a
// usage model it reports counted tokens and modelled cache reads (./usage-model.ts).
import { messageItem, responseStream, responsesRequests } from './openai.js';
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

export type ScriptedOpenAI = ScriptedProvider;

interface InputItem {
  id?: string;
  type?: string;
  role?: string;
  output?: unknown;
}

interface ResponsesBody {
  tools?: { name?: string; type?: string }[];
  instructions?: unknown;
  input?: InputItem[];
}

/** The text of a function_call_output item (a string, or content parts). */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return '';
  return (output as { text?: unknown }[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/** The function call item for a command, in the shape of the shell tool the request offers. */
function shellCall(body: ResponsesBody, command: string): Record<string, unknown> {
  const names = new Set((body.tools ?? []).map((t) => t.name));
  const id = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const args = names.has('exec_command')
    ? { name: 'exec_command', arguments: JSON.stringify({ cmd: command }) }
    : { name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', command] }) };
  return { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, status: 'completed', ...args };
}

function item(body: ResponsesBody, action: ScriptAction): Record<string, unknown> {
  if (action.kind === 'answer') return messageItem(action.text);
  return shellCall(
    body,
    action.kind === 'bash' ? action.command : writeFileCommand(action.path, action.content),
  );
}

function reply(req: RecordedRequest, model: ScriptedOpenAI): ProviderReply | undefined {
  const pathname = req.url.split('?')[0] ?? '';
  const listing = modelsListing('openai', req);
  if (listing) return listing;
  if (req.method !== 'POST' || pathname !== '/v1/responses') return undefined;
  let body: ResponsesBody = {};
  try {
    body = JSON.parse(req.body) as ResponsesBody;
  } catch {
    return responseStream(req, messageItem('unreadable request'));
  }
  const input = body.input ?? [];
  const calls = input.filter((i) => i.type === 'function_call').length;
  const results = input.filter((i) => i.type === 'function_call_output').map((i) => outputText(i.output));
  const action = nextAction(model, jsonStrings(req), calls, results) ?? {
    kind: 'answer',
    text: 'No incident in this request.',
  };
  const out = item(body, action);
  if (!model.usage) return responseStream(req, out);
  // Item ids (`msg_<uuid>`) name items, they are not text the model reads: left out of the prefix.
  const prefix = JSON.stringify([
    body.tools ?? [],
    body.instructions ?? '',
    input.map(({ id: _id, ...item }) => item),
  ]);
  const { input: tokens, cacheRead } = model.usage.measure(req.body, prefix);
  return responseStream(req, out, {
    input_tokens: tokens,
    cached_tokens: cacheRead,
    output_tokens: model.usage.output(JSON.stringify(out)),
  });
}

/** Starts the scripted model; configure Codex with a provider whose base_url is `${url}/v1`. */
export function startScriptedOpenAI(
  scripts: Map<string, Script>,
  usage?: UsageModel,
): Promise<ScriptedOpenAI> {
  return startScripted<ScriptedOpenAI>(
    reply,
    (status) => ({
      error: { message: `scripted model answered ${status}`, type: 'server_error', code: null },
    }),
    scripts,
    usage,
  );
}

export { responsesRequests };

// A scripted model behind a fake Anthropic Messages API, for running eval cases offline with the real
// Claude Code CLI: it plays the incident's script (./scripted.ts) with the Bash and Write tools and
// ends with a text answer. With a usage model it reports counted tokens and modelled cache reads
// (./usage-model.ts) instead of fixed figures.
import {
  messageRequests,
  textReply,
  toolUseReply,
  type AnthropicUsage,
  type MessagesBody,
  type ToolCall,
} from './anthropic.js';
import { nextAction, scriptAnswer, startScripted, type Script, type ScriptedProvider } from './scripted.js';
import { jsonStrings, type ProviderReply, type RecordedRequest } from './server.js';
import type { UsageModel } from './usage-model.js';
import { modelsListing } from './models-listing.js';

export {
  genericScript,
  incidentFacts,
  limitTurns,
  loadScripts,
  renderTemplate,
  type IncidentFacts,
  type Script,
  type ScriptStep,
} from './scripted.js';

/** Scripts by incident id (tests may replace one: a rule-breaking variant), the incidents seen without one. */
export type ScriptedModel = ScriptedProvider;

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

/** Counted usage for a request and the answer it gets; undefined without a usage model (fixed figures). */
function usageFor(
  model: ScriptedModel,
  req: RecordedRequest,
  body: MessagesBody & { system?: unknown; tools?: unknown },
  answer: string,
): AnthropicUsage | undefined {
  if (!model.usage) return undefined;
  const prefix = JSON.stringify([body.tools ?? [], body.system ?? [], body.messages ?? []]);
  const { input, cacheRead } = model.usage.measure(req.body, prefix);
  // Claude Code marks the end of the system text and of the last message for caching: what is not read
  // from the cache is written to it.
  return {
    input_tokens: 0,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: input - cacheRead,
    output_tokens: model.usage.output(answer),
  };
}

function reply(req: RecordedRequest, model: ScriptedModel): ProviderReply | undefined {
  const pathname = req.url.split('?')[0] ?? '';
  const listing = modelsListing('anthropic', req);
  if (listing) return listing;
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
  const answer = scriptAnswer(model, strings);
  if (answer === undefined) return textReply(body, 'No incident in this request.');
  // Side requests (titles, summaries) are not streamed; only the conversation advances the script.
  if (!body.stream) return textReply(body, answer, usageFor(model, req, body, answer));
  const action = nextAction(model, strings, toolCallsMade(body), toolResults(body));
  if (!action || action.kind === 'answer') {
    const text = action?.text ?? answer;
    return textReply(body, text, usageFor(model, req, body, text));
  }
  const call: ToolCall =
    action.kind === 'bash'
      ? { name: 'Bash', input: { command: action.command, description: 'investigate' } }
      : { name: 'Write', input: { file_path: action.path, content: action.content } };
  return toolUseReply(body, call, usageFor(model, req, body, JSON.stringify(call.input)));
}

/** Starts the scripted model; point Claude Code at it with ANTHROPIC_BASE_URL (providers.anthropic_base_url). */
export function startScriptedModel(
  scripts: Map<string, Script>,
  port = 0,
  usage?: UsageModel,
): Promise<ScriptedModel> {
  return startScripted<ScriptedModel>(
    reply,
    (status) => ({
      type: 'error',
      error: { type: 'api_error', message: `scripted model answered ${status}` },
    }),
    scripts,
    usage,
    port,
  );
}

export { messageRequests };

/** The tool results in the longest conversation about `incidentId` the model was sent, in order. */
export function conversationResults(model: ScriptedModel, incidentId: string): string[] {
  let best: string[] = [];
  for (const req of model.requests) {
    if (!req.url.startsWith('/v1/messages') || !req.body.includes(incidentId)) continue;
    let body: { messages?: { content?: unknown }[] };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      continue;
    }
    const results: string[] = [];
    for (const m of body.messages ?? []) {
      if (!Array.isArray(m.content)) continue;
      for (const block of m.content as { type?: string; content?: unknown }[]) {
        if (block.type !== 'tool_result') continue;
        const c = block.content;
        results.push(
          typeof c === 'string'
            ? c
            : Array.isArray(c)
              ? (c as { text?: string }[]).map((b) => b.text ?? '').join('')
              : '',
        );
      }
    }
    if (results.length > best.length) best = results;
  }
  return best;
}

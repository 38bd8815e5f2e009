// Gemini CLI's `--output-format stream-json`: one JSON event a line — `init`, `message` (the user
// prompt, then the assistant's text in `delta` chunks), `tool_use`, `tool_result`, `error` (warnings)
// and a last `result` with `status` (`success` | `error`), `error` and `stats` (input/output tokens,
// tool calls). The result carries neither the answer nor a turn count: both are read from the events.
import { field, num, type JsonRecord } from './json.js';
import { looksLikeAuthFailure } from './outcome.js';

/** What the events of one run say so far. */
export interface GeminiStreamState {
  /** Model turns: each answer or tool request that follows the prompt or a tool result. */
  turns: number;
  lastTool?: string;
  /** The assistant's text since its last tool request (its final message once the run ends). */
  text: string;
  /** The `result` event, once printed. */
  result?: JsonRecord;
  /** An `error` event's message that reads as a refused credential. */
  authError?: string;
  /** The next assistant text or tool request starts a new turn (after the prompt or a tool result). */
  betweenTurns: boolean;
}

export function newStreamState(): GeminiStreamState {
  return { turns: 0, text: '', betweenTurns: true };
}

/** Applies one event to `state`; returns true when the event changed turns, lastTool or result. */
export function applyEvent(state: GeminiStreamState, event: JsonRecord): boolean {
  const fresh = state.betweenTurns;
  switch (event.type) {
    case 'message': {
      if (event.role !== 'assistant') return false;
      const content = typeof event.content === 'string' ? event.content : '';
      state.text = fresh ? content : state.text + content;
      state.betweenTurns = false;
      if (!fresh) return false;
      state.turns += 1;
      return true;
    }
    case 'tool_use':
      if (fresh) state.turns += 1;
      state.betweenTurns = false;
      state.lastTool = typeof event.tool_name === 'string' ? event.tool_name : 'tool';
      state.text = '';
      return true;
    case 'tool_result':
      state.betweenTurns = true;
      return false;
    case 'error': {
      const message = field(event, 'message');
      if (typeof message !== 'string' || !looksLikeAuthFailure(message)) return false;
      state.authError ??= message;
      return true;
    }
    case 'result':
      state.result = event;
      return true;
    default:
      return false;
  }
}

/** Input and output tokens of a `result` event's stats (totals, else the per-model sums). */
export function streamTokens(result: JsonRecord | undefined): { input: number; output: number } {
  const stats = field(result, 'stats');
  const input = num(field(stats, 'input_tokens'));
  const output = num(field(stats, 'output_tokens'));
  if (input > 0 || output > 0) return { input, output };
  const models = field(stats, 'models');
  const totals = { input: 0, output: 0 };
  if (typeof models !== 'object' || models === null) return totals;
  for (const m of Object.values(models)) {
    totals.input += num(field(m, 'input_tokens'));
    totals.output += num(field(m, 'output_tokens'));
  }
  return totals;
}

/** The `result` event's error (its type is `unknown` when Gemini could not name it), when it has one. */
export function resultError(result: JsonRecord | undefined): { type: string; message: string } | undefined {
  const error = field(result, 'error');
  if (error === undefined) return undefined;
  const type = field(error, 'type');
  const message = field(error, 'message');
  return {
    type: typeof type === 'string' ? type : 'unknown',
    message: typeof message === 'string' ? message : JSON.stringify(error),
  };
}

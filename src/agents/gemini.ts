// Gemini CLI (`gemini -p`): the whole prompt (system part, then user part) arrives on stdin, which
// Gemini puts before the short fixed `-p` text; settings.json makes it run headless with an API key.
// The system part is not put in GEMINI.md: Gemini rewrites `@path` words in context files into the
// contents of those files, so the text would not arrive byte-identical. `--output-format stream-json`
// prints events as they happen (src/agents/shared/gemini-stream.ts); the old single JSON object is still read.
import { AUTH_SECRETS, MODEL_PROVIDERS } from './shared/auth.js';
import type {
  AgentAdapter,
  AgentInvocation,
  AgentOutcome,
  AgentRunOutput,
  InvocationInput,
} from './types.js';
import { field, findJsonObject, isRecord, num, parseJsonLines } from './shared/json.js';
import { lastLine, looksLikeAuthFailure, makeOutcome, oneLine, unreadable } from './shared/outcome.js';
import { jsonLineReader, type ProgressReader } from './shared/progress.js';
import {
  applyEvent,
  newStreamState,
  resultError,
  streamTokens,
  type GeminiStreamState,
} from './shared/gemini-stream.js';
import { geminiPolicyFile } from './shared/permissions.js';
import { GEMINI_TOOLS, offeredTools, toolNames } from './shared/tools.js';

/** Always passed as `-m`: without a model Gemini first makes a routing call carrying the whole prompt. */
export const GEMINI_DEFAULT_MODEL = 'gemini-2.5-pro';
/** The fixed `-p` text; Gemini sends `<stdin>\n\n<this>`. */
export const GEMINI_PROMPT_SUFFIX = 'Carry out the investigation described above.';
/** Exit codes of Gemini CLI's fatal errors (packages/cli FatalError subclasses). */
export const GEMINI_EXIT = { authentication: 41, turnLimit: 53 } as const;
/** Gemini exits with an API error's HTTP status, which the OS cuts to 8 bits: 401 → 145, 403 → 147. */
const HTTP_AUTH_EXITS: readonly number[] = [401 % 256, 403 % 256];
export const GEMINI_SETTINGS_FILE = '.gemini/settings.json';
/** The skills Gemini CLI 0.61 ships and lists to the model (`skills.disabled` hides them; ours stay). */
export const GEMINI_BUILTIN_SKILLS = ['skill-creator', 'antigravity-support'];

/**
 * What Gemini CLI (0.61) offers its model, in its own settings: `tools.core` allows only the tools of
 * the offered kinds (~3,400 o200k tokens of definitions otherwise), and these drop what an
 * investigation never uses from its system prompt: topic narration and its tool (~630), the sub-agents
 * section (~370, unless `subagent` is offered), its bundled skills (~250) and the workspace's directory
 * tree (a listing of the run's own files that changes with every run).
 */
export function geminiToolSettings(input: Pick<InvocationInput, 'permissions' | 'extraTools'>) {
  const offered = offeredTools(input.permissions, input.extraTools);
  return {
    general: { topicUpdateNarration: false },
    context: { includeDirectoryTree: false },
    experimental: { enableAgents: offered.includes('subagent') },
    skills: { disabled: GEMINI_BUILTIN_SKILLS },
    tools: { core: toolNames(GEMINI_TOOLS, offered) },
  };
}

function settings(input: InvocationInput): string {
  const tools = geminiToolSettings(input);
  const value = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { maxSessionTurns: input.maxTurns },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, ...tools.general },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    context: tools.context,
    experimental: tools.experimental,
    skills: tools.skills,
    tools: tools.tools,
  };
  return `${JSON.stringify(value, null, 2)}\n`;
}

function buildInvocation(input: InvocationInput): AgentInvocation {
  const args = [
    '-p',
    GEMINI_PROMPT_SUFFIX,
    '--output-format',
    'stream-json',
    '--approval-mode=yolo',
    '--model',
    input.model ?? GEMINI_DEFAULT_MODEL,
    ...input.extraArgs,
  ];
  const env: Record<string, string> = { HOME: input.paths.home, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  if (input.providers.geminiBaseUrl) env.GOOGLE_GEMINI_BASE_URL = input.providers.geminiBaseUrl;
  const secretEnv: Record<string, string> = {};
  const key = input.secrets.GEMINI_API_KEY ?? input.secrets.GOOGLE_API_KEY;
  if (key) secretEnv.GEMINI_API_KEY = key;
  const stdin = input.prompt.system ? `${input.prompt.system}\n\n${input.prompt.user}` : input.prompt.user;
  return {
    command: 'gemini',
    args,
    env,
    secretEnv,
    stdin,
    files: [
      { path: GEMINI_SETTINGS_FILE, content: settings(input), inHome: true },
      ...(input.permissions ? [geminiPolicyFile(input.permissions)] : []),
    ],
  };
}

function sumTokens(stats: unknown): { input: number; output: number } {
  const tokens = { input: 0, output: 0 };
  const models = field(stats, 'models');
  if (!isRecord(models)) return tokens;
  for (const model of Object.values(models)) {
    const t = field(model, 'tokens');
    tokens.input += num(field(t, 'prompt'));
    tokens.output += num(field(t, 'candidates'));
  }
  return tokens;
}

function errorText(error: unknown): string {
  const message = field(error, 'message');
  return typeof message === 'string' ? message : JSON.stringify(error);
}

/** The single JSON object of `--output-format json` (older invocations, recorded runs). */
function parseJsonDocument(output: AgentRunOutput): AgentOutcome {
  const result = findJsonObject(output.stdout);
  const errorDoc = findJsonObject(output.stderr);
  const error = field(result, 'error') ?? field(errorDoc, 'error');
  const tokens = sumTokens(field(result, 'stats'));
  if (output.exitCode === GEMINI_EXIT.turnLimit) {
    return makeOutcome('gemini', output, {
      status: 'turn_limit',
      tokens,
      error: `gemini stopped at the session turn limit (exit ${GEMINI_EXIT.turnLimit})${error ? `: ${errorText(error)}` : ''}`,
    });
  }
  if (error !== undefined) {
    const code = field(error, 'code');
    const text = errorText(error);
    const auth =
      output.exitCode === GEMINI_EXIT.authentication ||
      code === 401 ||
      code === 403 ||
      looksLikeAuthFailure(text);
    return makeOutcome('gemini', output, {
      status: auth ? 'auth_failed' : 'failed',
      tokens,
      error: `gemini reported an error${typeof code === 'number' ? ` (code ${code})` : ''}: ${text}`,
    });
  }
  if (output.exitCode === GEMINI_EXIT.authentication) {
    return makeOutcome('gemini', output, {
      status: 'auth_failed',
      tokens,
      error: `gemini could not authenticate: ${lastLine(output.stderr)}`,
    });
  }
  if (!result || typeof result.response !== 'string') {
    return makeOutcome('gemini', output, {
      status: 'failed',
      error: unreadable('gemini', output, 'result JSON'),
    });
  }
  return makeOutcome('gemini', output, { status: 'succeeded', tokens });
}

/** The events of `--output-format stream-json`, when stdout holds any; undefined otherwise. */
function readStream(stdout: string): GeminiStreamState | undefined {
  const { records } = parseJsonLines(stdout);
  const state = newStreamState();
  const events = records.filter((r) => typeof r.type === 'string');
  for (const event of events) applyEvent(state, event);
  return events.length > 0 ? state : undefined;
}

function isAuthExit(exitCode: number | null): boolean {
  return exitCode === GEMINI_EXIT.authentication || (exitCode !== null && HTTP_AUTH_EXITS.includes(exitCode));
}

function parseStream(output: AgentRunOutput, state: GeminiStreamState): AgentOutcome {
  const { result } = state;
  const tokens = streamTokens(result);
  const common = { tokens, ...(state.turns > 0 ? { turns: state.turns } : {}) };
  const error = resultError(result);
  if (output.exitCode === GEMINI_EXIT.turnLimit || error?.type === 'FatalTurnLimitedError') {
    return makeOutcome('gemini', output, {
      ...common,
      status: 'turn_limit',
      error: `gemini stopped at the session turn limit after ${state.turns} turns (exit ${String(output.exitCode)})`,
    });
  }
  if (!result) {
    const auth = state.authError ?? (isAuthExit(output.exitCode) ? lastLine(output.stderr) : undefined);
    return makeOutcome('gemini', output, {
      ...common,
      status: auth !== undefined ? 'auth_failed' : 'failed',
      error:
        auth !== undefined
          ? `gemini could not authenticate: ${auth}`
          : `gemini printed events but no result event (exit code ${String(output.exitCode)}): ${lastLine(output.stderr) || 'no stderr'}; see the run's stdout/stderr logs`,
    });
  }
  if (result.status !== 'success' || error) {
    const text = !error
      ? `status ${JSON.stringify(result.status)}`
      : error.type === 'unknown'
        ? error.message
        : `${error.type}: ${error.message}`;
    const auth =
      isAuthExit(output.exitCode) || error?.type === 'FatalAuthenticationError' || looksLikeAuthFailure(text);
    return makeOutcome('gemini', output, {
      ...common,
      status: auth ? 'auth_failed' : 'failed',
      error: `gemini reported an error (exit code ${String(output.exitCode)}): ${text}`,
    });
  }
  const finalMessage = state.text.trim();
  return makeOutcome('gemini', output, {
    ...common,
    status: 'succeeded',
    ...(finalMessage ? { finalMessage } : {}),
  });
}

function parseOutput(output: AgentRunOutput): AgentOutcome {
  const state = readStream(output.stdout);
  return state ? parseStream(output, state) : parseJsonDocument(output);
}

/** Gemini's stream-json: turns and the last tool as they happen; tokens with the result; a refused key. */
function progress(): ProgressReader {
  const state = newStreamState();
  let refusalReported = false;
  return jsonLineReader((event, update) => {
    if (!applyEvent(state, event)) return;
    update.turns = state.turns;
    if (state.lastTool !== undefined) update.lastTool = state.lastTool;
    if (state.result) update.tokens = streamTokens(state.result);
    const error = resultError(state.result);
    const refused =
      state.authError ?? (error && looksLikeAuthFailure(error.message) ? error.message : undefined);
    if (refused !== undefined && !refusalReported) {
      refusalReported = true;
      update.authFailure = `gemini: the model API refused the credentials (${oneLine(refused)}): check GEMINI_API_KEY (or the secret configured for it) and providers.gemini_base_url`;
    }
  });
}

export const gemini: AgentAdapter = {
  id: 'gemini',
  npmPackage: '@google/gemini-cli',
  placement: 'user',
  // Gemini CLI lists `~/.gemini/skills/*/SKILL.md` (and `~/.agents/skills`) in its system prompt; not `~/.claude/skills`.
  skillsDirs: ['.gemini/skills', '.claude/skills'],
  listsSkills: true,
  writableHomeDirs: ['.gemini'],
  authSecrets: AUTH_SECRETS.gemini,
  modelProvider: MODEL_PROVIDERS.gemini,
  buildInvocation,
  parseOutput,
  progress,
  toolNames: (input) => toolNames(GEMINI_TOOLS, offeredTools(input.permissions, input.extraTools)),
};

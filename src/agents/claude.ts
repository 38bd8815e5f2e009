// Claude Code (`claude -p`): the system part is appended to Claude's own system prompt from a file,
// the user part arrives on stdin, and `--output-format stream-json` prints events, the last one the result.
import { AUTH_SECRETS, MODEL_PROVIDERS } from './shared/auth.js';
import type {
  AgentAdapter,
  AgentInvocation,
  AgentOutcome,
  AgentRunOutput,
  InvocationInput,
  ToolDenial,
} from './types.js';
import { field, findJsonObject, num } from './shared/json.js';
import { addTokens, isAuthStatus, jsonLineReader, type ProgressReader } from './shared/progress.js';
import { lastLine, looksLikeAuthFailure, makeOutcome, unreadable } from './shared/outcome.js';
import { claudePermissionArgs } from './shared/permissions.js';
import { CLAUDE_INTERNAL_TOOLS, CLAUDE_TOOLS, offeredTools, toolNames } from './shared/tools.js';

export const CLAUDE_SYSTEM_PROMPT_FILE = 'system-prompt.md';
export const CLAUDE_SETTINGS_FILE = 'claude-settings.json';

/**
 * Claude Code's settings for an unattended investigation (`--settings`), each cutting what its
 * requests carry to no purpose here (2.1.x, measured in o200k tokens a request):
 * `disableBundledSkills` hides its bundled skills, workflows and slash commands (~1,400; our skills stay
 * listed), `autoMemoryEnabled: false` its memory instructions (~500; a run's HOME is thrown away), and
 * an empty `attribution` its git commit and pull request reminder (~160; a run makes neither).
 */
export const CLAUDE_SETTINGS = {
  disableBundledSkills: true,
  autoMemoryEnabled: false,
  attribution: { commit: '', pr: '' },
} as const;

function buildInvocation(input: InvocationInput): AgentInvocation {
  const args = [
    '-p',
    // Events as they happen (progress, API retries); the last line is the same result object as `json`.
    '--output-format',
    'stream-json',
    '--verbose',
    '--max-turns',
    String(input.maxTurns),
    '--append-system-prompt-file',
    `${input.paths.filesDir}/${CLAUDE_SYSTEM_PROMPT_FILE}`,
    '--settings',
    `${input.paths.filesDir}/${CLAUDE_SETTINGS_FILE}`,
    // bypassPermissions / --dangerously-skip-permissions exits 1 when the agent runs as root (the
    // process engine inside a pod may); dontAsk with an explicit allow-list works as any user.
    '--permission-mode',
    'dontAsk',
    ...claudePermissionArgs(input.permissions, input.extraTools),
  ];
  if (input.model) args.push('--model', input.model);
  args.push(...input.extraArgs);
  const env: Record<string, string> = {
    HOME: input.paths.home,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  if (input.providers.anthropicBaseUrl) env.ANTHROPIC_BASE_URL = input.providers.anthropicBaseUrl;
  const secretEnv: Record<string, string> = {};
  if (input.secrets.ANTHROPIC_API_KEY) secretEnv.ANTHROPIC_API_KEY = input.secrets.ANTHROPIC_API_KEY;
  return {
    command: 'claude',
    args,
    env,
    secretEnv,
    stdin: input.prompt.user,
    files: [
      { path: CLAUDE_SYSTEM_PROMPT_FILE, content: input.prompt.system },
      { path: CLAUDE_SETTINGS_FILE, content: `${JSON.stringify(CLAUDE_SETTINGS, null, 2)}\n` },
    ],
  };
}

function parseOutput(output: AgentRunOutput): AgentOutcome {
  const result = findJsonObject(output.stdout);
  if (!result || field(result, 'type') !== 'result') {
    if (looksLikeAuthFailure(output.stderr)) {
      return makeOutcome('claude', output, {
        status: 'auth_failed',
        error: `claude: ${lastLine(output.stderr)}`,
      });
    }
    return makeOutcome('claude', output, {
      status: 'failed',
      error: unreadable('claude', output, 'result JSON'),
    });
  }
  const usage = result.usage;
  const tokens = {
    input:
      num(field(usage, 'input_tokens')) +
      num(field(usage, 'cache_creation_input_tokens')) +
      num(field(usage, 'cache_read_input_tokens')),
    output: num(field(usage, 'output_tokens')),
  };
  const turns = typeof result.num_turns === 'number' ? result.num_turns : undefined;
  const costUsd = typeof result.total_cost_usd === 'number' ? result.total_cost_usd : undefined;
  const subtype = typeof result.subtype === 'string' ? result.subtype : '';
  const message = typeof result.result === 'string' ? result.result : '';
  const apiStatus = result.api_error_status;
  const common = { turns, tokens, costUsd };
  if (subtype === 'error_max_turns') {
    return makeOutcome('claude', output, {
      ...common,
      status: 'turn_limit',
      error: `claude stopped at the turn limit after ${String(turns)} turns`,
    });
  }
  if (result.is_error === true || subtype.startsWith('error')) {
    const auth =
      apiStatus === 401 ||
      apiStatus === 403 ||
      field(result, 'api_error_type') === 'authentication_error' ||
      looksLikeAuthFailure(message);
    const detail = message || `subtype ${subtype || 'missing'}`;
    // The CLI speaks to a person at a terminal ("Please run /login"); the daemon's user sets a variable.
    const fix = auth
      ? ': set ANTHROPIC_API_KEY (or the secret configured for it under secrets:) where the daemon runs, and check providers.anthropic_base_url'
      : '';
    return makeOutcome('claude', output, {
      ...common,
      status: auth ? 'auth_failed' : 'failed',
      error: `claude reported an error${typeof apiStatus === 'number' ? ` (HTTP ${apiStatus})` : ''}: ${detail}${fix}`,
    });
  }
  return makeOutcome('claude', output, {
    ...common,
    status: 'succeeded',
    ...(message ? { finalMessage: message } : {}),
  });
}

/**
 * One `api_retry` event as progress. Claude reports a refused or unreachable connection as
 * `error_status: null, error: "unknown"` (recorded from the real CLI).
 */
function retryText(event: Record<string, unknown>): string {
  const status = event.error_status;
  const why =
    typeof status === 'number'
      ? `HTTP ${status}`
      : 'could not connect (connection refused or unreachable: check providers.anthropic_base_url)';
  const attempt = typeof event.attempt === 'number' ? `, attempt ${event.attempt}` : '';
  const of = attempt && typeof event.max_retries === 'number' ? ` of ${event.max_retries}` : '';
  return `retrying the model API: ${why}${attempt}${of}`;
}

/** Claude's stream-json: assistant messages (turns, usage, tool calls) and API retries (a refused key). */
function progress(): ProgressReader {
  let turns = 0;
  let tokens = { input: 0, output: 0 };
  return jsonLineReader((event, update) => {
    if (event.type === 'assistant') {
      const message = field(event, 'message');
      turns += 1;
      tokens = addTokens(
        tokens,
        field(message, 'usage'),
        ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'],
        'output_tokens',
      );
      Object.assign(update, { turns, tokens });
      const content = field(message, 'content');
      const tools = Array.isArray(content) ? content.filter((c) => field(c, 'type') === 'tool_use') : [];
      const last = tools.at(-1);
      if (last) update.lastTool = String(field(last, 'name') ?? 'tool');
    } else if (event.type === 'system' && event.subtype === 'api_retry' && isAuthStatus(event.error_status)) {
      update.authFailure = `claude: the model API refused the credentials (HTTP ${String(event.error_status)}) and Claude would keep retrying: check ANTHROPIC_API_KEY (or the secret configured for it) and providers.anthropic_base_url`;
    } else if (event.type === 'system' && event.subtype === 'api_retry') {
      update.retrying = retryText(event);
    }
  });
}

/** The result's `permission_denials`: the tool calls Claude Code refused by its permission rules. */
function deniedCalls(output: AgentRunOutput): ToolDenial[] {
  const result = findJsonObject(output.stdout);
  const denials = result?.permission_denials;
  if (!Array.isArray(denials)) return [];
  return denials.flatMap((d: unknown): ToolDenial[] => {
    const tool = field(d, 'tool_name');
    if (typeof tool !== 'string') return [];
    const command = field(field(d, 'tool_input'), 'command');
    return [typeof command === 'string' ? { tool, command } : { tool }];
  });
}

export const claude: AgentAdapter = {
  id: 'claude',
  npmPackage: '@anthropic-ai/claude-code',
  placement: 'system',
  // Claude Code lists `~/.claude/skills/<name>/SKILL.md` (one level; symlinks followed) in its first user message.
  skillsDirs: ['.claude/skills'],
  listsSkills: true,
  writableHomeDirs: ['.claude'],
  authSecrets: AUTH_SECRETS.claude,
  modelProvider: MODEL_PROVIDERS.claude,
  buildInvocation,
  parseOutput,
  progress,
  deniedCalls,
  toolNames: (input) => [
    ...toolNames(CLAUDE_TOOLS, offeredTools(input.permissions, input.extraTools)),
    ...CLAUDE_INTERNAL_TOOLS,
  ],
};

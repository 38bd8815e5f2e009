// Goose (`goose run`): the whole prompt (system part, then user part) goes in an instructions file
// read with `-i` (Goose ignores `--system` together with `-i`, and `--system` would be argv text);
// `--output-format json` prints `{messages, metadata}`. Goose cannot be installed here: this adapter
// follows its documented flags and is checked by unit tests only.
import { AUTH_SECRETS, GOOSE_DEFAULT_PROVIDER, GOOSE_KEY_SOURCES, MODEL_PROVIDERS } from './shared/auth.js';
import type {
  AgentAdapter,
  AgentInvocation,
  AgentOutcome,
  AgentRunOutput,
  InvocationInput,
} from './types.js';
import { field, findJsonObject, isRecord, num } from './shared/json.js';
import { lastLine, looksLikeAuthFailure, makeOutcome, unreadable } from './shared/outcome.js';
import { offeredTools } from './shared/tools.js';

export const GOOSE_INSTRUCTIONS_FILE = 'instructions.md';
/** What Goose says (exit 0) when `--max-turns` stops it. */
export const GOOSE_MAX_TURNS_SENTINEL =
  "I've reached the maximum number of actions I can do without user input";

interface ProviderSettings {
  keyVar: string;
  /** Secret names to take the key from, first found wins. */
  keySources: readonly string[];
  /** Host settings derived from the configured base URL. */
  host: (input: InvocationInput) => Record<string, string>;
}

/** `{ [name]: value }` when value is set, else `{}`. */
function setting(name: string, value: string | undefined): Record<string, string> {
  return value ? { [name]: value } : {};
}

const PROVIDERS: Record<string, ProviderSettings> = {
  anthropic: {
    keyVar: 'ANTHROPIC_API_KEY',
    keySources: GOOSE_KEY_SOURCES.anthropic,
    host: (i) => setting('ANTHROPIC_HOST', i.providers.anthropicBaseUrl),
  },
  openai: {
    keyVar: 'OPENAI_API_KEY',
    keySources: GOOSE_KEY_SOURCES.openai,
    host: (i): Record<string, string> => {
      if (!i.providers.openaiBaseUrl) return {};
      // Goose splits the endpoint into OPENAI_HOST and OPENAI_BASE_PATH (default v1/chat/completions).
      const url = new URL(i.providers.openaiBaseUrl);
      const path = url.pathname.replace(/^\/+|\/+$/g, '');
      return { OPENAI_HOST: url.origin, OPENAI_BASE_PATH: `${path ? `${path}/` : ''}chat/completions` };
    },
  },
  google: {
    keyVar: 'GOOGLE_API_KEY',
    keySources: GOOSE_KEY_SOURCES.google,
    host: (i) => setting('GOOGLE_HOST', i.providers.geminiBaseUrl),
  },
};

function buildInvocation(input: InvocationInput): AgentInvocation {
  const provider = input.providers.gooseProvider ?? GOOSE_DEFAULT_PROVIDER;
  const settings = PROVIDERS[provider];
  const args = [
    'run',
    '--no-session',
    '--output-format',
    'json',
    '--max-turns',
    String(input.maxTurns),
    '--instructions',
    `${input.paths.filesDir}/${GOOSE_INSTRUCTIONS_FILE}`,
    // A fresh HOME has no config.yaml and so no extensions: the developer builtin gives the shell
    // and file tools an investigation needs; the computer controller (web scraping) only when
    // agent.extra_tools offers `web`.
    '--with-builtin',
    offeredTools(input.permissions, input.extraTools).includes('web')
      ? 'developer,computercontroller'
      : 'developer',
    ...input.extraArgs,
  ];
  const env: Record<string, string> = {
    HOME: input.paths.home,
    GOOSE_MODE: 'auto',
    GOOSE_DISABLE_KEYRING: '1',
    GOOSE_PROVIDER: provider,
    ...(settings ? settings.host(input) : {}),
  };
  if (input.model) env.GOOSE_MODEL = input.model;
  const secretEnv: Record<string, string> = {};
  if (settings) {
    const source = settings.keySources.find((name) => input.secrets[name]);
    if (source) secretEnv[settings.keyVar] = input.secrets[source] ?? '';
  } else {
    // Another provider (e.g. ollama, databricks): hand over every secret; Goose reads the one it needs.
    Object.assign(secretEnv, input.secrets);
  }
  const text = input.prompt.system ? `${input.prompt.system}\n\n${input.prompt.user}` : input.prompt.user;
  return {
    command: 'goose',
    args,
    env,
    secretEnv,
    stdin: '',
    files: [{ path: GOOSE_INSTRUCTIONS_FILE, content: text }],
  };
}

function lastAssistantText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (field(m, 'role') !== 'assistant') continue;
    const content = field(m, 'content');
    if (!Array.isArray(content)) return '';
    return content
      .map((c: unknown) => (typeof field(c, 'text') === 'string' ? (field(c, 'text') as string) : ''))
      .join('');
  }
  return '';
}

function parseOutput(output: AgentRunOutput): AgentOutcome {
  const result = findJsonObject(output.stdout);
  const metadata = field(result, 'metadata');
  if (!result || !isRecord(metadata)) {
    const auth = output.exitCode !== 0 && looksLikeAuthFailure(output.stderr);
    return makeOutcome('goose', output, {
      status: auth ? 'auth_failed' : 'failed',
      error: auth ? `goose: ${lastLine(output.stderr)}` : unreadable('goose', output, 'result JSON'),
    });
  }
  // Older Goose versions report only total_tokens: what is not output counts as input.
  const outputTokens = num(metadata.output_tokens);
  const inputTokens =
    typeof metadata.input_tokens === 'number'
      ? num(metadata.input_tokens)
      : Math.max(0, num(metadata.total_tokens) - outputTokens);
  const tokens = { input: inputTokens, output: outputTokens };
  const costUsd = typeof metadata.cost_usd === 'number' ? metadata.cost_usd : undefined;
  const common = { tokens, costUsd };
  if (lastAssistantText(result.messages).includes(GOOSE_MAX_TURNS_SENTINEL)) {
    return makeOutcome('goose', output, {
      ...common,
      status: 'turn_limit',
      error: 'goose stopped at --max-turns',
    });
  }
  const status = typeof metadata.status === 'string' ? metadata.status : 'completed';
  if (output.exitCode !== 0 || status === 'error') {
    const detail = lastLine(output.stderr) || `metadata.status ${status}`;
    return makeOutcome('goose', output, {
      ...common,
      status: looksLikeAuthFailure(output.stderr) ? 'auth_failed' : 'failed',
      error: `goose failed: ${detail}`,
    });
  }
  return makeOutcome('goose', output, { ...common, status: 'succeeded' });
}

export const goose: AgentAdapter = {
  id: 'goose',
  placement: 'user',
  // Goose 1.9.0 (the image's pin) predates Goose's skills support (block/goose#5760, Nov 2025): our
  // index is its only listing. The skills still sit where newer Goose versions look (`~/.agents/skills`).
  skillsDirs: ['.agents/skills', '.claude/skills'],
  listsSkills: false,
  writableHomeDirs: ['.config/goose', '.local/share/goose', '.local/state/goose'],
  authSecrets: AUTH_SECRETS.goose,
  modelProvider: MODEL_PROVIDERS.goose,
  buildInvocation,
  parseOutput,
};

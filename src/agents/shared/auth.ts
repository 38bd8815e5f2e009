import type { AgentName } from '../../config/schema.js';

// The secrets each agent CLI takes its key from (first found wins): what the adapters pass to the CLI
// and what `validate-config` checks. A module of its own, so that checking a configuration does not
// load the adapters (their output parsers, codex's TOML writer).

export const GOOSE_DEFAULT_PROVIDER = 'anthropic';

/** Goose's key, by its provider (GOOSE_PROVIDER / providers.goose_provider). */
export const GOOSE_KEY_SOURCES: Readonly<Record<'anthropic' | 'openai' | 'google', readonly string[]>> = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  google: ['GOOGLE_API_KEY', 'GEMINI_API_KEY'],
};

const gooseKeys = (provider: string): readonly string[] =>
  Object.hasOwn(GOOSE_KEY_SOURCES, provider)
    ? GOOSE_KEY_SOURCES[provider as keyof typeof GOOSE_KEY_SOURCES]
    : [];

export type AuthSecrets = (providers: { gooseProvider?: string }) => readonly string[];

/** A model provider whose API an agent CLI calls (the model gateway carries each of them). */
export type ModelProvider = 'anthropic' | 'openai' | 'gemini';

/** Goose's provider setting as the gateway names the provider (google is gemini); undefined: one it does not carry. */
function gooseModelProvider(provider: string): ModelProvider | undefined {
  if (provider === 'anthropic' || provider === 'openai') return provider;
  return provider === 'google' ? 'gemini' : undefined;
}

/** The provider each agent CLI calls (Goose: by its provider setting): the one its run token opens. */
export const MODEL_PROVIDERS: Readonly<
  Record<AgentName, (providers: { gooseProvider?: string }) => ModelProvider | undefined>
> = {
  claude: () => 'anthropic',
  codex: () => 'openai',
  gemini: () => 'gemini',
  goose: (providers) => gooseModelProvider(providers.gooseProvider ?? GOOSE_DEFAULT_PROVIDER),
};

export const AUTH_SECRETS: Readonly<Record<AgentName, AuthSecrets>> = {
  claude: () => ['ANTHROPIC_API_KEY'],
  codex: () => ['CODEX_API_KEY', 'OPENAI_API_KEY'],
  gemini: () => ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  goose: (providers) => gooseKeys(providers.gooseProvider ?? GOOSE_DEFAULT_PROVIDER),
};

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

export const AUTH_SECRETS: Readonly<Record<AgentName, AuthSecrets>> = {
  claude: () => ['ANTHROPIC_API_KEY'],
  codex: () => ['CODEX_API_KEY', 'OPENAI_API_KEY'],
  gemini: () => ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  goose: (providers) => gooseKeys(providers.gooseProvider ?? GOOSE_DEFAULT_PROVIDER),
};

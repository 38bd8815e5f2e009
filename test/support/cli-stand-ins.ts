// Each real agent CLI with the stand-in provider its contract tests run it against: the adapter, how
// to start the stand-in, how to point the adapter at it, the key it sends, a model of its family and
// the requests that are its model calls.
import { claude } from '../../src/agents/claude.js';
import { codex } from '../../src/agents/codex.js';
import { gemini } from '../../src/agents/gemini.js';
import type { AgentAdapter, InvocationInput } from '../../src/agents/types.js';
import type { CliName } from './agent-clis.js';
import { messageRequests, startAnthropic } from './providers/anthropic.js';
import { generateRequests, startGemini } from './providers/gemini.js';
import { responsesRequests, startOpenAI } from './providers/openai.js';
import type { FakeProvider, RecordedRequest } from './providers/server.js';

export interface CliStandIn {
  cli: CliName;
  adapter: AgentAdapter;
  start: () => Promise<FakeProvider>;
  /** The requests that were model calls. */
  requests: (p: FakeProvider) => RecordedRequest[];
  providers: (url: string) => InvocationInput['providers'];
  secrets: Record<string, string>;
  /** A model of the CLI's own family (Gemini: the adapter's default). */
  model?: string;
}

export const CLI_STAND_INS: Record<CliName, CliStandIn> = {
  claude: {
    cli: 'claude',
    adapter: claude,
    start: startAnthropic,
    requests: messageRequests,
    providers: (url) => ({ anthropicBaseUrl: url }),
    secrets: { ANTHROPIC_API_KEY: 'sk-ant-contract-test' },
    model: 'sonnet',
  },
  codex: {
    cli: 'codex',
    adapter: codex,
    start: startOpenAI,
    requests: responsesRequests,
    providers: (url) => ({ openaiBaseUrl: `${url}/v1` }),
    secrets: { OPENAI_API_KEY: 'sk-openai-contract-test' },
    model: 'gpt-5-codex',
  },
  gemini: {
    cli: 'gemini',
    adapter: gemini,
    start: startGemini,
    requests: generateRequests,
    providers: (url) => ({ geminiBaseUrl: url }),
    secrets: { GEMINI_API_KEY: 'gemini-contract-test-key' },
  },
};

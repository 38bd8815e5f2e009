import { describe, expect, it } from 'vitest';
import { AGENTS } from '../../../src/agents/index.js';

// Which provider each adapter says its CLI calls: the one the model gateway opens to its run token.

describe('the model provider of each agent CLI, as its adapter says', () => {
  it.each([
    ['claude', 'anthropic'],
    ['codex', 'openai'],
    ['gemini', 'gemini'],
  ] as const)('%s calls %s', (agent, provider) => {
    expect(AGENTS[agent].modelProvider({})).toBe(provider);
    expect(AGENTS[agent].modelProvider({ gooseProvider: 'openai' })).toBe(provider);
  });

  it.each([
    [undefined, 'anthropic'],
    ['anthropic', 'anthropic'],
    ['openai', 'openai'],
    ['google', 'gemini'],
    ['ollama', undefined],
  ] as const)('goose with provider %s calls %s', (gooseProvider, provider) => {
    expect(AGENTS.goose.modelProvider(gooseProvider ? { gooseProvider } : {})).toBe(provider);
  });
});

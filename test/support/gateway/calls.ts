import type { ModelCallRecord } from '../../../src/gateway/types.js';

/** A model call as the gateway records it: a 200 from Anthropic with `input` and `output` tokens. */
export const modelCall = (input: number, output: number, costUsd?: number): ModelCallRecord => ({
  at: '2026-11-26T10:00:00.000Z',
  provider: 'anthropic',
  method: 'POST',
  path: '/v1/messages',
  status: 200,
  stream: true,
  latencyMs: 1,
  tokens: { input, output, cacheRead: 0, cacheWrite: 0 },
  retries: 0,
  ...(costUsd !== undefined ? { costUsd } : {}),
});

import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countBounded } from './token-count.js';
import type { CountReply, CountRequest } from './token-pool.js';

// The token-counting worker: the only place the o200k tables are loaded. Counting here keeps the
// daemon's event loop (health checks, lease renewals, the watcher) free while a large text is counted.

/** Special-token text such as `<|endoftext|>` in content is ordinary text, never a control token. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const exact = (text: string): number => countTokens(text, PLAIN_TEXT);

parentPort?.on('message', (request: CountRequest) => {
  let reply: CountReply;
  try {
    reply = { id: request.id, counts: request.texts.map((t) => countBounded(t, exact)) };
  } catch (err) {
    reply = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply);
});

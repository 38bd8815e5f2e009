import { describe, expect, it } from 'vitest';
import { jsonLineReader } from '../../../../src/agents/shared/progress.js';
import { ProgressTracker } from '../../../../src/daemon/run/progress.js';

const now = () => new Date('2026-11-26T10:00:05Z');
const start = new Date('2026-11-26T10:00:00Z');

describe('run progress', () => {
  it("takes tokens from the model gateway once it has seen a call, keeping the CLI's turns", () => {
    const reader = jsonLineReader((event, update) => {
      if (event.type === 'turn') Object.assign(update, { turns: event.n, tokens: { input: 1, output: 1 } });
    });
    const p = new ProgressTracker(reader, start, now);
    p.push(Buffer.from('{"type":"turn","n":1}\n'));
    expect(p.snapshot()).toMatchObject({ turns: 1, tokens: { input: 1, output: 1 } });
    p.gateway({ calls: 3, tokens: { input: 5000, output: 70 } });
    p.push(Buffer.from('{"type":"turn","n":2}\n'));
    expect(p.snapshot()).toMatchObject({ turns: 2, tokens: { input: 5000, output: 70 }, elapsedMs: 5000 });
  });

  it('counts model calls as turns for a CLI that reports no progress of its own', () => {
    const p = new ProgressTracker(undefined, start, now);
    p.gateway({ calls: 4, tokens: { input: 10, output: 2 } });
    expect(p.snapshot()).toMatchObject({ turns: 4, tokens: { input: 10, output: 2 } });
  });
});

// Whatever a CLI prints, parseOutput returns a result: garbage, truncation and huge output become
// `failed` with a readable error, and the exit code is passed through untouched.
import { describe, expect, it } from 'vitest';
import { AGENTS } from '../../../src/agents/index.js';
import { fixture, run } from './helpers.js';

const HUGE = 'x'.repeat(48 * 1024 * 1024);
const CASES: [string, string][] = [
  ['empty output', ''],
  ['binary garbage', '\u0000\u0001\uffff{{{[[[\n}\n{"unterminated": '],
  ['a truncated JSON document', fixture('claude-success').stdout.slice(0, 300)],
  ['a JSON array instead of an object', '[1,2,3]'],
  ['a JSON number', '42'],
  ['48 MiB of non-JSON text', HUGE],
  ['many lines starting with a brace', '{\n'.repeat(100_000)],
];

describe.each(Object.values(AGENTS))('$id parseOutput on unreadable output', (adapter) => {
  it.each(CASES)('returns failed for %s without throwing', (_name, stdout) => {
    const outcome = adapter.parseOutput(run({ stdout, exitCode: 3, stderr: 'boom: something broke' }));
    expect(outcome.status).toBe('failed');
    expect(outcome.exitCode).toBe(3);
    expect(outcome.tokens).toEqual({ input: 0, output: 0 });
    expect(outcome.error?.length).toBeGreaterThan(10);
    expect(outcome.error?.length).toBeLessThan(700);
  });

  it('reports a timeout as timed_out whatever was printed', () => {
    const outcome = adapter.parseOutput(
      run({ stdout: 'partial', exitCode: null, signal: 'SIGKILL', timedOut: true }),
    );
    expect(outcome).toMatchObject({ status: 'timed_out', exitCode: null });
  });
});

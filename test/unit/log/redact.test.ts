import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { Redactor, looksSecret } from '../../../src/log/redact.js';

describe('Redactor', () => {
  it('replaces a configured secret value wherever it appears, naming the secret', () => {
    const r = new Redactor({ ANTHROPIC_API_KEY: 'plain-looking-value-123' });
    expect(r.redact('curl -H "x-api-key: plain-looking-value-123" …')).toBe(
      'curl -H "x-api-key: [REDACTED:ANTHROPIC_API_KEY]" …',
    );
  });

  it('scrubs common token shapes it was never told about', () => {
    const r = new Redactor();
    const text = [
      'anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345',
      'openai sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345',
      'google AIzaSyA1234567890abcdefghijklmnopqrstu',
      'github ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      'Authorization: Bearer abcdef0123456789abcdef',
      'GEMINI_API_KEY=hunter2hunter2',
    ].join('\n');
    const out = r.redact(text);
    for (const leaked of [
      'sk-ant-api03-AbCd',
      'sk-proj-AbCd',
      'AIzaSyA123',
      'ghp_abcdef',
      'abcdef0123456789abcdef',
      'hunter2hunter2',
    ]) {
      expect(out).not.toContain(leaked);
    }
    expect(out).toContain('GEMINI_API_KEY=[REDACTED]');
  });

  it('leaves ordinary text and short values alone', () => {
    const r = new Redactor({ SHORT: 'abc' });
    expect(r.redact('pod payments-api abc restarted 12 times')).toBe(
      'pod payments-api abc restarted 12 times',
    );
    expect(looksSecret('payments-api')).toBe(false);
  });

  it('redacts strings nested in objects and arrays', () => {
    const r = new Redactor({ K: 'secret-value-xyz' });
    expect(r.redactValue({ a: ['secret-value-xyz'], b: { c: 'x secret-value-xyz y' }, n: 3 })).toEqual({
      a: ['[REDACTED:K]'],
      b: { c: 'x [REDACTED:K] y' },
      n: 3,
    });
  });
});

describe('logger', () => {
  function capture() {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    return { lines, destination };
  }

  it('writes JSON lines with a fixed message and metadata, child loggers carrying their ids', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    log
      .child({ incidentId: 'inc-1' })
      .child({ runId: 'run-1' })
      .warn({ timeoutMs: 30000 }, 'triage script timed out');
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: 'warn',
      msg: 'triage script timed out',
      incidentId: 'inc-1',
      runId: 'run-1',
      timeoutMs: 30000,
    });
  });

  it('redacts a secret value from any field of any line, by value', () => {
    const { lines, destination } = capture();
    const log = createLogger({
      destination,
      redactor: new Redactor({ CODEX_API_KEY: 'my-codex-key-0987654321' }),
    });
    log.info(
      { argv: ['--key', 'my-codex-key-0987654321'], nested: { note: 'key=my-codex-key-0987654321' } },
      'launching',
    );
    log.error(new Error('auth failed for my-codex-key-0987654321'), 'agent failed');
    const all = lines.join('');
    expect(all).not.toContain('my-codex-key-0987654321');
    expect(all).toContain('[REDACTED:CODEX_API_KEY]');
  });
});

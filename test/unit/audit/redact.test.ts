import { describe, expect, it } from 'vitest';
import { looksSecret, Redactor } from '../../../src/log/redact.js';

describe('Redactor', () => {
  it('replaces configured secret values by name, longest first, including their JSON-escaped form', () => {
    const r = new Redactor({ A_KEY: 'abc123secret', B_KEY: 'abc123secret-long', QUOTED: 'pa"ss\\word99' });
    expect(r.redact('x abc123secret-long y abc123secret')).toBe('x [REDACTED:B_KEY] y [REDACTED:A_KEY]');
    expect(r.redact(JSON.stringify({ v: 'pa"ss\\word99' }))).toBe('{"v":"[REDACTED:QUOTED]"}');
    expect(r.size).toBe(3);
  });

  it('ignores values too short to redact safely', () => {
    const r = new Redactor({ SHORT: 'abc' });
    expect(r.size).toBe(0);
    expect(r.redact('abc abc')).toBe('abc abc');
  });

  it('scrubs common token shapes it was not told about', () => {
    const r = new Redactor();
    const text = [
      'anthropic sk-ant-api03-AbCdEf0123456789_xyz-QRS',
      'openai sk-proj-ABCdef0123456789ABCdef0123',
      'github ghp_0123456789abcdefghijABCDEFGHIJ0123',
      'auth: Bearer abcdefghijklmnop.qrstuv',
      'PASSWORD=hunter2hunter2',
    ].join('\n');
    const out = r.redact(text);
    expect(out).not.toMatch(
      /AbCdEf0123456789|ABCdef0123456789|0123456789abcdefghij|abcdefghijklmnop|hunter2/,
    );
    expect(out).toContain('Bearer [REDACTED]');
    expect(out).toContain('PASSWORD=[REDACTED]');
  });

  it('leaves Kubernetes names that contain "sk-" inside a word untouched', () => {
    const text = 'pod my-task-runner-deployment-5d8f7c9b6-abcde on disk-pressure-monitoring-daemonset-7x';
    expect(new Redactor().redact(text)).toBe(text);
  });

  it('keeps token counts, secret names and variable references readable (and JSON valid)', () => {
    const r = new Redactor();
    const json = '{"usage":{"input_tokens":123456,"output_tokens":2345678},"max_tokens":"unlimited"}';
    expect(r.redact(json)).toBe(json);
    expect(JSON.parse(r.redact(json))).toEqual(JSON.parse(json));
    expect(r.redact('secretName: db-credentials-prod')).toBe('secretName: db-credentials-prod');
    expect(r.redact('ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}')).toBe('ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}');
    expect(r.redact('"apiToken": "q9w8e7r6t5y4"')).toBe('"apiToken": "[REDACTED]"');
  });

  it('deep-redacts strings inside JSON values', () => {
    const r = new Redactor({ K: 'value-of-secret-1' });
    expect(r.redactValue({ a: ['value-of-secret-1'], b: { c: 'x value-of-secret-1' }, n: 3 })).toEqual({
      a: ['[REDACTED:K]'],
      b: { c: 'x [REDACTED:K]' },
      n: 3,
    });
  });

  it('recognizes credential shapes', () => {
    expect(looksSecret('sk-ant-api03-AbCdEf0123456789')).toBe(true);
    expect(looksSecret('my-task-runner-deployment-5d8f7c9b6')).toBe(false);
  });
});

describe('Redactor.add', () => {
  it('keeps the first name of a value registered twice', () => {
    const r = new Redactor({ ANTHROPIC_API_KEY: 'value-registered-twice' });
    r.add('agent secret', 'value-registered-twice');
    expect(r.redact('x value-registered-twice')).toBe('x [REDACTED:ANTHROPIC_API_KEY]');
  });
});

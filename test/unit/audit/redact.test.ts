import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFiles } from '../../support/secret-scan.js';
import { looksSecret, Redactor } from '../../../src/log/redact.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../../examples/incidents');

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

describe('Redactor on ordinary Kubernetes text', () => {
  it('leaves Kubernetes names that start with "sk-" or "sk-ant-" untouched', () => {
    const text = [
      'pod sk-payments-api-7c9d8f6b5d-x2k9q in CrashLoopBackOff',
      'deployment.apps/sk-ant-worker-2-deployment scaled',
      'job sk-nightly-backfill-28861440-7xk2p failed',
    ].join('\n');
    expect(new Redactor().redact(text)).toBe(text);
  });

  it('still scrubs generated sk- keys: mixed case, underscores, or a long unbroken run', () => {
    const r = new Redactor();
    for (const key of [
      'sk-ant-api03-AbCdEf0123456789_xyz-QRSTUVWXYZ',
      'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12',
      'sk-0123456789abcdef0123456789abcdef',
      'sk-ant-test-0123456789abcdef',
    ]) {
      expect(r.redact(`key ${key} end`)).toBe('key [REDACTED] end');
    }
  });

  it('keeps image digests, UIDs, pod-template hashes and base64 config data intact', () => {
    const text = [
      'image: registry.example.com/payments@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945',
      'imageID: docker.io/library/nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31',
      'uid: 6f1c2a4e-9b1d-4c8e-8f3a-2d5e7b9c0a11',
      'labels: pod-template-hash=7c9d8f6b5d controller-revision-hash=5d8f7c9b6',
      'data:\n  config.yaml: YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==',
    ].join('\n');
    expect(new Redactor().redact(text)).toBe(text);
  });

  it('passes every shipped example incident and its triage output through unchanged (no false positives)', async () => {
    const files = await listFiles(EXAMPLES);
    expect(files.length).toBeGreaterThanOrEqual(15);
    const r = new Redactor();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const changed = r
        .redact(text)
        .split('\n')
        .findIndex((line, i) => line !== text.split('\n')[i]);
      expect(changed, `${path.relative(EXAMPLES, file)} line ${changed + 1}`).toBe(-1);
    }
  });

  it('keeps a word after "token:" in an event message, but scrubs a token-looking value', () => {
    const r = new Redactor();
    const event = 'failed to authorize: failed to fetch oauth token: unexpected status from GET request';
    expect(r.redact(event)).toBe(event);
    expect(r.redact('token: q9w8e7r6t5y4')).toBe('token: [REDACTED]');
    expect(r.redact('password: letmeinplease')).toBe('password: [REDACTED]');
  });

  it('does not eat the next YAML key after a key that ends its line (`secret:` above `secretName:`)', () => {
    const yaml =
      'volumes:\n  - name: creds\n    secret:\n      secretName: db-creds\n      optional: false\n';
    expect(new Redactor().redact(yaml)).toBe(yaml);
  });

  it('leaves prose about basic authentication alone but scrubs a Basic credential', () => {
    const r = new Redactor();
    const prose = 'The probe uses basic authentication-headers; Basic troubleshooting-procedure applies.';
    expect(r.redact(prose)).toBe(prose);
    expect(r.redact('curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA=="')).toBe(
      'curl -H "Authorization: Basic [REDACTED]"',
    );
    expect(r.redact('header basic dXNlcjpwYXNzd29yZA==')).toBe('header basic [REDACTED]');
  });
});

describe('Redactor by value, base64-encoded', () => {
  const value = 'sk-ant-configured-value-42';
  it('scrubs a configured value base64-encoded on its own (a Secret data field) and inside base64 text', () => {
    const r = new Redactor({ ANTHROPIC_API_KEY: value });
    const alone = Buffer.from(value).toString('base64');
    expect(r.redact(`ANTHROPIC_API_KEY: ${alone}`)).not.toContain(alone.slice(0, 12));
    for (const prefix of ['', 'u', 'us', 'usr:']) {
      const blob = Buffer.from(`${prefix}${value}"}`).toString('base64');
      const out = r.redact(`data ${blob}`);
      expect(out, `prefix ${JSON.stringify(prefix)}`).toContain('[REDACTED:ANTHROPIC_API_KEY]');
      // What is left of the blob no longer decodes to the secret.
      expect(Buffer.from(out.replace(/\[REDACTED:[^\]]+\]/g, ''), 'base64').toString('latin1')).not.toContain(
        value.slice(4, 14),
      );
    }
  });

  it('scrubs a Basic header built from a configured value, leaving no part of it', () => {
    const r = new Redactor({ TOKEN: value });
    const header = `Authorization: Basic ${Buffer.from(`bot:${value}`).toString('base64')}`;
    expect(r.redact(header)).toBe('Authorization: Basic [REDACTED]');
  });
});

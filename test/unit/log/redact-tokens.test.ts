import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/log/redact.js';

// Known credential formats and credentials quoted in a report, as a run meets them in cluster output,
// agent output and the report; and the look-alikes next to them that ordinary output is full of.

const redact = (text: string) => new Redactor().redact(text);

describe('known credential formats', () => {
  const scrubbed: [string, string, string][] = [
    ['a Stripe live secret key', 'STRIPE=sk_live_51HxYzAbCdEfGh12345678IjKlMn ok', 'STRIPE=[REDACTED] ok'],
    ['a Stripe test key', 'key sk_test_4eC39HqLyjWDarjtT1zdp7dc', 'key [REDACTED]'],
    ['a Stripe restricted key', 'stripe: rk_live_51HxYzAbCdEfGh12345678', 'stripe: [REDACTED]'],
    ['a Stripe webhook secret', 'signing whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'signing [REDACTED]'],
    [
      'an AWS key id and its secret key in prose',
      'The Secret holds AKIAIOSFODNN7EXAMPLE with wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.',
      'The Secret holds [REDACTED] with [REDACTED].',
    ],
    [
      'an AWS secret key next to its name',
      'the AWS secret access key `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY` was rotated',
      'the AWS secret access key `[REDACTED]` was rotated',
    ],
    ['an AWS temporary key id', 'id ASIAJEXAMPLEXEG2JICE used', 'id [REDACTED] used'],
    ['a GitHub OAuth token', 'token gho_16C7e42F292c6912E7710c838347Ae178B4a', 'token [REDACTED]'],
    ['a GitHub app token', 'x ghs_0123456789abcdefghijABCDEFGHIJ012345 y', 'x [REDACTED] y'],
    [
      'a GitHub fine-grained token',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ',
      '[REDACTED]',
    ],
    ['a Slack bot token', 'bot xoxb-2718281828-3141592653-AbCdEfGhIjKl', 'bot [REDACTED]'],
    ['a Slack app token', 'app xapp-1-A0123456789-0123456789012-abcdef0123', 'app [REDACTED]'],
    [
      'a Slack webhook',
      'posting to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed',
      'posting to https://hooks.slack.com/services/[REDACTED] failed',
    ],
    [
      'a JWT',
      'token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLXBhcnQ',
      'token: [REDACTED]',
    ],
    [
      'a PEM private key over several lines',
      'key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACBhYmNk\n-----END OPENSSH PRIVATE KEY-----\ndone',
      'key:\n[REDACTED]\ndone',
    ],
    [
      'a PEM private key cut before its end',
      'tls.key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n',
      'tls.key:\n[REDACTED]\n',
    ],
    [
      'a bearer header',
      'curl -H "Authorization: Bearer abc.def-ghi_jkl"',
      'curl -H "Authorization: Bearer [REDACTED]"',
    ],
    [
      'a DSN with a password',
      'DATABASE_URL=postgres://payments:Pg-s3cret-9@db:5432/orders',
      'DATABASE_URL=postgres://payments:[REDACTED]@db:5432/orders',
    ],
    ['a DB_PASS env', 'DB_PASS=Zq8-secret', 'DB_PASS=[REDACTED]'],
    [
      'a credentials variable',
      'GOOGLE_CREDENTIALS=eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0',
      'GOOGLE_CREDENTIALS=[REDACTED]',
    ],
    ['a private key field', '"private_key": "MIIEvQIBADANBgkqhkiG9w0"', '"private_key": "[REDACTED]"'],
    ['an access key field', 'access_key: Zm9vYmFyYmF6cXV4', 'access_key: [REDACTED]'],
  ];
  it.each(scrubbed)('scrubs %s', (_what, input, expected) => {
    expect(redact(input)).toBe(expected);
  });
});

describe('credentials quoted in a report', () => {
  it('scrubs a database password and an AWS secret key quoted in prose, keeping the sentences', () => {
    const report = [
      '## Root cause',
      'The database password in `payments-db` is `Hunter2-prod-pw!`, and the pod logs show',
      'password authentication failed for user "payments".',
      'The AWS secret key is "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" (key id AKIAIOSFODNN7EXAMPLE).',
    ].join('\n');
    expect(redact(report)).toBe(
      [
        '## Root cause',
        'The database password in `payments-db` is `[REDACTED]`, and the pod logs show',
        'password authentication failed for user "payments".',
        'The AWS secret key is "[REDACTED]" (key id [REDACTED]).',
      ].join('\n'),
    );
  });

  it('keeps the names of Secrets and tokens quoted after those words', () => {
    const text = [
      'the password is stored in Secret `payments-db-credentials`',
      'the token `default-token-x7k2p` is mounted',
      'credentials `<set to the key password in secret db>`',
    ].join('\n');
    expect(redact(text)).toBe(text);
  });
});

describe('ordinary output next to the formats', () => {
  const kept: [string, string][] = [
    [
      'an image digest',
      'image: nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31',
    ],
    [
      'a git SHA beside an access key id',
      'AKIA rotation: commit 4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d shipped',
    ],
    [
      'a 40-character base64 word far from any AWS key',
      `${'x'.repeat(400)} Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy`,
    ],
    [
      'a secretKeyRef beside base64',
      'secretKeyRef: {name: db}\nchecksum: Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy',
    ],
    ['a Stripe prefix in prose', 'keys start with sk_live_ or sk_test_ followed by the key'],
    ['a Slack URL that is not a webhook', 'see https://slack.com/help/articles/115005265063'],
    ['a describe Secret size', 'password:  16 bytes'],
    [
      'an event about a missing Secret',
      'MountVolume.SetUp failed for volume "db" : secret "payments-db" not found',
    ],
    ['a prose line about a token', 'API_TOKEN: not set in the environment'],
  ];
  it.each(kept)('keeps %s', (_what, input) => {
    expect(redact(input)).toBe(input);
  });
});

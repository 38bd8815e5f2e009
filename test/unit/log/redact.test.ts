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

  it('leaves ordinary words alone when a key is set to a word, and lists it as unredacted without its value', () => {
    const r = new Redactor({
      ANTHROPIC_API_KEY: 'offline',
      HTTP_TOKEN: 'password',
      REAL: 'sk-ant-api03-Zx9Qw8Er7Ty6',
    });
    expect(r.redact('model server offline; password rotation pending; key sk-ant-api03-Zx9Qw8Er7Ty6')).toBe(
      'model server offline; password rotation pending; key [REDACTED:REAL]',
    );
    expect(r.unredacted.map((w) => w.name)).toEqual(['ANTHROPIC_API_KEY', 'HTTP_TOKEN']);
    expect(JSON.stringify(r.unredacted)).not.toMatch(/offline|password/);
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

describe('secret shapes planted in incidents and tool output (table)', () => {
  // [shape, input, expected]: each credential goes, the text around it stays.
  const scrubbed: [string, string, string][] = [
    [
      'Kubernetes env entry, JSON',
      '{"name":"AWS_SECRET_ACCESS_KEY","value":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
      '{"name":"AWS_SECRET_ACCESS_KEY","value":"[REDACTED]"}',
    ],
    [
      'Kubernetes env entry, JSON with spaces and a short password',
      '{ "name": "DB_PASSWORD", "value": "pw1" }',
      '{ "name": "DB_PASSWORD", "value": "[REDACTED]" }',
    ],
    [
      'Kubernetes env entry inside a JSON string (escaped quotes)',
      '"context": "env: [{\\"name\\":\\"STRIPE_API_KEY\\",\\"value\\":\\"rk_live_51HxYzAbCdEf\\"}]"',
      '"context": "env: [{\\"name\\":\\"STRIPE_API_KEY\\",\\"value\\":\\"[REDACTED]\\"}]"',
    ],
    [
      'env entry with value before name',
      '{"value":"s3cr3t-Value-9","name":"REDIS_PASSWORD"}',
      '{"value":"[REDACTED]","name":"REDIS_PASSWORD"}',
    ],
    [
      'Kubernetes env entry, YAML block',
      'env:\n  - name: GITHUB_TOKEN\n    value: gho16C7e42F292c6912E7710c838347Ae178B4a\n  - name: LOG_LEVEL\n    value: debug\n',
      'env:\n  - name: GITHUB_TOKEN\n    value: [REDACTED]\n  - name: LOG_LEVEL\n    value: debug\n',
    ],
    [
      'Kubernetes env entry, YAML flow mapping',
      '- {name: SESSION_SECRET, value: "kq3-Zx9-long-value"}',
      '- {name: SESSION_SECRET, value: "[REDACTED]"}',
    ],
    [
      'password in a URL',
      'dsn=postgres://app:PW@db:5432/orders?sslmode=require',
      'dsn=postgres://app:[REDACTED]@db:5432/orders?sslmode=require',
    ],
    [
      'password with @ and : in a URL',
      'mongodb+srv://admin:p@ss:w0rd@cluster0.example.net/?retryWrites=true',
      'mongodb+srv://admin:[REDACTED]@cluster0.example.net/?retryWrites=true',
    ],
    [
      'token as URL user',
      'git clone https://Ab12Cd34Ef56Gh78Ij90Kl12Mn34@github.com/org/repo.git',
      'git clone https://[REDACTED]@github.com/org/repo.git',
    ],
    ['KEY=value, password family', 'DB_PASSWORD=pw1 started', 'DB_PASSWORD=[REDACTED] started'],
    [
      'KEY=value, *_KEY family, quoted with spaces',
      'export SIGNING_KEY="correct horse battery staple"',
      'export SIGNING_KEY="[REDACTED]"',
    ],
    [
      'KEY=value, *_KEY family, hex',
      'ENCRYPTION_KEY=0f3a9c2e7b1d4f6a8c0e2b4d6f8a1c3e',
      'ENCRYPTION_KEY=[REDACTED]',
    ],
    ['YAML, *_TOKEN family', '  VAULT_TOKEN: hvs.CAESIJlU9Xz0', '  VAULT_TOKEN: [REDACTED]'],
    ['YAML, *_PASSWORD family', '  MYSQL_ROOT_PASSWORD: rootpw', '  MYSQL_ROOT_PASSWORD: [REDACTED]'],
    ['JSON, *_secret family', '"client_secret": "Zm9vYmFyYmF6cXV4"', '"client_secret": "[REDACTED]"'],
    // Names in any case: the quick look for the secret words before the full pattern ignores case too.
    ['KEY=value, camel-case name', 'apiKey=Zx9kq3LongValue42 set', 'apiKey=[REDACTED] set'],
    ['YAML, camel-case *Token', '  authToken: Qm9vYmFyYmF6cXV4', '  authToken: [REDACTED]'],
    ['KEY=value, capitalised Password', 'Password=hunter2', 'Password=[REDACTED]'],
    [
      'a secret pair deep in a long text',
      `${'pod payments-api restarted; memory limit 512Mi. '.repeat(2000)}DB_PASSWORD=pw1`,
      `${'pod payments-api restarted; memory limit 512Mi. '.repeat(2000)}DB_PASSWORD=[REDACTED]`,
    ],
  ];
  it.each(scrubbed)('scrubs %s', (_shape, input, expected) => {
    expect(new Redactor().redact(input)).toBe(expected);
  });

  // Near misses: names and URLs that only look like the shapes above.
  const kept: [string, string][] = [
    ['an id next to a key name', '{"name":"KEY_ID","value":"x"}'],
    ['a non-secret env entry', '{"name":"LOG_LEVEL","value":"debug"}'],
    [
      'an env entry taken from a Secret',
      '{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"db","key":"password"}}}',
    ],
    ['the name of a Secret', '{"name":"SECRET_NAME","value":"payments-db-credentials"}'],
    ['a URL without userinfo', 'pull https://registry.example.com/v2/payments/manifests/latest failed'],
    ['an scp-style git address', 'git@github.com:org/repo.git'],
    ['a plain user in a URL', 'ssh://git@github.com/org/repo.git'],
    ['a variable reference as URL password', 'postgres://app:${DB_PASSWORD}@db/orders'],
    ['PRIMARY_KEY in prose', 'The PRIMARY_KEY column on orders is missing'],
    ['PRIMARY_KEY in a schema', 'PRIMARY_KEY: order_id_and_line_number'],
    [
      'a public key name',
      "PAYMENTS_PUBLIC_KEY:  <set to the key 'publishable-key' in secret 'web'>  Optional: false",
    ],
    ['lower-case *_key in config', 'partition_key: tenant_id_hash'],
    ['a variable reference', 'DB_PASSWORD=${DB_PASSWORD}'],
    ['a token lifetime', 'TOKEN_TTL=3600'],
    ['a masked value', 'API_TOKEN: ****'],
  ];
  it.each(kept)('keeps %s', (_shape, input) => {
    expect(new Redactor().redact(input)).toBe(input);
  });
});

import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { agentSecrets, logSecretProblems, resolveSecrets } from '../../../src/config/secrets.js';
import { createLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { exposureProblem, isLoopbackHost } from '../../../src/server/exposure.js';
import { startHttpServer } from '../../../src/server/http.js';

describe("the daemon's own secrets", () => {
  it('are read by default from TRIAGE_RUNNER_HTTP_TOKEN and PAGERDUTY_WEBHOOK_SECRET, and never handed to an agent', () => {
    const config = configSchema.parse({});
    const { values } = resolveSecrets(config, {
      ANTHROPIC_API_KEY: 'sk-ant-1',
      TRIAGE_RUNNER_HTTP_TOKEN: 'tok-1',
      PAGERDUTY_WEBHOOK_SECRET: 'pd-1',
    });
    expect(values).toEqual({
      ANTHROPIC_API_KEY: 'sk-ant-1',
      HTTP_TOKEN: 'tok-1',
      PAGERDUTY_WEBHOOK_SECRET: 'pd-1',
    });
    expect(agentSecrets(config, values)).toEqual({ ANTHROPIC_API_KEY: 'sk-ant-1' });
  });

  it('keeps the audit key and notify credentials away from agents too', () => {
    const config = configSchema.parse({
      secrets: {
        ANTHROPIC_API_KEY: { env: 'ANTHROPIC_API_KEY' },
        AUDIT_KEY: { env: 'AUDIT_KEY' },
        SLACK_BOT_TOKEN: { env: 'SLACK_BOT_TOKEN' },
      },
      audit: { hmac_secret: 'AUDIT_KEY' },
      notify: { sinks: [{ name: 's', type: 'slack', channel: 'C1', secret: 'SLACK_BOT_TOKEN' }] },
    });
    const values = { ANTHROPIC_API_KEY: 'a', AUDIT_KEY: 'b', SLACK_BOT_TOKEN: 'c' };
    expect(agentSecrets(config, values)).toEqual({ ANTHROPIC_API_KEY: 'a' });
  });
});

describe('listen address exposure', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.10.0.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['triage.internal', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
    expect(exposureProblem(host, undefined) === undefined).toBe(loopback);
    expect(exposureProblem(host, 'a-token-of-16-ch')).toBeUndefined();
    // A token short enough to guess is refused only where other machines can reach the port.
    expect(exposureProblem(host, 'x') === undefined).toBe(loopback);
    expect(exposureProblem(host, 'a-token-of-15-c') === undefined).toBe(loopback);
  });
});

describe('a secrets: block', () => {
  // The README's Slack example lists only the sinks' secrets.
  const slackOnly = {
    secrets: { SLACK_BOT_TOKEN: { env: 'SLACK_BOT_TOKEN' } },
    notify: { sinks: [{ name: 's', type: 'slack', channel: 'C1', secret: 'SLACK_BOT_TOKEN' }] },
  };
  const env = {
    ANTHROPIC_API_KEY: 'sk-ant-live-9f8e7d6c5b4a',
    TRIAGE_RUNNER_HTTP_TOKEN: 'tok-2c4e6a8b0d1f',
    SLACK_BOT_TOKEN: 'xoxb-1-2-3abcdef',
  };

  it('adds to the built-in secrets: the agent key and HTTP_TOKEN are still read', () => {
    const { values } = resolveSecrets(configSchema.parse(slackOnly), env);
    expect(values).toEqual({
      ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
      HTTP_TOKEN: env.TRIAGE_RUNNER_HTTP_TOKEN,
      SLACK_BOT_TOKEN: env.SLACK_BOT_TOKEN,
    });
  });

  it('overrides a built-in entry it names, and a sink may use a built-in secret without redeclaring it', () => {
    const config = configSchema.parse({
      secrets: { ANTHROPIC_API_KEY: { env: 'MY_CLAUDE_KEY' } },
      notify: { sinks: [{ name: 'pd', type: 'pagerduty', secret: 'PAGERDUTY_WEBHOOK_SECRET' }] },
    });
    expect(config.secrets.ANTHROPIC_API_KEY).toEqual({ env: 'MY_CLAUDE_KEY' });
    expect(config.secrets.HTTP_TOKEN).toEqual({ env: 'TRIAGE_RUNNER_HTTP_TOKEN' });
  });

  it('keeps /v1/* behind HTTP_TOKEN on loopback when the token is exported', async () => {
    const { values } = resolveSecrets(configSchema.parse(slackOnly), env);
    const server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      token: values.HTTP_TOKEN,
      readiness: async () => ({ ok: true, checks: [] }),
      metrics: { render: async () => '', contentType: 'text/plain' },
      routes: [
        { name: 'probe', plugin: async (app) => void app.get('/v1/probe', async () => ({ ok: true })) },
      ],
    });
    try {
      const base = `http://127.0.0.1:${server.port}/v1/probe`;
      expect((await fetch(base)).status).toBe(401);
      const ok = await fetch(base, { headers: { authorization: `Bearer ${env.TRIAGE_RUNNER_HTTP_TOKEN}` } });
      expect(ok.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('secret problems in the log', () => {
  it("name the secret in the redacting logger's line: a too-short key and an unset one, never [REDACTED] for the name", () => {
    const config = configSchema.parse({
      secrets: { SLACK_BOT_TOKEN: { env: 'SLACK_BOT_TOKEN' } },
    });
    const resolved = resolveSecrets(config, { ANTHROPIC_API_KEY: 'abc' });
    const redactor = new Redactor(resolved.values);
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      redactor,
      destination: { write: (l: string) => void lines.push(l) },
    });
    logSecretProblems(log, resolved, redactor.unredacted);
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; secretName?: string });
    expect(parsed.find((l) => l.msg === 'secret too weak to redact')?.secretName).toBe('ANTHROPIC_API_KEY');
    expect(lines.join('')).not.toContain('[REDACTED]');
    expect(lines.join('')).not.toContain('"abc"');
  });
});

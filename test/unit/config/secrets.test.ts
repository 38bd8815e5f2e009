import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { agentSecrets, resolveSecrets } from '../../../src/config/secrets.js';
import { exposureProblem, isLoopbackHost } from '../../../src/server/exposure.js';

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
    expect(exposureProblem(host, 'a-token')).toBeUndefined();
  });
});

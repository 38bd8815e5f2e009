import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../../src/cli/io.js';
import { ConfigError, loadConfig } from '../../../src/config/index.js';

function problems(flags: Record<string, unknown>): string[] {
  try {
    loadConfig({ env: {}, flags });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

const SECRETS = { SLACK_BOT_TOKEN: { env: 'SLACK_BOT_TOKEN' }, HOOK_SECRET: { env: 'HOOK_SECRET' } };

describe('notify configuration', () => {
  it('defaults to no sinks, 12 attempts from 5s doubling to 10m, and a 24h catch-up window', () => {
    const { config } = loadConfig({ env: {} });
    expect(config.notify).toEqual({
      sinks: [],
      retry: { max_attempts: 12, base_delay: 5000, max_delay: 600_000 },
      request_timeout: 15_000,
      catch_up_window: 86_400_000,
      max_report_bytes: 1024 * 1024,
    });
    expect(config.http.public_url).toBeUndefined();
  });

  it('reports every sink problem with its path: unknown type, missing channel or url, undeclared secret', () => {
    const found = problems({
      secrets: SECRETS,
      notify: {
        sinks: [
          { name: 'teams', type: 'teams', secret: 'HOOK_SECRET' },
          { name: 'slack', type: 'slack', secret: 'SLACK_BOT_TOKEN' },
          { name: 'hook', type: 'webhook', secret: 'SIGNING', channel: '#x' },
          { name: 'hook', type: 'webhook', url: 'ftp://example.internal', secret: 'HOOK_SECRET' },
        ],
      },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'notify.sinks.0.type: expected one of "slack", "webhook", "pagerduty"; got "teams"',
        'notify.sinks.1.channel: a slack sink needs channel: a channel ID such as C0123456789 (or #name); got nothing',
        'notify.sinks.2.url: a webhook sink needs url: where to POST; got nothing',
        'notify.sinks.2.channel: channel applies to slack sinks only; remove it from this webhook sink; got "#x"',
        'notify.sinks.2.secret: SIGNING is not declared under secrets:; add `SIGNING: { env: SIGNING }` (or file: PATH) there; got (value hidden: it may be a secret)',
        'notify.sinks.3.url: expected an http:// or https:// URL; got "ftp://example.internal"',
        'notify.sinks.3.name: sink name hook is used twice; got "hook"',
      ]),
    );
  });

  it('checks sinks even when another key is wrong, so that one run shows every problem', () => {
    const found = problems({
      scheduling: { max_concurrent: 'many' },
      notify: { sinks: [{ name: 'pd', type: 'pagerduty', secret: 'PD_KEY' }] },
    });
    expect(found).toContain('scheduling.max_concurrent: expected number; got "many"');
    expect(
      found.some((p) => p.startsWith('notify.sinks.0.secret: PD_KEY is not declared under secrets:')),
    ).toBe(true);
  });

  it('accepts the sinks shown commented out in config.example.yaml', () => {
    const text = readFileSync(path.join(PACKAGE_ROOT, 'configs', 'config.example.yaml'), 'utf8');
    const block = text.slice(text.indexOf('  # For example'), text.indexOf('  # Every sink takes api_url'));
    const yaml = block
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^ {2}# {2}/, ''))
      .join('\n');
    const sinks = parse(yaml) as Record<string, unknown>[];
    expect(sinks.map((s) => s.type)).toEqual(['slack', 'webhook', 'pagerduty']);
    const secrets = Object.fromEntries(
      ['SLACK_BOT_TOKEN', 'WEBHOOK_SIGNING_SECRET', 'PAGERDUTY_ROUTING_KEY', 'PAGERDUTY_API_TOKEN'].map(
        (n) => [n, { env: n }],
      ),
    );
    expect(problems({ secrets, notify: { sinks } })).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../../src/config/schema.js';
import { worstCaseDrainMs } from '../../../src/daemon/shutdown.js';

// The single-host deployment files (deploy/systemd, deploy/compose, the Dockerfile) give the daemon
// time for its worst-case graceful shutdown, probe /healthz, and start node with the memory flag.

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Seconds a default-configured daemon may need after SIGTERM: drain, stop escalation, notifications. */
function worstCaseShutdownSeconds(): number {
  const notifyCloseMs = 10_000;
  return Math.ceil((worstCaseDrainMs(configSchema.parse({})) + notifyCloseMs) / 1000);
}

/** "90s", "1m30s" or a bare number of seconds, in seconds. */
function seconds(value: string): number {
  const m = /^(?:(\d+)m)?(?:(\d+)s?)?$/.exec(value.trim());
  if (!m || (!m[1] && !m[2])) throw new Error(`not a duration: ${value}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}

/** The value of `key=` in a systemd unit (the last one wins, as in systemd). */
function unitValue(unit: string, key: string): string | undefined {
  const lines = unit.split('\n').filter((l) => l.startsWith(`${key}=`));
  return lines.at(-1)?.slice(key.length + 1);
}

describe('single-host deployment files', () => {
  it('computes 81 s as the default worst-case shutdown (30 s drain + 2 × 20 s stop grace + 1 s + 10 s notify)', () => {
    expect(worstCaseShutdownSeconds()).toBe(81);
  });

  it('systemd unit: stop timeout covers the worst-case shutdown, secrets from an EnvironmentFile, a non-root user', () => {
    const unit = read('deploy/systemd/triage-runner.service');
    expect(seconds(unitValue(unit, 'TimeoutStopSec') ?? '0')).toBeGreaterThanOrEqual(
      worstCaseShutdownSeconds(),
    );
    expect(unitValue(unit, 'KillSignal')).toBe('SIGTERM');
    expect(unitValue(unit, 'EnvironmentFile')).toMatch(/secrets\.env$/);
    expect(unitValue(unit, 'User')).toBe('triage');
    expect(unitValue(unit, 'ExecStart')).toMatch(/node --max-semi-space-size=2 \S+main\.js daemon/);
  });

  it('systemd unit: restarts on any exit but a requested stop, and reloads with SIGHUP', () => {
    const unit = read('deploy/systemd/triage-runner.service');
    expect(unitValue(unit, 'Restart')).toBe('always');
    expect(unitValue(unit, 'ExecReload')).toBe('/bin/kill -HUP $MAINPID');
  });

  it('compose file: stop grace covers the worst-case shutdown, healthcheck asks /healthz, workspaces and engine wired', () => {
    const compose = parseYaml(read('deploy/compose/compose.yaml')) as {
      services: Record<string, Record<string, unknown>>;
    };
    const daemon = compose.services.daemon as {
      stop_grace_period: string;
      healthcheck: { test: string[] };
      volumes: string[];
      environment: Record<string, string>;
      entrypoint: string[];
      build: { dockerfile: string };
    };
    expect(seconds(daemon.stop_grace_period)).toBeGreaterThanOrEqual(worstCaseShutdownSeconds());
    expect(daemon.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8742/healthz');
    expect(daemon.volumes).toContainEqual(expect.stringMatching(/:\/var\/lib\/triage-runner$/));
    expect(daemon.environment.DOCKER_HOST).toMatch(/^unix:\/\//);
    expect(daemon.volumes).toContainEqual(expect.stringContaining(daemon.environment.DOCKER_HOST!.slice(7)));
    expect(daemon.entrypoint).toContain('--max-semi-space-size=2');
    expect(daemon.build.dockerfile).toBe('Dockerfile');
  });

  it('Dockerfile starts node with the memory flag', () => {
    expect(read('Dockerfile')).toMatch(
      /^ENTRYPOINT \["node", "--max-semi-space-size=2", "\/app\/dist\/cli\/main\.js"\]$/m,
    );
  });
});

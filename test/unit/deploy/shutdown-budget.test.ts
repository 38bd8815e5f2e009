import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { configSchema } from '../../../src/config/schema.js';
import { interruptGraceMs, worstCaseDrainMs } from '../../../src/daemon/shutdown.js';

// The daemon's worst-case stop (shutdown_timeout, then the stop escalation) must fit the time the
// orchestrator gives it before SIGKILL, or in-flight runs are killed mid-write and their state is lost.
// Computed from the shipped configuration over the code's defaults, so neither can drift alone.

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DEPLOY = path.join(ROOT, 'deploy/kubernetes');
/** Room after the drain for recording interrupted runs, closing the store, executor and HTTP. */
const MARGIN_MS = 10_000;

function podGraceSeconds(): number {
  const docs = parseAllDocuments(readFileSync(path.join(DEPLOY, 'deployment.yaml'), 'utf8')).map(
    (d) =>
      d.toJS() as {
        kind?: string;
        spec?: { template?: { spec?: { terminationGracePeriodSeconds?: number } } };
      },
  );
  const deployment = docs.find((d) => d.kind === 'Deployment');
  const seconds = deployment?.spec?.template?.spec?.terminationGracePeriodSeconds;
  if (seconds === undefined)
    throw new Error('deployment.yaml sets no terminationGracePeriodSeconds (default 30 s)');
  return seconds;
}

const shippedConfig = () =>
  configSchema.parse(parseYaml(readFileSync(path.join(DEPLOY, 'config/config.yaml'), 'utf8')) as unknown);

describe('shutdown budget', () => {
  it('adds shutdown_timeout and the stop escalation (2 × stop_grace + 1 s): 71 s with the defaults', () => {
    const defaults = configSchema.parse({});
    expect(interruptGraceMs(defaults)).toBe(41_000);
    expect(worstCaseDrainMs(defaults)).toBe(71_000);
    expect(
      worstCaseDrainMs({
        ...defaults,
        scheduling: { ...defaults.scheduling, shutdown_timeout: 5000 },
        agent: { ...defaults.agent, stop_grace: 2000 },
      }),
    ).toBe(10_000);
  });

  it('fits the Kubernetes pod grace period with room for the last writes', () => {
    const worst = worstCaseDrainMs(shippedConfig());
    expect(
      podGraceSeconds() * 1000,
      `terminationGracePeriodSeconds must be ≥ ${(worst + MARGIN_MS) / 1000} s: raise it in deploy/kubernetes/deployment.yaml or lower scheduling.shutdown_timeout / agent.stop_grace`,
    ).toBeGreaterThanOrEqual(worst + MARGIN_MS);
  });
});

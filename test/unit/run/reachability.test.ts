import { describe, expect, it } from 'vitest';
import { unreachableProviderProblem } from '../../../src/run/reachability.js';
import { ProgressTracker } from '../../../src/run/progress.js';
import { createDockerEngine } from '../../../src/engines/docker/index.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { silentLogger } from '../../../src/log/logger.js';
import { claude } from '../../../src/agents/claude.js';
import { testConfig } from '../../support/runs.js';

// The preflight names a model endpoint on loopback that the agent's container cannot reach.

const local = { anthropicBaseUrl: 'http://127.0.0.1:8088' };

describe('model endpoint reachability', () => {
  it('flags a loopback provider URL for a docker engine on the default bridge network, saying what to set', () => {
    const engine = createDockerEngine(testConfig('/tmp/tr-reach'), silentLogger());
    const problem = unreachableProviderProblem(local, engine);
    expect(problem).toContain(
      'providers.anthropic_base_url (or ANTHROPIC_BASE_URL) is http://127.0.0.1:8088',
    );
    expect(problem).toContain('cannot reach');
    expect(problem).toContain('docker.network: host');
  });

  it('accepts loopback with docker.network host and on the process engine, and any non-loopback address', () => {
    const host = createDockerEngine(
      testConfig('/tmp/tr-reach', { docker: { network: 'host' } }),
      silentLogger(),
    );
    expect(unreachableProviderProblem(local, host)).toBeUndefined();
    const processEngine = createProcessEngine(
      testConfig('/tmp/tr-reach', { engine: 'process' }),
      silentLogger(),
    );
    expect(unreachableProviderProblem(local, processEngine)).toBeUndefined();
    const bridge = createDockerEngine(testConfig('/tmp/tr-reach'), silentLogger());
    expect(unreachableProviderProblem({ anthropicBaseUrl: 'http://10.0.2.2:8088' }, bridge)).toBeUndefined();
    expect(unreachableProviderProblem({ openaiBaseUrl: 'http://localhost:9/v1' }, bridge)).toContain(
      'providers.openai_base_url',
    );
  });
});

describe('run progress', () => {
  it("shows the CLI's model API retry until the next turn", () => {
    const now = new Date('2026-03-01T10:00:00Z');
    const tracker = new ProgressTracker(claude.progress?.(), now, () => now);
    const retry = { type: 'system', subtype: 'api_retry', attempt: 3, max_retries: 10, error_status: null };
    tracker.push(Buffer.from(`${JSON.stringify(retry)}\n`));
    expect(tracker.snapshot().retrying).toMatch(
      /^retrying the model API: could not connect .*attempt 3 of 10$/,
    );
    const turn = {
      type: 'assistant',
      message: { usage: { input_tokens: 1, output_tokens: 1 }, content: [] },
    };
    tracker.push(Buffer.from(`${JSON.stringify(turn)}\n`));
    expect(tracker.snapshot()).toMatchObject({ turns: 1 });
    expect(tracker.snapshot().retrying).toBeUndefined();
  });
});

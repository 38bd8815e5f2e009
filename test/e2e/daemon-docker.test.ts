// Acceptance: the real `triage-runner daemon --engine docker --agent claude` investigates a dropped
// incident end to end on the real container engine. The real Claude CLI cannot run in the FROM-scratch
// test image, so agent.command points the claude adapter's invocation at the image's fake agent (which
// prints Claude's JSON result); everything else — intake, context, adapter, engine, audit — is real.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerEngine } from '../../src/engines/docker/index.js';
import { RUN_LABELS } from '../../src/engines/labels.js';
import { silentLogger } from '../../src/log/logger.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../support/engine.js';
import { tempDir, testConfig } from '../support/runs.js';

const docker = await requireEngine();
const API_KEY = 'sk-ant-e2e-secret-0123456789abcdef';

describe.skipIf(!docker)('triage-runner daemon --engine docker --agent claude', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let daemon: CliDaemon | undefined;

  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-e2e-docker-');
  });

  afterAll(async () => {
    await daemon?.stop();
    await root?.cleanup();
  });

  it('investigates a dropped incident: state succeeded, result.json and prompt-sent.md correct, container gone', async () => {
    const incidents = path.join(root.dir, 'incidents');
    await mkdir(incidents, { recursive: true });
    daemon = await startCliDaemon({
      dir: root.dir,
      config: {
        workspaces_root: incidents,
        agent: {
          image: TEST_IMAGE,
          command: '/usr/local/bin/fake-agent',
          timeout: '2m',
          report_sections: ['Summary', 'Root Cause', 'Evidence', 'Remediation'],
        },
        docker: { host: dockerHost(), memory: '256m', network: 'none' },
        // The fake agent makes no model calls, and the FROM-scratch test image has no node for the
        // gateway's bridge (test/e2e/gateway-docker-claude.test.ts runs the gateway in the agent image).
        gateway: { enabled: false },
      },
      args: ['--engine', 'docker', '--agent', 'claude'],
      env: {
        PATH: process.env.PATH,
        HOME: root.dir,
        ANTHROPIC_API_KEY: API_KEY,
      },
    });
    const tail = daemon.tail;

    // Dropped the way producers do: write a temp file, rename it into place.
    const ws = path.join(incidents, 'crashloop-web-1');
    await dropIncident(ws, {
      incidentId: 'e2e-docker-1',
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'shop' },
      faultType: 'CrashLoop',
      severity: 'high',
      context: { note: `quotes ' " $(whoami) \`id\` ünïcödé` },
      timestamp: '2026-11-22T01:00:00Z',
    });

    const { state, bundle, result = {} } = await waitForFinalRun(ws, 90_000, tail);
    expect(state.state, tail()).toBe('succeeded');
    const runId = path.basename(bundle);

    expect(result).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      agent: 'claude',
      engine: 'docker',
      tokens: { input: 123, output: 45 },
      costUsd: 0.0012,
      turns: 1,
      report: { path: '/workspace/output/investigation.md', missingSections: [] },
    });
    expect((result.report as { bytes: number }).bytes).toBeGreaterThan(200);

    const promptSent = await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8');
    expect(promptSent).toContain('<incident>');
    expect(promptSent).toContain('e2e-docker-1');
    expect(promptSent).toContain(String(result.promptSha256));

    const invocation = await readFile(path.join(bundle, 'invocation.json'), 'utf8');
    expect(invocation).not.toContain(API_KEY);
    expect(JSON.parse(invocation)).toMatchObject({
      engine: 'docker',
      image: TEST_IMAGE,
      command: '/usr/local/bin/fake-agent',
      secretEnv: { ANTHROPIC_API_KEY: '[REDACTED]' },
    });
    expect(JSON.parse(invocation).args).toEqual(
      expect.arrayContaining(['-p', '--output-format', 'stream-json', '--append-system-prompt-file']),
    );
    expect(await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8')).toContain(
      'fake-agent: started as uid 1000',
    );
    expect(await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8')).toContain('## Root Cause');

    const engine = createDockerEngine(
      testConfig(root.dir, { docker: { host: dockerHost() } }),
      silentLogger(),
    );
    expect(await engine.list({ [RUN_LABELS.run]: runId })).toEqual([]);
    const audit = (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(audit).toEqual(
      expect.arrayContaining(['claimed', 'preparing', 'context_built', 'launched', 'finished']),
    );
  });
});

// An agent image that cannot run the model gateway's bridge (no `node`), on the real engine: readiness
// says so with what to do, and a run that fails on it says why instead of the engine init's bare
// "failed to exec pid1". The image is built FROM scratch with only a static file in it.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { createDockerEngine } from '../../../src/engines/docker/index.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { AGENT_IMAGE, dockerHost, requireAgentImage, requireEngine } from '../../support/engine.js';
import { startAnthropic, type AnthropicFake } from '../../support/providers/anthropic.js';
import { emptySkills, fakeAdapter, makeWorkspace, tempDir, testConfig } from '../../support/runs.js';

const docker = await requireEngine();
// Outside CI a missing agent image skips the one test that needs it; with CI set it is an error.
const hasAgentImage = docker ? await requireAgentImage(docker) : false;
const NO_NODE_IMAGE = 'triage-runner-test-no-node:latest';
const SECRET = 'sk-ant-test-secret-value-0123456789';
const HINT =
  /the agent image triage-runner-test-no-node:latest has no node on its PATH; the model gateway's bridge needs it: build FROM runners\/ .*or add node/;

/** An image with nothing but a static file: no shell, no node. */
async function buildNoNodeImage(engine: Docker, dir: string): Promise<void> {
  await writeFile(path.join(dir, 'Dockerfile'), 'FROM scratch\nCOPY note.txt /note.txt\n');
  await writeFile(path.join(dir, 'note.txt'), 'nothing to run here\n');
  const stream = await engine.buildImage(
    { context: dir, src: ['Dockerfile', 'note.txt'] },
    { t: NO_NODE_IMAGE },
  );
  await new Promise<void>((resolve, reject) =>
    engine.modem.followProgress(stream, (err) => (err ? reject(err) : resolve())),
  );
}

describe.skipIf(!docker)('an agent image without node on the docker engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let provider: AnthropicFake;
  beforeAll(async () => {
    root = await tempDir('triage-bridge-image-');
    await buildNoNodeImage(docker!, root.dir);
    provider = await startAnthropic();
  });
  afterAll(async () => {
    await provider?.close();
    await docker
      ?.getImage(NO_NODE_IMAGE)
      .remove({ force: true })
      .catch(() => undefined);
    await root?.cleanup();
  });

  function executorFor(image: string) {
    // The gateway carries the agent's calls, so its bridge runs in the image in front of the CLI.
    const config = testConfig(root.dir, {
      agent: { image },
      docker: { host: dockerHost(), network: 'none' },
      gateway: { enabled: true },
      providers: { anthropic_base_url: provider.url },
    });
    return createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor({ ANTHROPIC_API_KEY: SECRET }),
      secrets: { ANTHROPIC_API_KEY: SECRET },
      audit: new AuditLog(),
      env: {},
      engine: createDockerEngine(config, silentLogger()),
      skills: emptySkills(),
      daemonId: 'daemon-test',
      agents: () => fakeAdapter('claude'),
    });
  }

  it('is not ready: the agent check says the image has no node for the bridge and what to do', async () => {
    const executor = executorFor(NO_NODE_IMAGE);
    try {
      const ready = await executor.readiness();
      expect(ready.ok).toBe(false);
      expect(ready.checks.find((c) => c.name === 'agent')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(HINT),
      });
      // The engine's own words stay in the detail for whoever digs further.
      expect(ready.checks.find((c) => c.name === 'agent')?.detail).toMatch(/node --version: .*node/);
    } finally {
      await executor.close?.();
    }
  });

  it.skipIf(!hasAgentImage)('is ready with the agent image built from runners/, which has node', async () => {
    const executor = executorFor(AGENT_IMAGE);
    try {
      const ready = await executor.readiness();
      expect(ready.checks.find((c) => c.name === 'agent')).toEqual({ name: 'agent', ok: true });
    } finally {
      await executor.close?.();
    }
  });

  it("fails a run on it with the same hint as its reason, not the engine init's bare error", async () => {
    const executor = executorFor(NO_NODE_IMAGE);
    try {
      const outcome = await executor.run({
        workspace: await makeWorkspace(root.dir),
        runId: `no-node-${process.pid}-${Date.now()}`,
        attempt: 1,
        signal: new AbortController().signal,
        log: silentLogger(),
      });
      expect(outcome.status).toBe('failed');
      expect(outcome.reason).toMatch(HINT);
    } finally {
      await executor.close?.();
    }
  });
});

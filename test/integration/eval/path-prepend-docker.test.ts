// RunOverrides.pathPrepend under the docker engine: the folder is mounted read-only into the agent
// container and its command is found first on PATH (how the eval's kubectl shim reaches a containerised
// agent), while the agent can still record into its run folder's agent-notes/.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTAINER_PATH_PREPEND } from '../../../src/run/layout.js';
import { TEST_IMAGE, dockerHost, requireEngine, requireTestImage } from '../../support/engine.js';
import { makeWorkspace, tempDir, testConfig } from '../../support/runs.js';
import { runShAgent } from '../../support/sh-agent.js';

const docker = await requireEngine();

describe.skipIf(!docker)('pathPrepend on the docker engine', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    await requireTestImage(docker!);
    root = await tempDir('triage-path-prepend-');
    await chmod(root.dir, 0o755);
  });
  afterAll(async () => root?.cleanup());

  it('mounts the folder read-only and runs its kubectl before any other', async () => {
    const shim = path.join(root.dir, 'shim');
    await mkdir(shim, { mode: 0o755 });
    await writeFile(
      path.join(shim, 'kubectl'),
      '#!/bin/sh\necho "stub kubectl $*"\necho "$*" >> "$TRIAGE_NOTES_DIR/stub-calls"\n',
      {
        mode: 0o755,
      },
    );
    const workspace = await makeWorkspace(root.dir);
    const runId = `prepend-${process.pid}-${Date.now()}`;
    const config = testConfig(root.dir, {
      agent: { image: TEST_IMAGE },
      docker: { host: dockerHost(), network: 'none' },
      // The mount mechanism alone: with the kubectl guard its `kubectl` would come first, and the
      // FROM-scratch test image has no node to run it (test/integration/kubectl/guard-docker.test.ts).
      kubectl: { guard: false },
    });
    const { outcome, bundle, stdout } = await runShAgent(
      config,
      workspace,
      runId,
      [
        'echo "path=$PATH"',
        'kubectl get pods -n shop',
        'if touch "$(dirname "$(command -v kubectl)")/probe" 2>/dev/null; then echo shim_write=ok; else echo shim_write=denied; fi',
      ],
      { pathPrepend: [shim] },
    );
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(stdout).toContain(`path=${CONTAINER_PATH_PREPEND}/0:`);
    expect(stdout).toContain('stub kubectl get pods -n shop');
    expect(stdout).toContain('shim_write=denied');
    expect(await readFile(path.join(bundle, 'agent-notes', 'stub-calls'), 'utf8')).toBe('get pods -n shop\n');
  });
});

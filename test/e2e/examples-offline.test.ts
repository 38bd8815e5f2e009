// The README's offline path for the saved incidents: `triage-runner daemon --config
// test/fixtures/examples/offline.yaml` with the REAL Claude Code CLI on the daemon's host, the stand-in
// model (the eval scripts, and a generic first look for an incident it has no script for) and the
// stand-in kubectl first on PATH. Each of examples/incidents/* dropped into the daemon's root is
// triaged and investigated against its own saved cluster through the kubectl broker, and ends with a
// report in the k8s4agents template.
import { cp, readFile, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCallLog } from '../../src/kubectl/broker/calls.js';
import { requireCli } from '../support/agent-clis.js';
import { startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import {
  loadScripts,
  startScriptedModel,
  type ScriptedModel,
} from '../support/providers/scripted-anthropic.js';
import { REPO_ROOT, tempDir } from '../support/runs.js';
import { RUN_FILES } from '../../src/workspace/layout.js';

const cli = requireCli('claude');
const EXAMPLES = path.join(REPO_ROOT, 'examples', 'incidents');
const CONFIG = path.join(REPO_ROOT, 'test', 'fixtures', 'examples', 'offline.yaml');
const FAKE_KUBECTL = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-kubectl');

describe.skipIf(!cli)(
  'the saved examples offline: daemon, real Claude CLI, stand-in model and kubectl',
  () => {
    let root: { dir: string; cleanup: () => Promise<void> };
    let model: ScriptedModel;
    let daemon: CliDaemon | undefined;
    let incidents: string;

    beforeAll(async () => {
      root = await tempDir('triage-examples-offline-');
      incidents = path.join(root.dir, 'incidents');
      // As scripted-model-server.ts serves it: the eval cases' scripts, a generic look for anything else.
      model = await startScriptedModel(
        await loadScripts(
          path.join(REPO_ROOT, 'test/fixtures/evals/scripted'),
          path.join(REPO_ROOT, 'examples/evals'),
        ),
      );
      daemon = await startCliDaemon({
        dir: root.dir,
        config: { workspaces_root: incidents },
        configFile: CONFIG,
        args: [],
        env: {
          PATH: `${FAKE_KUBECTL}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
          HOME: root.dir,
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'local-stand-in-key-0001',
          TRIAGE_RUNNER_AGENT_COMMAND: cli ?? '',
          TRIAGE_RUNNER_WORKSPACES_ROOT: incidents,
          TRIAGE_RUNNER_HTTP_PORT: '0',
          SKILLS_CACHE_DIR: path.join(root.dir, 'skills'),
        },
      });
    }, 90_000);

    afterAll(async () => {
      await daemon?.stop();
      await model?.close();
      await root?.cleanup();
    });

    it('investigates each shipped example against its own saved cluster and writes its report', async () => {
      const names = (await readdir(EXAMPLES, { withFileTypes: true }))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
      expect(names).toHaveLength(5);
      // Dropped as a producer would: the whole folder appears at once (incident.json and its permissions).
      for (const name of names) {
        await cp(path.join(EXAMPLES, name), path.join(root.dir, 'staging', name), { recursive: true });
        await rename(path.join(root.dir, 'staging', name), path.join(incidents, name));
      }
      const tail = daemon?.tail ?? (() => '');
      for (const name of names) {
        const ws = path.join(incidents, name);
        const incident = JSON.parse(await readFile(path.join(ws, 'incident.json'), 'utf8')) as {
          namespace: string;
          resource: { name: string };
        };
        const { state, bundle, result = {} } = await waitForFinalRun(ws, 150_000, tail);
        expect(state.state, `${name}: ${JSON.stringify(result)} ${tail()}`).toBe('succeeded');
        expect(result.report, name).toMatchObject({ missingSections: [] });

        // The report quotes the example's own saved cluster (the describe of its resource).
        const report = await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8');
        expect(report, name).toContain(`## 3. Root Cause Analysis`);
        expect(report, name).toContain(incident.resource.name);
        expect(report, name).not.toContain('[no line of result');

        // Triage and agent reads went through the broker, answered by the stand-in (exit 0).
        const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
        const ok = (by: string) =>
          records.filter((r) => r.by === by && r.decision === 'allowed' && r.exitCode === 0).length;
        expect(ok('triage'), name).toBeGreaterThan(0);
        expect(ok('guard'), name).toBeGreaterThanOrEqual(3);
        const evidence = result.evidence as { verdict: string } | undefined;
        expect(['grounded', 'partial'], `${name}: ${JSON.stringify(evidence)}`).toContain(evidence?.verdict);
      }
      // None of them had a script: each got the generic investigation.
      expect(model.unscripted.size).toBe(5);
    }, 900_000);
  },
);

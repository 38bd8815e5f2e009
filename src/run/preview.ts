import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildContext, type BuiltContext } from '../context/build.js';
import { ENGINE_PLACEMENT } from '../engines/index.js';
import type { Logger } from '../log/logger.js';
import { RunBundle } from '../workspace/bundle.js';
import type { Workspace } from '../workspace/incident.js';
import { runDirOf } from '../workspace/layout.js';
import { clusterAccess } from './access.js';
import { prepareClusterAccess, routedCluster } from './cluster.js';
import type { PipelineEnv } from './env.js';
import { runLayout } from './layout.js';
import { contextInput } from './prepare.js';
import { preloadAlertMetrics } from './alert-metrics.js';
import { daemonPromqlCall, runPrometheus } from './prometheus.js';
import { loadToolPolicy } from '../kubectl/policy/policy.js';
import { begin } from './run.js';
import type { RunOverrides } from './types.js';

// A run's context in a dry run: what `triage-runner context` prints. The run begins as a launched one
// does (its agent, engine, model and cluster chosen the same way), its cluster is checked for
// reachability and its permissions probed when the producer wrote none, its layout says where the agent
// would see what, and the context is built from the same input (prepare.ts contextInput) by the same
// buildContext. What a dry run leaves out: the engine, the container or pod, the kubectl broker (the
// triage script reaches the cluster with the run's kubeconfig itself; the alert's preloaded metrics ask
// Prometheus and are recorded nowhere), the lease, the audit trail, and any write into the workspace (the bundle is a temporary folder, named as the run's in what it prints).

export interface PreviewRequest {
  workspace: Workspace;
  /** The run id the paths the agent is told are named with (a real run's id, or a stand-in). */
  runId: string;
  log: Logger;
  overrides?: Pick<RunOverrides, 'agent' | 'triage' | 'subjects' | 'cluster'>;
}

const noAudit = () => async (): Promise<void> => undefined;

/** The context a run of `request.workspace` would be given now, built without launching anything. */
export async function previewContext(env: PipelineEnv, request: PreviewRequest): Promise<BuiltContext> {
  const signal = new AbortController().signal;
  const start = begin(env, { ...request, attempt: 1, signal }, () => noAudit);
  const access = await clusterAccess(env, start);
  if (access) start.access = access;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'triage-runner-context-'));
  try {
    const bundle = await RunBundle.create(tmp, 'context-preview', env.redactor);
    const cluster = routedCluster(env, start);
    const kubeconfig = await prepareClusterAccess(env, cluster, bundle.dir, start.access);
    const adapter = await env.agents(start.agent);
    const snapshot = await env.skills.acquire();
    try {
      // The layout a run gets, named after the bundle a real run would have in the workspace.
      const runDir = runDirOf(request.workspace.dir, request.runId);
      const layout = runLayout({
        config: env.config,
        placement: ENGINE_PLACEMENT[start.engineName],
        workspaceDir: request.workspace.dir,
        runId: request.runId,
        bundleDir: runDir,
        adapter,
      });
      // What the triage script prints of the temporary bundle reads as the run's own folder.
      const view = {
        ...layout.view,
        hostPaths: [{ host: bundle.dir, agent: layout.view.runDir }, ...layout.view.hostPaths],
      };
      const parts = { bundle, skills: snapshot, view, placement: adapter.placement };
      const input = await contextInput(env, start, parts, kubeconfig);
      // The alert's expression is evaluated as the run's triage step would, and recorded nowhere.
      const policy = await loadToolPolicy(env.config.personas_dir, env.config.persona);
      const prometheus = runPrometheus(env, start);
      const alertMetrics =
        input.triage.mode === 'run'
          ? preloadAlertMetrics({
              config: env.config,
              workspace: input.workspace,
              bundle,
              runDir: layout.view.runDir,
              promql: async (argv) =>
                (await daemonPromqlCall(prometheus, policy, argv, signal, env.now)).result,
            })
          : undefined;
      return await buildContext({
        ...input,
        reportedRunDir: runDir,
        ...(alertMetrics ? { alertMetrics } : {}),
      });
    } finally {
      snapshot.release();
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

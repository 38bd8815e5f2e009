import { createHash } from 'node:crypto';
import path from 'node:path';
import type { AgentInvocation, InvocationFile, InvocationInput } from '../../agents/types.js';
import type { Config } from '../../config/schema.js';
import { RUN_LABELS } from '../../engines/labels.js';
import { RUN_FILES } from '../../audit/bundle.js';
import { writeRunManifest } from '../../audit/run-record.js';
import type { Mount, Placement, RunHandle, RunSpec } from '../../engines/types.js';
import { writeFileAtomic } from '../../util/fs.js';
import type { PipelineEnv, RunContext } from './context.js';
import { CONTAINER_HOME, HOME_FILES_DIR, type RunLayout } from './layout.js';
import type { RunOutput } from './output.js';
import { planRunGateway } from './model-gateway.js';
import type { PreparedRun } from './prepare.js';

// Launch helpers: joining an adapter's invocation to an engine's RunSpec, and the redacted record of it.

/** Provider endpoints: the config's, else the same-named variables of the daemon's environment. */
export function providerSettings(
  config: Config,
  env: Record<string, string | undefined>,
): InvocationInput['providers'] {
  const pick = (a: string | undefined, b: string | undefined) => (a ?? b) || undefined;
  const out: InvocationInput['providers'] = {};
  const anthropic = pick(config.providers.anthropic_base_url, env.ANTHROPIC_BASE_URL);
  const openai = pick(config.providers.openai_base_url, env.OPENAI_BASE_URL);
  const gemini = pick(config.providers.gemini_base_url, env.GOOGLE_GEMINI_BASE_URL);
  const goose = pick(config.providers.goose_provider, env.GOOSE_PROVIDER);
  if (anthropic) out.anthropicBaseUrl = anthropic;
  if (openai) out.openaiBaseUrl = openai;
  if (gemini) out.geminiBaseUrl = gemini;
  if (goose) out.gooseProvider = goose;
  return out;
}

/** Labels identifying a run on the engine. */
export const runLabels = (ids: {
  daemonId: string;
  incidentId: string;
  runId: string;
  agent: string;
}): Record<string, string> => ({
  [RUN_LABELS.daemon]: ids.daemonId,
  [RUN_LABELS.incident]: ids.incidentId,
  [RUN_LABELS.run]: ids.runId,
  [RUN_LABELS.agent]: ids.agent,
});

function safeRelative(file: InvocationFile): string {
  const rel = path.posix.normalize(file.path);
  if (rel.startsWith('..') || path.posix.isAbsolute(rel) || rel === '.') {
    throw new Error(
      `adapter file path ${JSON.stringify(file.path)} must be relative and stay inside its folder`,
    );
  }
  return rel;
}

/**
 * Writes the adapter's files (unredacted: the agent must receive them byte-identical) and returns the
 * extra mounts. Files for HOME go under agent-files/.home/ and are mounted read-only at their place in a
 * container; under the process engine they are written straight into the per-run HOME.
 */
export async function writeInvocationFiles(
  invocation: AgentInvocation,
  layout: RunLayout,
  placement: Placement,
): Promise<Mount[]> {
  const mounts: Mount[] = [];
  for (const file of invocation.files) {
    const rel = safeRelative(file);
    if (!file.inHome) {
      await writeFileAtomic(path.join(layout.hostFilesDir, rel), file.content);
    } else if (placement === 'host' && layout.hostHome) {
      await writeFileAtomic(path.join(layout.hostHome, rel), file.content);
    } else {
      const host = path.join(layout.hostFilesDir, HOME_FILES_DIR, rel);
      await writeFileAtomic(host, file.content);
      mounts.push({ source: host, target: path.posix.join(CONTAINER_HOME, rel), readOnly: true });
    }
  }
  return mounts;
}

export type LaunchSpec = Omit<RunSpec, 'onStdout' | 'onStderr'>;

/** invocation.json: what was run, with secret values replaced (the bundle's redactor scrubs the rest). */
export function invocationRecord(input: {
  spec: LaunchSpec;
  engine: string;
  placement: Placement;
  agent: string;
  model?: string;
  attempt: number;
  launchedAt: Date;
  files: InvocationFile[];
  hostHome?: string;
  /** What actually runs first (the gateway bridge), when it wraps the CLI. */
  wrapper?: { command: string; args: string[] };
}): Record<string, unknown> {
  const { spec } = input;
  return {
    engine: input.engine,
    agent: input.agent,
    ...(input.model ? { model: input.model } : {}),
    attempt: input.attempt,
    launchedAt: input.launchedAt.toISOString(),
    ...(input.placement === 'container' ? { image: spec.image } : {}),
    command: spec.command,
    args: spec.args,
    env: spec.env,
    secretEnv: Object.fromEntries(Object.keys(spec.secretEnv).map((k) => [k, '[REDACTED]'])),
    stdin: {
      bytes: Buffer.byteLength(spec.stdin),
      sha256: createHash('sha256').update(spec.stdin).digest('hex'),
    },
    workdir: spec.workdir,
    mounts: spec.mounts,
    tmpfs: spec.tmpfs,
    labels: spec.labels,
    files: input.files.map((f) => ({
      path: f.path,
      inHome: f.inHome ?? false,
      bytes: Buffer.byteLength(f.content),
    })),
    ...(input.hostHome ? { hostHome: input.hostHome } : {}),
    ...(input.wrapper
      ? {
          wrapper: {
            command: input.wrapper.command,
            args: input.wrapper.args.slice(0, input.wrapper.args.indexOf('--') + 1),
          },
        }
      : {}),
  };
}

/**
 * Joins the adapter's invocation to the engine: writes the files it hands the agent, the manifest an
 * adopting daemon reads and the redacted invocation record. Nothing is started yet (a dry run stops here).
 */
export async function planLaunch(
  env: PipelineEnv,
  ctx: RunContext,
  prepared: PreparedRun,
): Promise<LaunchSpec> {
  const { config } = env;
  const { request, bundle, adapter, engine } = ctx;
  if (!bundle || !adapter || !engine) throw new Error('launch before prepare');
  const { layout, context } = prepared;
  // With the gateway the agent's provider settings point at it and every model key is the run's token.
  const gateway = await planRunGateway({
    config,
    host: env.gateway,
    agent: ctx.agent,
    env: env.env,
    engine,
    runId: request.runId,
    bundleDir: bundle.dir,
    agentRunDir: layout.view.runDir,
    redact: (text) => env.redactor.redact(text),
  });
  ctx.gateway = gateway;
  const invocation = adapter.buildInvocation({
    prompt: context.prompt,
    ...(ctx.model ? { model: ctx.model } : {}),
    maxTurns: config.agent.max_turns,
    extraArgs: config.agent.extra_args,
    paths: layout.paths,
    providers: { ...providerSettings(config, env.env), ...gateway?.providers },
    secrets: gateway ? gateway.secrets(env.secrets) : env.secrets,
    ...(ctx.guard ? { permissions: ctx.guard.permissions } : {}),
  });
  const fileMounts = await writeInvocationFiles(invocation, layout, engine.placement);
  const incidentId = request.workspace.incident.incidentId;
  const spec: LaunchSpec = {
    runId: request.runId,
    incidentId,
    labels: runLabels({ daemonId: env.daemonId, incidentId, runId: request.runId, agent: ctx.agent }),
    image: config.agent.image,
    command: config.agent.command ?? invocation.command,
    args: invocation.args,
    env: { ...invocation.env, ...layout.env },
    secretEnv: invocation.secretEnv,
    stdin: invocation.stdin,
    workdir: layout.workdir,
    mounts: [...layout.mounts, ...fileMounts],
    tmpfs: layout.tmpfs,
    stateDir: bundle.dir,
    timeoutMs: config.agent.timeout,
  };
  for (const value of Object.values(spec.secretEnv)) env.redactor.add('agent secret', value);
  // In a container the gateway bridge runs first and starts the CLI (its loopback port is the gateway).
  const launch = gateway?.wrap(spec) ?? spec;
  const launchedAt = env.now();
  const image = engine.placement === 'container' ? spec.image : undefined;
  await writeRunManifest(bundle, {
    schemaVersion: 1,
    runId: request.runId,
    incidentId,
    attempt: request.attempt ?? 0,
    engine: engine.name,
    agent: ctx.agent,
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(image ? { image } : {}),
    launchedAt: launchedAt.toISOString(),
    report: { hostPath: layout.hostReportPath, agentPath: layout.paths.reportPath },
    ...(layout.hostHome ? { hostHome: layout.hostHome } : {}),
  });
  await bundle.writeJson(
    RUN_FILES.invocation,
    invocationRecord({
      spec,
      ...(launch !== spec ? { wrapper: launch } : {}),
      engine: engine.name,
      placement: engine.placement,
      agent: ctx.agent,
      ...(ctx.model ? { model: ctx.model } : {}),
      attempt: request.attempt ?? 0,
      launchedAt,
      files: invocation.files,
      ...(layout.hostHome ? { hostHome: layout.hostHome } : {}),
    }),
  );
  return { ...spec, command: launch.command, args: launch.args, env: launch.env };
}

/** Starts the planned run and reports `launched` (the incident is `running` from here). */
export async function startAgent(
  env: PipelineEnv,
  ctx: RunContext,
  spec: LaunchSpec,
  output: RunOutput,
  plannedAt: number,
): Promise<RunHandle> {
  const engine = ctx.engine;
  if (!engine) throw new Error('start before prepare');
  // The broker listens before the agent can call it.
  await ctx.guard?.start();
  await ctx.gateway?.start();
  const handle = await engine.start({ ...spec, onStdout: output.onStdout, onStderr: output.onStderr });
  env.metrics?.stage('launch', (performance.now() - plannedAt) / 1000);
  const image = engine.placement === 'container' ? spec.image : undefined;
  await ctx.request.onStage?.({
    type: 'launched',
    engine: engine.name,
    id: handle.id,
    ...(image ? { image } : {}),
  });
  return handle;
}

import { createHash } from 'node:crypto';
import path from 'node:path';
import type { AgentInvocation, InvocationFile, InvocationInput } from '../agents/types.js';
import type { Config } from '../config/schema.js';
import { RUN_LABELS } from '../engines/labels.js';
import type { Mount, Placement, RunSpec } from '../engines/types.js';
import { writeFileAtomic } from '../util/fs.js';
import { CONTAINER_HOME, HOME_FILES_DIR, type RunLayout } from './layout.js';

// Joining an adapter's invocation to an engine's RunSpec: provider settings, labels, the files the
// adapter hands the agent, and the redacted record of what was run (invocation.json).

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

function wrapperArgs(args: string[], command: string): string[] {
  const at = args.indexOf(command);
  return at < 0 ? args : args.slice(0, at);
}

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
            // The wrapper's own arguments, up to where the agent's command (recorded above) starts.
            args: wrapperArgs(input.wrapper.args, spec.command),
          },
        }
      : {}),
  };
}

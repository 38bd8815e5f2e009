import path from 'node:path';
import { RUN_OUTCOME_STATUSES } from '../shared/status.js';
import { z } from '../shared/zod.js';
import { readOwnFileBelow, type BoundedRead } from '../util/safe-path.js';
import type { RunBundle } from './bundle.js';
import type { PromptParts } from '../shared/types.js';
import type { Incident } from './incident.js';
import { RUN_FILES, workspaceOfRunDir } from './layout.js';

// The run's facts on disk, written and read back through one module: `result.json` (how the run
// ended) and `manifest.json` (what was launched, for a daemon that adopts the run after a restart),
// read bounded and never through a link. Markdown files in the bundle are for people; nothing parses
// them back.

const tokens = z.object({ input: z.number(), output: z.number() });

/** The triage skill's report validator, as run after the agent (src/context/report-validator.ts). */
export const validatorRecordSchema = z.looseObject({
  skill: z.string().optional(),
  command: z.string().optional(),
  verdict: z.enum(['compliant', 'warnings', 'non_compliant', 'failed', 'skipped']),
  exitCode: z.number().nullable().optional(),
  signal: z.string().nullable().optional(),
  timedOut: z.boolean().optional(),
  durationMs: z.number().optional(),
  outputTail: z.string().optional(),
  reason: z.string().optional(),
});
export type ValidatorRecord = z.infer<typeof validatorRecordSchema>;
export type ValidatorVerdict = ValidatorRecord['verdict'];

/**
 * One claim of the report as the evidence check judged it: the headline, a `[FACT-n]`, an `[INF-n]`,
 * or a block of quoted output. `supported`: the cluster output it cites holds it; `contradicted`: that
 * output says otherwise (`why` names the field and both values); `unsupported`: it cites nothing, or
 * what it cites never ran, failed, or does not hold it; `unchecked`: it cannot be checked (the output
 * was cut at its bound, went through a pipe the check does not re-create, or was not recorded);
 * `alert`: it rests on the alert or the triage output only, never cluster evidence.
 */
export const claimSchema = z.object({
  text: z.string(),
  kind: z.enum(['headline', 'fact', 'inference', 'quote']),
  status: z.enum(['supported', 'contradicted', 'unsupported', 'unchecked', 'alert']),
  /** What it cites: the kubectl calls, the facts and inferences, the alert/triage, or nothing. */
  source: z.string(),
  why: z.string(),
  /** `FACT-3`, `INF-1`; the heading of a quoted block. */
  id: z.string().optional(),
  /** It is the headline or part of the chain behind it (headline → inferences → facts). */
  chain: z.boolean().optional(),
});
export type EvidenceClaim = z.infer<typeof claimSchema>;

/**
 * How far the report holds against what the run recorded (src/evidence/). `verdict`: grounded only
 * when the headline and the chain behind it hold against the cluster output they cite; ungrounded when
 * the cluster could not be read, the headline is contradicted or nothing is cited; partial otherwise.
 * `claims` lists the headline first, then what breaks the chain, then the rest (at most 50; the counts
 * are exact). The older lists (`unverified`, `citedNotRun`, `excerptsNotFound`) say the same per
 * citation. Results written before claims were checked have none of the claim fields.
 */
export const evidenceSchema = z.object({
  verdict: z.enum(['grounded', 'partial', 'ungrounded']),
  /** `[FACT-n]` the report states. */
  facts: z.number(),
  /** Citations (commands, quoted lines) the record confirms. */
  verified: z.number(),
  /** Claims that do not hold, and cited commands that failed or were refused, each with why. */
  unverified: z.array(z.string()),
  /** Commands the report says it ran that no recorded call matches. */
  citedNotRun: z.array(z.string()),
  /** Quoted output lines found in no recorded output nor the triage output. */
  excerptsNotFound: z.array(z.string()),
  /** What the investigation could not see: refused and failed calls, an unreachable cluster, cut output. */
  gaps: z.array(z.string()),
  /** The headline as the check read it, or "no hypothesis stated". */
  headline: z.string().optional(),
  /** The confidence the report states for its headline, as written ("High", "85%"), when it states one. */
  confidence: z.string().optional(),
  claims: z.array(claimSchema).optional(),
  /** Claims the cluster output supports, of all claims: "N of M claims supported". */
  claimsSupported: z.number().optional(),
  claimsTotal: z.number().optional(),
  /** Why the verdict is what it is, in one line. */
  reason: z.string().optional(),
  /**
   * A read that needs the API server succeeded and the access check reached the cluster: false when
   * the answer can rest on nothing but the alert (absent in results written before it was recorded).
   */
  clusterRead: z.boolean().optional(),
  /** The checks that ran: the deterministic one always, the model's when `evidence.verify: model`. */
  checks: z.array(z.enum(['deterministic', 'model'])).optional(),
});
export type Evidence = z.infer<typeof evidenceSchema>;

/**
 * `returned.json`: what an agent pod returned through the daemon so far (src/engines/kubernetes/files/),
 * kept after each upload so that a daemon adopting the run knows it too.
 */
export const returnedRecordSchema = z.object({
  uploads: z.number(),
  /** When the last upload was taken. */
  lastAt: z.string().optional(),
  /** The upload the pod makes once its agent has ended came: nothing more was to come. */
  final: z.boolean(),
  /** Each file taken, by its path relative to the workspace: its size and when it came. */
  files: z.record(z.string(), z.object({ bytes: z.number(), at: z.string() })),
  /** Files refused or left out by the pod, by path (relative to the workspace when it is one), and why. */
  refused: z.array(z.object({ path: z.string(), why: z.string() })),
});
export type ReturnedRecord = z.infer<typeof returnedRecordSchema>;

/** What an agent returns that a run can lose: its report, its notes, other files of output/. */
export const RETURNED_KINDS = ['report', 'agent-notes', 'output'] as const;

/** `result.json`: the fixed fields first, then extensions (unknown fields are kept when read). */
export const runResultSchema = z.looseObject({
  status: z.enum(RUN_OUTCOME_STATUSES),
  exitCode: z.number().nullable(),
  agent: z.string(),
  engine: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.number(),
  tokens,
  costUsd: z.number().optional(),
  report: z.object({ path: z.string(), bytes: z.number(), missingSections: z.array(z.string()) }),
  runId: z.string().optional(),
  incidentId: z.string().optional(),
  model: z.string().optional(),
  agentStatus: z.string().optional(),
  turns: z.number().optional(),
  /** Why the run did not succeed, in words a user can act on. */
  error: z.string().optional(),
  /** The agent's one-line answer (hypothesis, confidence, first action), when it gave one. */
  answer: z.string().optional(),
  triage: z.object({ status: z.string() }).optional(),
  promptSha256: z.string().optional(),
  transient: z.boolean().optional(),
  waitFor: z.string().optional(),
  dryRun: z.boolean().optional(),
  adopted: z.boolean().optional(),
  firstOutputAt: z.string().optional(),
  firstOutputMs: z.number().optional(),
  /** From the run's start to its first model call, as the model gateway saw it. */
  firstModelCallMs: z.number().optional(),
  /**
   * The seed's measures, from the gateway's record of the run's model calls (the same for every CLI):
   * from the run's start to its first model call, to the end of the first answer asking for a tool (the
   * first investigation turn) and to the end of the last call; input tokens over every call.
   */
  measures: z
    .object({
      firstModelCallMs: z.number().optional(),
      /** From the run's start to the first byte (the first token) of the first model call's answer. */
      firstTokenMs: z.number().optional(),
      firstToolCallMs: z.number().optional(),
      investigationMs: z.number().optional(),
      /** Input tokens of the first model call: the prompt the agent starts from, CLI part included. */
      firstCallInputTokens: z.number().optional(),
      inputTokens: z.number(),
      // The token counts below came with the per-run cost measures; results written before have none.
      outputTokens: z.number().optional(),
      cacheReadTokens: z.number().optional(),
      cacheWriteTokens: z.number().optional(),
      /** The share of the input the provider's prompt cache served (0–1). */
      cacheReadShare: z.number().optional(),
      modelCalls: z.number(),
      /** The model that did the run's work (the one that took the most input tokens). */
      model: z.string().optional(),
    })
    .optional(),
  /** The run's model calls as the gateway counted them (their log: `model-calls.jsonl`). */
  gateway: z
    .object({
      calls: z.number(),
      refused: z.number(),
      retries: z.number(),
      tokens: z.object({
        input: z.number(),
        output: z.number(),
        cacheRead: z.number(),
        cacheWrite: z.number(),
      }),
      costUsd: z.number(),
      firstCallAt: z.string().optional(),
      firstCallInputTokens: z.number().optional(),
      firstTokenAt: z.string().optional(),
      model: z.string().optional(),
      firstToolCallAt: z.string().optional(),
      lastCallEndAt: z.string().optional(),
      capReached: z.object({ cap: z.string(), limit: z.number(), used: z.number() }).optional(),
      /** An adopted run whose agent could not reach the restarted daemon's gateway, and why. */
      lost: z.string().optional(),
      log: z.string(),
      /** Where result.json's tokens and cost come from: the gateway, or the CLI when no call went through it. */
      source: z.enum(['gateway', 'agent']),
    })
    .optional(),
  /** The triage skill's own report check, when the skill declares one. */
  validator: validatorRecordSchema.optional(),
  /**
   * The cluster the run investigated: its registry entry (the name, never its credentials) and how it was
   * chosen, and whether the daemon could reach it when the run started.
   */
  cluster: z
    .object({
      name: z.string(),
      routedBy: z.enum(['name', 'alias', 'default', 'override']),
      requested: z.string(),
      /** Set when the entry could not be reached as the run was prepared: what kubectl said. */
      unreachable: z.string().optional(),
      /** Whether the daemon's access check reached the cluster when the run started (kubectl.access_check). */
      reachable: z.boolean().optional(),
      /** What is wrong and what to do, when it was not reachable. */
      detail: z.string().optional(),
    })
    .partial({ routedBy: true, requested: true })
    .optional(),
  /** The agent's cluster calls: how they were guarded, how many, how many refused, and the call log. */
  kubectl: z
    .object({
      guard: z.enum(['broker', 'off', 'unavailable']),
      calls: z.number(),
      refused: z.number(),
      log: z.string().optional(),
      /** The agent's `promql` calls (in the same call log, tool `prometheus`) and whether its cluster has an endpoint. */
      prometheus: z
        .object({
          endpoint: z.enum(['configured', 'unusable', 'none']),
          calls: z.number(),
          refused: z.number(),
        })
        .optional(),
    })
    .optional(),
  /** The evidence check of the report (absent when there was no report to check). */
  evidence: evidenceSchema.optional(),
  /**
   * What an agent pod returned through the daemon (an agent that writes no folder of the daemon's):
   * whether its last upload came, what came, and what was lost and why.
   */
  returned: z
    .object({
      final: z.boolean(),
      uploads: z.number(),
      files: z.number(),
      bytes: z.number(),
      lastAt: z.string().optional(),
      report: z.boolean(),
      lost: z.array(z.enum(RETURNED_KINDS)),
      reason: z.string().optional(),
    })
    .optional(),
});
export type RunResult = z.infer<typeof runResultSchema>;

/**
 * What a run produced, as the daemon holds it when it records the run's start and end: the incident it
 * investigated and, once it ended, its result.json and the report (scrubbed). The notifier is handed
 * this instead of reading back what was just written.
 */
export interface RunProducts {
  incident: Incident;
  result?: RunResult;
  /** The report as the run checked it, whole (the notifier cuts it to notify.max_report_bytes). */
  report?: string;
}

/** `manifest.json`: written just before the agent is launched. */
export const runManifestSchema = z.object({
  schemaVersion: z.literal(1),
  runId: z.string(),
  incidentId: z.string(),
  attempt: z.number(),
  engine: z.string(),
  agent: z.string(),
  model: z.string().optional(),
  image: z.string().optional(),
  launchedAt: z.string(),
  /** The report as the daemon reads it and as the agent was told. */
  report: z.object({ hostPath: z.string(), agentPath: z.string() }),
  /** A per-run HOME on the host to remove after the run (host placement). */
  hostHome: z.string().optional(),
  /**
   * The run at the model gateway: its token's hash (never the token) and, for an agent on the host, the
   * TCP address it was given, so that a restarted daemon listens there again.
   */
  gateway: z
    .object({ tokenSha256: z.string().regex(/^[0-9a-f]{64}$/), url: z.string().optional() })
    .optional(),
  /**
   * What the launching daemon knew of the run's context, for a daemon that adopts it: the prompt's
   * digest, the triage status, and what the evidence check cannot verify (no cluster access, a triage
   * output that failed or was cut).
   */
  promptSha256: z.string().optional(),
  triageStatus: z.string().optional(),
  knownGaps: z.array(z.string()).optional(),
  /** An agent pod's files token, by its hash: a daemon adopting the run takes what the pod returns. */
  files: z.object({ tokenSha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
  /** What the access check said when it found the run's cluster unreachable at its start. */
  unreachable: z.string().optional(),
});
export type RunManifest = z.infer<typeof runManifestSchema>;

/**
 * A record read back: its value, or why not. `missing` says the file is simply not there (a run that
 * ended before it wrote one, a dry run), which most readers do not report.
 */
export type RecordRead<T> = { ok: true; value: T } | { ok: false; problem: string; missing?: true };

/** result.json and manifest.json are a few KB; a larger file is not a record the daemon wrote. */
export const RECORD_MAX_BYTES = 4 << 20;

/**
 * Reads `<runDir>/<name>` below `base` (the workspace, or the workspaces root) without following a link
 * in any folder on the way or at the file, within RECORD_MAX_BYTES, and checks it against `schema`.
 * Problems name the file relative to `base`.
 */
async function readRecord<T>(
  runDir: string,
  name: string,
  schema: z.ZodType<T>,
  base: string,
  maxBytes = RECORD_MAX_BYTES,
): Promise<RecordRead<T>> {
  const file = path.join(runDir, name);
  const shown = path.relative(base, file) || file;
  let read: BoundedRead;
  try {
    read = await readOwnFileBelow(base, file, maxBytes);
  } catch (err) {
    return {
      ok: false,
      problem: `${shown} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
  if (read.kind === 'missing') return { ok: false, problem: `${shown} does not exist`, missing: true };
  if (read.kind === 'refused') return { ok: false, problem: read.reason };
  return parseRecord(read.text, shown, schema);
}

function parseRecord<T>(text: string, file: string, schema: z.ZodType<T>): RecordRead<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `${file} is not valid JSON (${(err as Error).message})` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      problem: `${file} does not have the expected shape (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'})`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** The folder a run bundle's records are read below: its workspace (else the bundle itself). */
const baseOf = (runDir: string): string => workspaceOfRunDir(runDir) ?? runDir;

/** `<runDir>/result.json`, read below `base` (default: the bundle's workspace). */
export const readRunResult = (runDir: string, base = baseOf(runDir)): Promise<RecordRead<RunResult>> =>
  readRecord(runDir, RUN_FILES.result, runResultSchema, base);

/** `<runDir>/manifest.json`, read below `base` (default: the bundle's workspace). */
export const readRunManifest = (runDir: string, base = baseOf(runDir)): Promise<RecordRead<RunManifest>> =>
  readRecord(runDir, RUN_FILES.manifest, runManifestSchema, base);

/** `prompt.json`: the two prompt parts exactly as sent. */
const promptPartsSchema = z.object({ system: z.string(), user: z.string() });

/** A prompt may be as large as the budget allows: prompt.json is read up to 16 MiB. */
const PROMPT_MAX_BYTES = 16 << 20;

/** `<runDir>/prompt.json`, read below `base` (default: the bundle's workspace). */
export const readPromptParts = (runDir: string, base = baseOf(runDir)): Promise<RecordRead<PromptParts>> =>
  readRecord(runDir, RUN_FILES.promptParts, promptPartsSchema, base, PROMPT_MAX_BYTES);

/** `context.json`: the run's token table (its fixed fields; other fields are kept), the agent and the prompt's digest. */
const contextRecordSchema = z.looseObject({
  estimator: z.string(),
  budget: z.object({ warn: z.number(), truncate: z.number() }),
  totalTokens: z.number(),
  sections: z.array(
    z.looseObject({
      tag: z.string(),
      tokens: z.number(),
      originalTokens: z.number(),
      truncated: z.boolean(),
    }),
  ),
  agent: z.string().optional(),
  /** sha256 of the prompt parts as sent, taken before any redaction. */
  promptSha256: z.string().optional(),
});
export type ContextRecord = z.infer<typeof contextRecordSchema>;

/** `<runDir>/context.json`, read below `base` (default: the bundle's workspace). */
export const readContextRecord = (
  runDir: string,
  base = baseOf(runDir),
): Promise<RecordRead<ContextRecord>> =>
  readRecord(runDir, RUN_FILES.context, contextRecordSchema, base, PROMPT_MAX_BYTES);

export const writeRunResult = (bundle: RunBundle, result: RunResult): Promise<void> =>
  bundle.writeJson(RUN_FILES.result, result);

export const writeRunManifest = (bundle: RunBundle, manifest: RunManifest): Promise<void> =>
  bundle.writeJson(RUN_FILES.manifest, manifest);

/** `<runDir>/returned.json`, read below `base` (default: the bundle's workspace). */
export const readReturnedRecord = (
  runDir: string,
  base = baseOf(runDir),
): Promise<RecordRead<ReturnedRecord>> => readRecord(runDir, RUN_FILES.returned, returnedRecordSchema, base);

export const writeReturnedRecord = (bundle: RunBundle, record: ReturnedRecord): Promise<void> =>
  bundle.writeJson(RUN_FILES.returned, record);

/** Which run a result.json is of, and when it ran. */
export interface RunIdentity {
  agent: string;
  engine: string;
  startedAt: Date;
  finishedAt: Date;
  runId: string;
  incidentId: string;
}

/** result.json of a run that ended before the agent produced anything (failed to prepare or launch). */
export function earlyResult(
  input: RunIdentity & {
    status: RunResult['status'];
    error: string;
    transient?: boolean;
    waitFor?: string;
    dryRun?: boolean;
  },
): RunResult {
  return {
    status: input.status,
    exitCode: null,
    agent: input.agent,
    engine: input.engine,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    durationMs: input.finishedAt.getTime() - input.startedAt.getTime(),
    tokens: { input: 0, output: 0 },
    report: { path: '', bytes: 0, missingSections: [] },
    runId: input.runId,
    incidentId: input.incidentId,
    error: input.error,
    ...(input.transient ? { transient: true } : {}),
    ...(input.waitFor ? { waitFor: input.waitFor } : {}),
    ...(input.dryRun ? { dryRun: true } : {}),
  };
}

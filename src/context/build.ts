import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES, type RunBundle } from '../audit/bundle.js';
import type { AgentName, Config } from '../config/schema.js';
import type { PipelineMetrics } from '../shared/types.js';
import type { Workspace } from '../shared/types.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { fitToBudget, type MarkerInfo } from './budget.js';
import { BootError, buildDisclosure, type Disclosure } from './disclosure/index.js';
import {
  assemblePrompt,
  renderPromptSent,
  substituteReportPath,
  substituteReportSections,
  substituteViewPaths,
} from './prompt.js';
import {
  findPreviousInvestigations,
  PREVIOUS_DEGRADE_ID,
  PREVIOUS_DIR,
  previousLine,
  renderPrevious,
  REPORT_COPY_MAX_BYTES,
} from './previous.js';
import { escapeTextContent, renderIncident, renderPermissions, renderTriage } from './sections.js';
import { tokenCounter } from './tokens.js';
import { runTriage, type ClusterKubeconfig, type TriageMode } from './triage.js';
import { renderProducts } from './triage-products.js';
import type { SkillEntry } from './disclosure/skill-types.js';
import type {
  AgentView,
  ContextReport,
  PreloadPlacement,
  PromptParts,
  SectionReport,
  SkillsSnapshot,
  TriageSummary,
} from './types.js';

// Building a run's context (what the agent is told): triage script, sections, disclosure, budget
// fitting and prompt assembly, with the audit files (prompt-sent.md, context.json, triage/output.log) written into the run bundle.
// The `context` command calls this same function with a temporary bundle (and `reportedRunDir`, the
// folder a real run would use, so that nothing it prints names the temporary one).

export interface BuildInput {
  config: Config;
  workspace: Workspace;
  agent: AgentName;
  placement: PreloadPlacement;
  view: AgentView;
  bundle: RunBundle;
  skills: SkillsSnapshot;
  log: Logger;
  triage: TriageMode;
  subjects?: string[];
  model?: string;
  metrics?: PipelineMetrics;
  signal?: AbortSignal;
  /** Host folder named as the run's bundle in reasons and context.json (default: the bundle's own). */
  reportedRunDir?: string;
  /** Folders put first on the triage script's PATH (RunOverrides.pathPrepend). */
  pathPrepend?: string[];
  /** The run's kubectl guard for the triage script (TriageInput.kubectlGuard); absent: it runs kubectl itself. */
  kubectlGuard?: string;
  /** The run's cluster registry entry, as KUBECONFIG for the triage script. */
  cluster?: ClusterKubeconfig;
  /**
   * The workspaces root to search for earlier investigations of the same workload; none are listed
   * without it, or when the workspace is not a folder of it (a replay's output, a copied incident).
   */
  previousRoot?: string;
  /** Said first in the permissions section (the run's cluster cannot be reached). */
  clusterNotice?: string;
}

export interface BuiltContext {
  prompt: PromptParts;
  context: ContextReport;
  promptSent: string;
  promptSha256: string;
  /** The skills the prompt names, to be laid out where the agent's CLI finds them (sorted by name). */
  skills: SkillEntry[];
}

/** sha256 over both parts, separated so that moving text between them changes the hash. */
export function promptDigest(prompt: PromptParts): string {
  return createHash('sha256').update(prompt.system).update('\n\0\n').update(prompt.user).digest('hex');
}

/** The line put where triage lines were cut, naming the file the agent can read in full. */
export function truncationMarker(fullOutputPath: string, limit: number) {
  return (info: MarkerInfo): string =>
    `[triage-runner: ${info.removedLines} lines (${info.estimated ? 'about ' : ''}${info.removedTokens} tokens) of the triage report were removed here to fit the ${limit}-token context budget. Full output: ${fullOutputPath} (search it with grep -n / sed -n).]`;
}

/** What the agent is told about the triage run (no host paths: it sees `view` paths only). */
function triageNote(summary: TriageSummary, fullOutputPath: string, timeoutMs: number): string | undefined {
  switch (summary.status) {
    case 'ok':
    case 'reused':
      return undefined;
    case 'disabled':
      return '[triage-runner: the baseline triage script was not run for this incident (disabled). Run your own baseline triage.]';
    case 'missing':
    case 'not_executable':
      return `[triage-runner: the baseline triage script is not available (${summary.status}); no triage report. Run your own baseline triage.]`;
    case 'timed_out':
      return `[triage-runner: the triage script timed out after ${Math.round(timeoutMs / 1000)} s and was stopped; the output below is partial. Full output: ${fullOutputPath}]`;
    case 'failed': {
      const how = summary.signal
        ? `was killed by ${summary.signal}`
        : `failed (exit code ${summary.exitCode ?? 'none'})`;
      return `[triage-runner: the triage script ${how}; the output below may be partial. Full output: ${fullOutputPath}]`;
    }
  }
}

async function readPromptFile(
  file: string,
  key: string,
  view: AgentView,
  sections: readonly string[],
): Promise<string> {
  try {
    const text = substituteReportPath(await readFile(file, 'utf8'), view.reportPath);
    return substituteReportSections(substituteViewPaths(text, view), sections);
  } catch (err) {
    throw new Error(
      `${key} ${file} cannot be read (${errorMessage(err)}): point ${key} at an existing file`,
      { cause: err },
    );
  }
}

const NO_DISCLOSURE: Disclosure = {
  problems: [],
  subjects: [],
  bootMode: 'none',
  degradable: [],
  skills: [],
  render: () => ({ text: '', parts: [] }),
};

interface PreparedPrevious {
  lines: string[];
  render(degraded: boolean): string;
}

const NO_PREVIOUS: PreparedPrevious = { lines: [], render: () => '' };

/**
 * Earlier investigations of the same workload (or fault in the namespace): their reports copied into
 * the run bundle (where the agent can read them under every engine), the index written beside them,
 * and the section for the prompt.
 */
async function preparePrevious(input: BuildInput): Promise<PreparedPrevious> {
  const { config, workspace, bundle, view } = input;
  const root = input.previousRoot && path.resolve(input.previousRoot);
  if (
    config.memory.previous_investigations === 0 ||
    !root ||
    path.dirname(path.resolve(workspace.dir)) !== root
  )
    return NO_PREVIOUS;
  const found = await findPreviousInvestigations(root, workspace.name, workspace.incident, {
    limit: config.memory.previous_investigations,
    maxAgeMs: config.memory.retention,
  });
  if (found.length === 0) return NO_PREVIOUS;
  await bundle.makeDir(PREVIOUS_DIR);
  const lines: string[] = [];
  for (const [i, p] of found.entries()) {
    const read = await readOwnFileBelow(
      path.dirname(p.reportPath),
      p.reportPath,
      REPORT_COPY_MAX_BYTES,
    ).catch(() => undefined);
    if (read?.kind !== 'ok') continue;
    const name = path.posix.join(PREVIOUS_DIR, `${i + 1}-${p.folder.replace(/[^A-Za-z0-9._-]/g, '_')}.md`);
    await bundle.writeText(name, read.text);
    lines.push(previousLine(p, path.posix.join(view.runDir, name)));
  }
  if (lines.length === 0) return NO_PREVIOUS;
  const indexPath = path.posix.join(view.runDir, PREVIOUS_DIR, 'index.md');
  await bundle.writeText(path.posix.join(PREVIOUS_DIR, 'index.md'), `${lines.join('\n')}\n`);
  return { lines, render: (degraded) => renderPrevious(lines, indexPath, degraded) };
}

export async function buildContext(input: BuildInput): Promise<BuiltContext> {
  const { config, workspace, view, bundle, log } = input;
  const started = performance.now();
  const counter = tokenCounter(config.context.estimator, config.context.safety_factor[input.agent] ?? 1);
  const limit = config.context.budget.truncate;
  const incompleteReasons: string[] = [];
  for (const u of input.skills.unavailable)
    incompleteReasons.push(`skills source ${u.name} unavailable: ${u.reason}`);

  const [systemPrompt, userPrompt] = await Promise.all([
    readPromptFile(config.system_prompt_file, 'system_prompt_file', view, config.agent.report_sections),
    readPromptFile(config.user_prompt_file, 'user_prompt_file', view, config.agent.report_sections),
  ]);

  let disclosure = NO_DISCLOSURE;
  try {
    disclosure = await buildDisclosure({
      config,
      incident: workspace.incident,
      subjects: input.subjects,
      skills: input.skills,
      view,
      log,
    });
    for (const problem of disclosure.problems) incompleteReasons.push(`disclosure: ${problem}`);
  } catch (err) {
    // Subjects asked for by name (`context --subject`, replay) that boot.yml cannot boot fail fast
    // (the caller named them, so a silent fallback would mislead); a run from the daemon degrades instead.
    if (input.subjects !== undefined && err instanceof BootError) throw err;
    incompleteReasons.push(`skills/persona/briefs index unavailable: ${errorMessage(err)}`);
    log.warn(
      { err: errorMessage(err) },
      'disclosure failed; the prompt has no skills index, persona or briefs',
    );
  }

  const fullOutputPath = path.posix.join(view.runDir, RUN_FILES.triageLog);
  const triageStarted = performance.now();
  const triage = await runTriage({
    agentLogPath: fullOutputPath,
    config,
    incident: workspace.incident,
    skills: input.skills,
    bundle,
    log,
    mode: input.triage,
    signal: input.signal,
    ...(input.reportedRunDir
      ? { reportedLogPath: path.join(input.reportedRunDir, RUN_FILES.triageLog) }
      : {}),
    ...(input.pathPrepend ? { pathPrepend: input.pathPrepend } : {}),
    ...(input.kubectlGuard ? { kubectlGuard: input.kubectlGuard } : {}),
    ...(input.cluster ? { cluster: input.cluster } : {}),
    agentTriageDir: view.triageDir,
    hostPaths: view.hostPaths,
  });
  input.metrics?.stage('triage', (performance.now() - triageStarted) / 1000);
  if (triage.summary.status === 'timed_out') input.metrics?.triageTimeout();
  const reason = triage.summary.reason;
  if (!['ok', 'reused', 'disabled'].includes(triage.summary.status) && reason) {
    // Do not repeat a source's reason already listed above.
    const source = input.skills.unavailable.find((u) =>
      reason.startsWith(`skills source ${u.name} unavailable`),
    );
    incompleteReasons.push(
      source
        ? `initial triage report ${triage.summary.status}: its skills source ${source.name} is unavailable`
        : `initial triage report ${triage.summary.status}: ${reason}`,
    );
  }
  if (workspace.permissionsText === undefined) {
    incompleteReasons.push('incident_cluster_permissions.json is absent or not valid JSON');
  }
  if (input.clusterNotice) incompleteReasons.push(input.clusterNotice);

  const previous = await preparePrevious(input).catch((err: unknown) => {
    log.warn({ err: errorMessage(err) }, 'past investigations could not be listed; the prompt has none');
    return NO_PREVIOUS;
  });

  const note = triageNote(triage.summary, fullOutputPath, config.skills.triage.timeout);
  // Ours, after the script's text: never cut by the budget.
  const products = escapeTextContent(renderProducts(triage.products ?? [], view.triageDir));
  const incidentSection = renderIncident(workspace.incidentText);
  const permissionsSection = renderPermissions(workspace.permissionsText, input.clusterNotice);
  const triageText = escapeTextContent(triage.text.replace(/\s+$/, ''));
  const omitted = triage.omitted && {
    ...triage.omitted,
    // Escaping may lengthen the text before the gap line; trimming may shorten the gap line at the end.
    at: escapeTextContent(triage.text.slice(0, triage.omitted.at)).length,
  };
  if (omitted) omitted.length = Math.min(omitted.length, Math.max(0, triageText.length - omitted.at));
  const build = (degraded: ReadonlySet<string>, triageBody: string) => {
    const preloaded = [
      incidentSection,
      permissionsSection,
      previous.render(degraded.has(PREVIOUS_DEGRADE_ID)),
      renderTriage(note, triageBody, products),
    ]
      .filter((s) => s !== '')
      .join('\n\n');
    const parts = assemblePrompt({
      systemPrompt,
      disclosure: disclosure.render(degraded).text,
      preloaded,
      userPrompt,
      placement: input.placement,
    });
    // Secrets (known values, credential shapes) never reach the model, and prompt-sent.md (which the
    // bundle redacts again) stays byte-identical to what was sent. Measured after redaction.
    return { system: bundle.redact(parts.system), user: bundle.redact(parts.user) };
  };
  const fit = await fitToBudget({
    counter,
    limit,
    // The index of past investigations goes first (to a pointer at its file), before any brief and
    // long before the triage report is cut; incident and permissions are never touched.
    degradable:
      previous.lines.length > 0 ? [PREVIOUS_DEGRADE_ID, ...disclosure.degradable] : disclosure.degradable,
    triageText,
    ...(omitted ? { omitted } : {}),
    assemble: build,
    marker: truncationMarker(fullOutputPath, limit),
  });

  const briefsDegraded = fit.degraded.filter((id) => id !== PREVIOUS_DEGRADE_ID);
  const previousDegraded = briefsDegraded.length !== fit.degraded.length;
  const previousSection = previous.render(previousDegraded);
  const rendered = disclosure.render(new Set(briefsDegraded));
  const triageSection = renderTriage(note, fit.triageBody, products);
  const [
    incidentTokens,
    permissionsTokens,
    triageTokens,
    systemTokens,
    disclosureTokens,
    userTokens,
    previousTokens,
  ] = (
    await counter.rawMany([
      incidentSection,
      permissionsSection,
      triageSection,
      systemPrompt,
      rendered.text,
      userPrompt,
      previousSection,
    ])
  ).map((n) => counter.scale(n));
  const row = (tag: string, tokens = 0): SectionReport => ({
    tag,
    tokens,
    originalTokens: tokens,
    truncated: false,
  });
  const sections: SectionReport[] = [
    row('incident', incidentTokens),
    row('kubernetes_cluster_access_permissions', permissionsTokens),
    {
      tag: 'initial_triage_report',
      tokens: triageTokens ?? 0,
      originalTokens: fit.triage.truncated
        ? (triageTokens ?? 0) - fit.triage.tokens + fit.triage.originalTokens
        : (triageTokens ?? 0),
      truncated: fit.triage.truncated,
    },
    row('system_prompt', systemTokens),
    { ...row('disclosure', disclosureTokens), truncated: briefsDegraded.length > 0 },
    row('user_prompt', userTokens),
  ];
  if (previous.lines.length > 0) {
    const full = previousDegraded ? await counter.count(previous.render(false)) : (previousTokens ?? 0);
    sections.push({
      tag: 'previous_investigations',
      tokens: previousTokens ?? 0,
      originalTokens: full,
      truncated: previousDegraded,
    });
  }
  if (briefsDegraded.length > 0) {
    const full = await counter.count(disclosure.render(new Set()).text);
    const d = sections[4];
    if (d) d.originalTokens = full;
  }
  const partTokens = await counter.rawMany(rendered.parts.map((p) => p.text));
  if (fit.triage.truncated) input.metrics?.truncation('initial_triage_report');
  for (const id of briefsDegraded) input.metrics?.truncation(`disclosure:${id}`);
  if (previousDegraded) input.metrics?.truncation('previous_investigations');

  const context: ContextReport = {
    estimator: config.context.estimator,
    budget: { warn: config.context.budget.warn, truncate: limit },
    totalTokens: fit.total,
    sections,
    skills: input.skills.sources.map((s) => ({ source: s.name, commit: s.commit })),
    agent: input.agent,
    safetyFactor: counter.factor,
    incomplete: incompleteReasons.length > 0,
    incompleteReasons,
    overBudgetBy: fit.overBudgetBy,
    triage: triage.summary,
    disclosure: {
      ...(disclosure.persona !== undefined ? { persona: disclosure.persona } : {}),
      subjects: disclosure.subjects,
      bootMode: disclosure.bootMode,
      parts: rendered.parts.map((p, i) => ({ part: p.part, tokens: counter.scale(partTokens[i] ?? 0) })),
      degraded: briefsDegraded,
      ...(view.skillsListedByCli
        ? {
            listedByCli: disclosure.skills.map((s) => ({
              name: s.name,
              description: s.description,
              path: s.path,
            })),
          }
        : {}),
    },
  };

  const meta = {
    totalTokens: fit.total,
    warn: config.context.budget.warn,
    truncate: limit,
    agent: input.agent,
  };
  if (fit.overBudgetBy > 0) {
    log.warn(
      { ...meta, overBudgetBy: fit.overBudgetBy },
      'context over budget: incident and permissions are never cut; the run proceeds with the overrun',
    );
  } else if (fit.total > config.context.budget.warn) {
    log.warn(meta, 'context above the warning threshold');
  }
  if (fit.triage.truncated) {
    log.info(
      { removedLines: fit.triage.removedLines, removedTokens: fit.triage.removedTokens },
      'triage report truncated to fit the budget',
    );
  }

  const prompt = fit.prompt;
  const promptSha256 = promptDigest(prompt);
  const promptSent = renderPromptSent(
    prompt,
    { agent: input.agent, model: input.model, placement: input.placement, promptSha256 },
    context,
  );
  await bundle.writeText(RUN_FILES.promptSent, promptSent);
  await bundle.writeJson(RUN_FILES.context, { ...context, promptSha256 });
  input.metrics?.stage('context', (performance.now() - started) / 1000);
  return { prompt, context, promptSent, promptSha256, skills: disclosure.skills };
}

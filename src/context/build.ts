import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type RunBundle } from '../workspace/bundle.js';
import { RUN_FILES } from '../workspace/layout.js';
import type { AgentName, Config } from '../config/schema.js';
import type { PipelineMetrics } from '../shared/types.js';
import { readAlertsRecord } from '../workspace/alerts.js';
import type { Workspace } from '../workspace/incident.js';
import type { IncidentWorkload } from '../workspace/workloads.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { fitToBudget, type MarkerInfo, type OmittedOutput } from './budget.js';
import { BootError, buildDisclosure, type Disclosure } from './disclosure/index.js';
import {
  assemblePrompt,
  renderPromptSent,
  substituteReportPath,
  substituteReportSections,
  renderRunPaths,
  substituteViewPaths,
} from './prompt.js';
import {
  findPreviousInvestigations,
  PREVIOUS_DEGRADE_ID,
  previousLine,
  renderPrevious,
  REPORT_COPY_MAX_BYTES,
} from './previous.js';
import {
  ALERT_METRICS_DEGRADE_ID,
  escapeTextContent,
  renderAlertMetrics,
  renderIncident,
  renderPermissions,
  renderTriage,
} from './sections.js';
import { tokenCounter } from './tokens.js';
import { runTriage, type ClusterKubeconfig, type TriageMode } from './triage.js';
import { renderProducts } from './triage-products.js';
import type { SkillEntry } from './disclosure/skill-types.js';
import type {
  AlertMetrics,
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
  /** The alert's expression evaluated as the run began (an Alertmanager incident): its own section. */
  alertMetrics?: Promise<AlertMetrics | undefined>;
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
  await bundle.makeDir(RUN_FILES.previous);
  // The copies are written side by side (their folder's fsyncs are then committed together), listed in
  // rank order.
  const copied = await Promise.all(
    found.map(async (p, i) => {
      const read = await readOwnFileBelow(
        path.dirname(p.reportPath),
        p.reportPath,
        REPORT_COPY_MAX_BYTES,
      ).catch(() => undefined);
      if (read?.kind !== 'ok') return undefined;
      const name = path.posix.join(
        RUN_FILES.previous,
        `${i + 1}-${p.folder.replace(/[^A-Za-z0-9._-]/g, '_')}.md`,
      );
      await bundle.writeText(name, read.text);
      return previousLine(p, path.posix.join(view.runDir, name));
    }),
  );
  const lines = copied.filter((line): line is string => line !== undefined);
  if (lines.length === 0) return NO_PREVIOUS;
  const indexPath = path.posix.join(view.runDir, RUN_FILES.previousIndex);
  await bundle.writeText(RUN_FILES.previousIndex, `${lines.join('\n')}\n`);
  return { lines, render: (degraded) => renderPrevious(lines, indexPath, degraded) };
}

export async function buildContext(input: BuildInput): Promise<BuiltContext> {
  const { config, view, bundle } = input;
  const started = performance.now();
  const counter = tokenCounter(config.context.estimator, config.context.safety_factor[input.agent] ?? 1);
  const limit = config.context.budget.truncate;
  // Handled before anything is awaited: a preload that fails early must not go unhandled meanwhile.
  const preloadedMetrics = (input.alertMetrics ?? Promise.resolve(undefined)).catch((err: unknown) => {
    input.log.warn({ err: errorMessage(err) }, "the alert's expression could not be preloaded");
    return undefined;
  });
  const incompleteReasons = input.skills.unavailable.map(
    (u) => `skills source ${u.name} unavailable: ${u.reason}`,
  );
  const [systemPrompt, userPrompt] = await Promise.all([
    readPromptFile(config.system_prompt_file, 'system_prompt_file', view, config.agent.report_sections),
    readPromptFile(config.user_prompt_file, 'user_prompt_file', view, config.agent.report_sections),
  ]);
  const fullOutputPath = path.posix.join(view.runDir, RUN_FILES.triageLog);
  const runPaths = renderRunPaths({
    workspaceDir: view.workspaceDir,
    triageDir: view.triageDir,
    triageLog: fullOutputPath,
    reportPath: view.reportPath,
  });
  // Independent of each other, so prepared side by side; their reasons are listed in a fixed order
  // (skills, then triage) so that the same inputs give the same prompt.
  const disclosureReasons: string[] = [];
  const triageReasons: string[] = [];
  const [disclosure, triage, previous, alertMetrics] = await Promise.all([
    disclosureOf(input, disclosureReasons),
    triageOf(input, fullOutputPath, triageReasons),
    preparePrevious(input).catch((err: unknown) => {
      input.log.warn(
        { err: errorMessage(err) },
        'past investigations could not be listed; the prompt has none',
      );
      return NO_PREVIOUS;
    }),
    preloadedMetrics,
  ]);
  incompleteReasons.push(...disclosureReasons, ...triageReasons);
  if (input.workspace.permissionsText === undefined)
    incompleteReasons.push('incident_cluster_permissions.json is absent or not valid JSON');
  if (input.clusterNotice) incompleteReasons.push(input.clusterNotice);

  // A storm's incident: the prompt names every workload alerts.json records, not only incident.json's.
  const workloads = (await readAlertsRecord(input.workspace.dir))?.workloads;
  const preload = preloadSections(input, triage, fullOutputPath, workloads);
  const fit = await fitToBudget({
    counter,
    limit,
    // The index of past investigations goes first (to a pointer at its file), before any brief and
    // long before the triage report is cut; incident and permissions are never touched.
    // The alert's values are pointed at only after every brief, just before the triage report is cut.
    degradable: [
      ...(previous.lines.length > 0 ? [PREVIOUS_DEGRADE_ID] : []),
      ...disclosure.degradable,
      ...(alertMetrics ? [ALERT_METRICS_DEGRADE_ID] : []),
    ],
    triageText: preload.triageText,
    ...(preload.omitted ? { omitted: preload.omitted } : {}),
    assemble: (degraded, triageBody) =>
      assembleRedacted(
        input,
        { systemPrompt, userPrompt, runPaths, disclosure, previous, preload, alertMetrics },
        degraded,
        triageBody,
      ),
    marker: truncationMarker(fullOutputPath, limit),
  });

  const context = await contextReport(input, {
    counter,
    fit,
    texts: { systemPrompt, userPrompt, runPaths },
    disclosure,
    previous,
    preload,
    alertMetrics,
    triage: triage.summary,
    incompleteReasons,
  });
  logBudget(input, fit);
  const prompt = fit.prompt;
  const promptSha256 = promptDigest(prompt);
  const promptSent = renderPromptSent(
    prompt,
    { agent: input.agent, model: input.model, placement: input.placement, promptSha256 },
    context,
  );
  await Promise.all([
    bundle.writeText(RUN_FILES.promptSent, promptSent),
    bundle.writeJson(RUN_FILES.context, { ...context, promptSha256 }),
  ]);
  input.metrics?.stage('context', (performance.now() - started) / 1000);
  return { prompt, context, promptSent, promptSha256, skills: disclosure.skills };
}

/** The skills index, persona and briefs; a run from the daemon degrades to none when they fail. */
async function disclosureOf(input: BuildInput, incompleteReasons: string[]): Promise<Disclosure> {
  try {
    const disclosure = await buildDisclosure({
      config: input.config,
      incident: input.workspace.incident,
      subjects: input.subjects,
      skills: input.skills,
      view: input.view,
      log: input.log,
    });
    for (const problem of disclosure.problems) incompleteReasons.push(`disclosure: ${problem}`);
    return disclosure;
  } catch (err) {
    // Subjects asked for by name (`context --subject`, replay) that boot.yml cannot boot fail fast
    // (the caller named them, so a silent fallback would mislead); a run from the daemon degrades instead.
    if (input.subjects !== undefined && err instanceof BootError) throw err;
    incompleteReasons.push(`skills/persona/briefs index unavailable: ${errorMessage(err)}`);
    input.log.warn(
      { err: errorMessage(err) },
      'disclosure failed; the prompt has no skills index, persona or briefs',
    );
    return NO_DISCLOSURE;
  }
}

type TriageOutcome = Awaited<ReturnType<typeof runTriage>>;

/** Runs (or reuses) the triage script and says why its report is incomplete when it is. */
async function triageOf(
  input: BuildInput,
  fullOutputPath: string,
  incompleteReasons: string[],
): Promise<TriageOutcome> {
  const { config, view } = input;
  const triageStarted = performance.now();
  const triage = await runTriage({
    agentLogPath: fullOutputPath,
    config,
    incident: input.workspace.incident,
    skills: input.skills,
    bundle: input.bundle,
    log: input.log,
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
  return triage;
}

interface PreloadSections {
  note: string | undefined;
  products: string;
  incident: string;
  permissions: string;
  triageText: string;
  omitted: OmittedOutput | undefined;
}

/** The preloaded sections, escaped, with the triage text's own gap (the script's cut) re-measured. */
function preloadSections(
  input: BuildInput,
  triage: TriageOutcome,
  fullOutputPath: string,
  workloads: readonly IncidentWorkload[] | undefined,
): PreloadSections {
  const { config, workspace, view } = input;
  const triageText = escapeTextContent(triage.text.replace(/\s+$/, ''));
  const omitted = triage.omitted && {
    ...triage.omitted,
    // Escaping may lengthen the text before the gap line; trimming may shorten the gap line at the end.
    at: escapeTextContent(triage.text.slice(0, triage.omitted.at)).length,
  };
  if (omitted) omitted.length = Math.min(omitted.length, Math.max(0, triageText.length - omitted.at));
  return {
    note: triageNote(triage.summary, fullOutputPath, config.skills.triage.timeout),
    // Ours, after the script's text: never cut by the budget.
    products: escapeTextContent(renderProducts(triage.products ?? [], view.triageDir)),
    incident: renderIncident(workspace.incidentText, workloads),
    permissions: renderPermissions(workspace.permissionsText, input.clusterNotice),
    triageText,
    omitted,
  };
}

interface PromptSources {
  systemPrompt: string;
  userPrompt: string;
  runPaths: string;
  disclosure: Disclosure;
  previous: PreparedPrevious;
  preload: PreloadSections;
  alertMetrics: AlertMetrics | undefined;
}

/** One candidate prompt for the budget: `degraded` items shortened, the triage body as cut so far. */
function assembleRedacted(
  input: BuildInput,
  src: PromptSources,
  degraded: ReadonlySet<string>,
  triageBody: string,
): PromptParts {
  const { preload } = src;
  const preloaded = [
    preload.incident,
    preload.permissions,
    renderAlertMetrics(src.alertMetrics, degraded.has(ALERT_METRICS_DEGRADE_ID)),
    src.previous.render(degraded.has(PREVIOUS_DEGRADE_ID)),
    renderTriage(preload.note, triageBody, preload.products),
  ]
    .filter((s) => s !== '')
    .join('\n\n');
  const parts = assemblePrompt({
    systemPrompt: src.systemPrompt,
    disclosure: src.disclosure.render(degraded).text,
    runPaths: src.runPaths,
    preloaded,
    userPrompt: src.userPrompt,
    placement: input.placement,
  });
  // Secrets (known values, credential shapes) never reach the model, and prompt-sent.md (which the
  // bundle redacts again) stays byte-identical to what was sent. Measured after redaction.
  return { system: input.bundle.redact(parts.system), user: input.bundle.redact(parts.user) };
}

type Fit = Awaited<ReturnType<typeof fitToBudget>>;
type Counter = ReturnType<typeof tokenCounter>;

interface ReportInput {
  counter: Counter;
  fit: Fit;
  texts: { systemPrompt: string; userPrompt: string; runPaths: string };
  disclosure: Disclosure;
  previous: PreparedPrevious;
  preload: PreloadSections;
  alertMetrics: AlertMetrics | undefined;
  triage: TriageSummary;
  incompleteReasons: string[];
}

/** context.json: each section's tokens (and before any cut), what was degraded, why it is incomplete. */
async function contextReport(input: BuildInput, r: ReportInput): Promise<ContextReport> {
  const { config, view } = input;
  const { counter, fit, disclosure } = r;
  const briefsDegraded = fit.degraded.filter(
    (id) => id !== PREVIOUS_DEGRADE_ID && id !== ALERT_METRICS_DEGRADE_ID,
  );
  const previousDegraded = fit.degraded.includes(PREVIOUS_DEGRADE_ID);
  const metricsDegraded = fit.degraded.includes(ALERT_METRICS_DEGRADE_ID);
  const rendered = disclosure.render(new Set(briefsDegraded));
  const sections = await sectionReports(r, rendered.text, briefsDegraded, previousDegraded);
  if (r.alertMetrics) sections.push(await alertMetricsReport(counter, r.alertMetrics, metricsDegraded));
  const partTokens = await counter.rawMany(rendered.parts.map((p) => p.text));
  if (fit.triage.truncated) input.metrics?.truncation('initial_triage_report');
  for (const id of briefsDegraded) input.metrics?.truncation(`disclosure:${id}`);
  if (previousDegraded) input.metrics?.truncation('previous_investigations');
  if (metricsDegraded) input.metrics?.truncation('alert_metrics');
  return {
    estimator: config.context.estimator,
    budget: { warn: config.context.budget.warn, truncate: config.context.budget.truncate },
    totalTokens: fit.total,
    sections,
    skills: input.skills.sources.map((s) => ({ source: s.name, commit: s.commit })),
    agent: input.agent,
    safetyFactor: counter.factor,
    incomplete: r.incompleteReasons.length > 0,
    incompleteReasons: r.incompleteReasons,
    overBudgetBy: fit.overBudgetBy,
    triage: r.triage,
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
}

async function sectionReports(
  r: ReportInput,
  disclosureText: string,
  briefsDegraded: string[],
  previousDegraded: boolean,
): Promise<SectionReport[]> {
  const { counter, fit, preload, previous } = r;
  const previousSection = previous.render(previousDegraded);
  const triageSection = renderTriage(preload.note, fit.triageBody, preload.products);
  const [incident, permissions, triage, system, disclosure, run, user, previousTokens] = (
    await counter.rawMany([
      preload.incident,
      preload.permissions,
      triageSection,
      r.texts.systemPrompt,
      disclosureText,
      r.texts.runPaths,
      r.texts.userPrompt,
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
    row('incident', incident),
    row('kubernetes_cluster_access_permissions', permissions),
    {
      tag: 'initial_triage_report',
      tokens: triage ?? 0,
      originalTokens: fit.triage.truncated
        ? (triage ?? 0) - fit.triage.tokens + fit.triage.originalTokens
        : (triage ?? 0),
      truncated: fit.triage.truncated,
    },
    row('system_prompt', system),
    {
      ...row('disclosure', disclosure),
      truncated: briefsDegraded.length > 0,
      ...(briefsDegraded.length > 0
        ? { originalTokens: await counter.count(r.disclosure.render(new Set()).text) }
        : {}),
    },
    row('run_paths', run),
    row('user_prompt', user),
  ];
  if (previous.lines.length > 0) {
    sections.push({
      tag: 'previous_investigations',
      tokens: previousTokens ?? 0,
      originalTokens: previousDegraded ? await counter.count(previous.render(false)) : (previousTokens ?? 0),
      truncated: previousDegraded,
    });
  }
  return sections;
}

/** context.json's row of the alert metrics section: its tokens as sent, and in full. */
async function alertMetricsReport(
  counter: Counter,
  metrics: AlertMetrics,
  degraded: boolean,
): Promise<SectionReport> {
  const full = await counter.count(renderAlertMetrics(metrics, false));
  const tokens = degraded ? await counter.count(renderAlertMetrics(metrics, true)) : full;
  return { tag: 'alert_metrics', tokens, originalTokens: full, truncated: degraded };
}

function logBudget(input: BuildInput, fit: Fit): void {
  const { config, log } = input;
  const meta = {
    totalTokens: fit.total,
    warn: config.context.budget.warn,
    truncate: config.context.budget.truncate,
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
}

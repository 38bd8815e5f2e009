import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from '../shared/yaml.js';
import { hasAnswer } from '../incident/queries.js';
import { readFeedback } from '../workspace/feedback.js';
import { readIncidentLoosely, readPermissionsText } from '../workspace/incident.js';
import { INCIDENT_FILE, PERMISSIONS_FILE, RUN_FILES, isRunId, runDirOf } from '../workspace/layout.js';
import { readRunResult } from '../workspace/run-record.js';
import { readState } from '../workspace/state.js';
import { parseKubectl } from '../kubectl/parse.js';
import type { Redactor } from '../log/redact.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { CLUSTER_DIR } from './cases/compile.js';
import { expectedSchema } from './cases/expected.js';
import type { PromRecording } from './prometheus/frozen.js';
import {
  fileRecording,
  PROMETHEUS_FILE,
  prometheusFileText,
  recordingOfExchange,
} from './prometheus/recordings.js';
import type { PrometheusExchange } from '../kubectl/broker/outputs.js';

// `eval promote <workspace>`: a real investigation that responders graded becomes an eval case. The
// incident (and its permissions) as the producer wrote them; every cluster read the run recorded —
// the triage script's and the agent's, with what each returned — as the case's literal command
// answers (and every promql answer as the case's recorded Prometheus), in a cluster marked `recorded_only`, so a call the recording lacks is answered
// `not-recorded` rather than invented; the responder's cause as the answer key. Everything is passed
// through the daemon's redaction again on the way out.

const LOG_MAX_BYTES = 64 << 20;

export class PromoteError extends Error {
  override name = 'PromoteError';
}

export interface PromoteOptions {
  /** The case folder to write (must not exist or be empty). */
  out: string;
  redactor: Redactor;
  /** The true causes as `kind/name` (default: object names in the responder's cause that the run saw). */
  entities?: string[];
}

export interface PromotedCase {
  dir: string;
  commands: number;
  /** Prometheus answers kept (cluster/prometheus.yaml). */
  promql: number;
  entities: string[];
  /** Recorded calls left out, and why (no output kept, cut output, refused). */
  skipped: { command: string; why: string }[];
}

interface RecordedCall {
  argv: string[];
  normalized: string;
  decision: string;
  exitCode: number | null;
}

interface RecordedOutput {
  call: number;
  tool?: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  cut?: unknown;
  prometheus?: PrometheusExchange;
}

async function readJsonLines<T>(base: string, file: string): Promise<T[]> {
  const read = await readOwnFileBelow(base, file, LOG_MAX_BYTES);
  if (read.kind === 'missing') return [];
  if (read.kind === 'refused') throw new PromoteError(read.reason);
  const out: T[] = [];
  for (const line of read.text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A torn last line is not a record.
    }
  }
  return out;
}

const quote = (word: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/** Kubernetes-style names in `text` (with a dash or a dot, as object names mostly are). */
function namesIn(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/\b[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?\b/g) ?? [])].filter(
    (w) => /[-.]/.test(w) && /[a-z]/.test(w) && w.length >= 3,
  );
}

export async function promoteInvestigation(
  workspace: string,
  options: PromoteOptions,
): Promise<PromotedCase> {
  const dir = path.resolve(workspace);
  const state = await readState(dir).catch(() => undefined);
  if (!state) throw new PromoteError(`${dir} holds no investigation (no readable .triage/state.json)`);
  const runId = state.runs.at(-1)?.id;
  if (!hasAnswer(state.state) || !isRunId(runId))
    throw new PromoteError(
      `${path.basename(dir)} is ${state.state}: only a finished investigation (succeeded) with feedback can become a case`,
    );
  const feedback = await readFeedback(dir);
  if (!feedback)
    throw new PromoteError(
      `${path.basename(dir)} has no feedback yet: a case needs the cause responders established; give it first (POST /v1/incidents/${path.basename(dir)}/feedback, the status page or Slack)`,
    );
  const runDir = runDirOf(dir, runId);
  const result = await readRunResult(runDir, dir);
  if (!result.ok)
    throw new PromoteError(`the run ${runId} of ${path.basename(dir)} has no readable result.json`);
  const cause =
    feedback.cause ??
    (feedback.verdict === 'correct' ? result.value.answer : undefined) ??
    (() => {
      throw new PromoteError(
        `the feedback on ${path.basename(dir)} is "${feedback.verdict}" without a cause: give the cause responders established (feedback "cause")`,
      );
    })();

  const incidentRead = await readIncidentLoosely(dir, dir);
  if (!incidentRead) throw new PromoteError(`${path.basename(dir)}/${INCIDENT_FILE} cannot be read`);
  const incident = incidentRead.doc as { namespace?: unknown; resource?: { name?: unknown } };
  const permissions = await readPermissionsText(dir, dir);

  const calls = await readJsonLines<RecordedCall>(dir, path.join(runDir, RUN_FILES.clusterCalls));
  const outputs = await readJsonLines<RecordedOutput>(dir, path.join(runDir, RUN_FILES.clusterOutputs));
  if (outputs.length === 0)
    throw new PromoteError(
      `the run ${runId} recorded no cluster call outputs (${RUN_FILES.clusterOutputs}): without them the case would have no frozen cluster`,
    );
  const redact = (text: string) => options.redactor.redact(text);
  const commands: { command: string; stdout: string; stderr: string; exit_code: number }[] = [];
  const skipped: PromotedCase['skipped'] = [];
  const seen = new Set<string>();
  const recordings: PromRecording[] = [];
  for (const output of outputs) {
    const call = calls[output.call - 1];
    if (!call || call.decision !== 'allowed' || !Array.isArray(call.argv)) continue;
    if (output.tool === 'prometheus') {
      const recording = output.prometheus ? recordingOfExchange(output.prometheus) : undefined;
      if (recording) recordings.push(recording);
      else
        skipped.push({
          command: call.normalized,
          why: 'Prometheus answered no data, or the answer was not kept',
        });
      continue;
    }
    const command = `kubectl ${call.argv.map(quote).join(' ')}`;
    const parsed = parseKubectl(call.argv);
    if (parsed.error || seen.has(parsed.normalized)) continue;
    if (output.cut) {
      skipped.push({ command, why: 'its output was cut when recorded; the case would answer it partially' });
      continue;
    }
    seen.add(parsed.normalized);
    commands.push({
      command: redact(command),
      stdout: redact(output.stdout),
      stderr: redact(output.stderr),
      exit_code: Math.min(255, Math.max(0, output.exitCode ?? 1)),
    });
  }

  const seenText = outputs
    .map((o) => o.stdout)
    .join('\n')
    .toLowerCase();
  const entities =
    options.entities ??
    namesIn(cause)
      .filter((name) => seenText.includes(name))
      .map((name) => `object/${name}`);
  if (entities.length === 0)
    throw new PromoteError(
      `no object the run saw is named in the cause ${JSON.stringify(cause)}: name the true cause with --entity kind/name`,
    );
  const resourceName = typeof incident.resource?.name === 'string' ? incident.resource.name : undefined;
  const expected = expectedSchema.parse({
    summary: redact(
      `Promoted from ${path.basename(dir)} (run ${runId}); the cause responders established: ${cause}`,
    ),
    root_cause: {
      entities: entities.map((e) => {
        const name = e.includes('/') ? e.slice(e.indexOf('/') + 1) : e;
        return { id: e.toLowerCase(), match: [name] };
      }),
      related: resourceName && !entities.some((e) => e.endsWith(`/${resourceName}`)) ? [resourceName] : [],
    },
  });

  const out = path.resolve(options.out);
  const existing = await readdir(out).catch(() => undefined);
  if (existing && existing.length > 0)
    throw new PromoteError(`${out} exists and is not empty: choose a new case folder`);
  await mkdir(path.join(out, CLUSTER_DIR), { recursive: true });
  await writeFile(path.join(out, INCIDENT_FILE), redact(incidentRead.text));
  if (permissions !== undefined) await writeFile(path.join(out, PERMISSIONS_FILE), redact(permissions));
  await writeFile(
    path.join(out, 'expected.yaml'),
    `# Promoted by \`triage-runner eval promote\` from a graded investigation; edit freely.\n${stringify(expected)}`,
  );
  await writeFile(
    path.join(out, CLUSTER_DIR, 'cluster.yaml'),
    stringify({
      source: `recorded by triage-runner during run ${runId} of ${path.basename(dir)} (kubectl calls and outputs, redacted)`,
      now: result.value.startedAt,
      namespace: typeof incident.namespace === 'string' ? incident.namespace : 'default',
      recorded_only: true,
    }),
  );
  await writeFile(path.join(out, CLUSTER_DIR, 'commands.yaml'), stringify(commands));
  if (recordings.length > 0)
    await writeFile(
      path.join(out, CLUSTER_DIR, PROMETHEUS_FILE),
      redact(
        prometheusFileText({
          source: `recorded by triage-runner during run ${runId} of ${path.basename(dir)} (promql calls and Prometheus's answers, redacted)`,
          recordings: recordings.map(fileRecording),
        }),
      ),
    );
  return { dir: out, commands: commands.length, promql: recordings.length, entities, skipped };
}

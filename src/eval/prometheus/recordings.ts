import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Document, isScalar, parseDocument, visit } from '../../shared/yaml.js';
import { z } from '../../shared/zod.js';
import { parsePromDuration, formatPromDuration } from '../../prometheus/duration.js';
import { CLUSTER_DIR, ClusterCompileError, MAX_RECORDING_BYTES } from '../cases/compile.js';
import { FROZEN_PROMETHEUS_VERSION, type FrozenPrometheus, type PromRecording } from './frozen.js';

// A case's recorded Prometheus answers, `cluster/prometheus.yaml`: each request the broker made (its
// endpoint and parameters, times in RFC 3339) and the `data` Prometheus answered, as its API gave it.
// Written by test/support/record-prometheus.ts from a real Prometheus, or by `eval promote` from an
// investigation's recorded calls; compiled here into what the eval's stand-in answers from.

export const PROMETHEUS_FILE = 'prometheus.yaml';

const time = z.iso.datetime({ offset: true }).describe('RFC 3339');
const recordingSchema = z
  .strictObject({
    endpoint: z.enum([
      'query',
      'query_range',
      'series',
      'labels',
      'label_values',
      'metadata',
      'alerts',
      'rules',
    ]),
    query: z.string().min(1).optional(),
    match: z.array(z.string().min(1)).optional(),
    label: z
      .string()
      .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/)
      .optional(),
    metric: z.string().optional(),
    time: time.optional(),
    start: time.optional(),
    end: time.optional(),
    step: z.string().optional(),
    data: z.unknown(),
  })
  .superRefine((r, ctx) => {
    const need = (key: keyof typeof r, why: string) => {
      if (r[key] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `a ${r.endpoint} recording needs ${key} (${why})`,
        });
    };
    if (r.endpoint === 'query' || r.endpoint === 'query_range') need('query', 'the expression');
    if (r.endpoint === 'query') need('time', 'when it was evaluated');
    if (r.endpoint === 'query_range')
      for (const k of ['start', 'end', 'step'] as const) need(k, 'the window');
    if (r.endpoint === 'label_values') need('label', 'whose values');
    if (r.step !== undefined && !parsePromDuration(r.step))
      ctx.addIssue({
        code: 'custom',
        path: ['step'],
        message: `${JSON.stringify(r.step)} is not a duration`,
      });
    const data = r.data as { resultType?: unknown; result?: unknown } | undefined;
    if ((r.endpoint === 'query' || r.endpoint === 'query_range') && !Array.isArray(data?.result))
      ctx.addIssue({
        code: 'custom',
        path: ['data'],
        message: 'expected the API data: {resultType, result: [...]}',
      });
  });

export const prometheusFileSchema = z.strictObject({
  source: z.string().min(1).describe('where these answers come from'),
  now: time
    .optional()
    .describe("the time every promql call of an eval asks at (default: cluster.yaml's now)"),
  recordings: z.array(recordingSchema),
});
export type PrometheusFile = z.infer<typeof prometheusFileSchema>;
export type FileRecording = PrometheusFile['recordings'][number];

const seconds = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso) / 1000);

function toRecording(r: FileRecording): PromRecording {
  const step = r.step === undefined ? undefined : (parsePromDuration(r.step) ?? 0) / 1000;
  const out: PromRecording = { endpoint: r.endpoint, data: r.data };
  for (const key of ['query', 'match', 'label', 'metric'] as const)
    if (r[key] !== undefined) Object.assign(out, { [key]: r[key] });
  for (const key of ['time', 'start', 'end'] as const) if (r[key] !== undefined) out[key] = seconds(r[key]);
  if (step !== undefined) out.step = step;
  return out;
}

/** A stored recording as the file writes it (times in RFC 3339, the step as a duration). */
export function fileRecording(r: PromRecording): FileRecording {
  const iso = (s: number | undefined) => (s === undefined ? undefined : new Date(s * 1000).toISOString());
  const out: Record<string, unknown> = { endpoint: r.endpoint };
  for (const key of ['query', 'match', 'label', 'metric'] as const)
    if (r[key] !== undefined) out[key] = r[key];
  for (const key of ['time', 'start', 'end'] as const) if (r[key] !== undefined) out[key] = iso(r[key]);
  if (r.step !== undefined) out.step = formatPromDuration(r.step * 1000);
  out.data = r.data;
  return out as FileRecording;
}

/** `cluster/prometheus.yaml` text: a sample, a series' labels or a list of names on one line each. */
export function prometheusFileText(file: PrometheusFile): string {
  const doc = new Document(file);
  visit(doc, {
    Map: (_, node) =>
      void (node.items.every((p) => isScalar(p.value)) && node.items.length > 0 && (node.flow = true)),
    Seq: (_, node) =>
      void (node.items.every((i) => isScalar(i)) && node.items.length > 0 && (node.flow = true)),
  });
  return doc.toString({ lineWidth: 0 });
}

/**
 * A recorded exchange of the run's records (cluster-outputs.jsonl's `prometheus`) as a recording: the
 * request's parameters read back, the answer's data; undefined for an answer that was not a success.
 */
export function recordingOfExchange(exchange: {
  endpoint: string;
  label?: string;
  params: [string, string][];
  answer: unknown;
}): PromRecording | undefined {
  const answer = exchange.answer as { status?: unknown; data?: unknown } | undefined;
  const endpoint = exchange.endpoint as PromRecording['endpoint'];
  if (answer?.status !== 'success' || !recordingSchema.shape.endpoint.safeParse(endpoint).success)
    return undefined;
  const params = new URLSearchParams(exchange.params);
  const num = (name: string) => (params.has(name) ? Number(params.get(name)) : undefined);
  const match = params.getAll('match[]');
  const out: PromRecording = { endpoint, data: answer.data };
  if (params.has('query')) out.query = params.get('query') ?? '';
  if (match.length > 0) out.match = match;
  if (exchange.label !== undefined) out.label = exchange.label;
  if (params.has('metric')) out.metric = params.get('metric') ?? '';
  for (const key of ['time', 'start', 'end', 'step'] as const) {
    const v = num(key);
    if (v !== undefined && Number.isFinite(v)) out[key] = v;
  }
  return out;
}

/** The case's recorded Prometheus answers, or undefined when it has none. Throws ClusterCompileError. */
export async function compileFrozenPrometheus(
  caseDir: string,
  caseName: string,
  now: string,
): Promise<FrozenPrometheus | undefined> {
  const dir = path.join(caseDir, CLUSTER_DIR);
  const file = path.join(dir, PROMETHEUS_FILE);
  const rel = path.join(CLUSTER_DIR, PROMETHEUS_FILE);
  const info = await lstat(file).catch(() => undefined);
  if (!info) return undefined;
  if (!info.isFile() || info.size > MAX_RECORDING_BYTES)
    throw new ClusterCompileError(dir, [
      `${rel}: ${info.isFile() ? `${info.size} bytes, over the ${MAX_RECORDING_BYTES}-byte limit` : 'not a regular file'}`,
    ]);
  const doc = parseDocument(await readFile(file, 'utf8'));
  if (doc.errors.length > 0)
    throw new ClusterCompileError(dir, [`${rel}: not valid YAML (${doc.errors[0]?.message ?? ''})`]);
  const parsed = prometheusFileSchema.safeParse(doc.toJS());
  if (!parsed.success)
    throw new ClusterCompileError(
      dir,
      parsed.error.issues.map((i) => `${rel}: ${i.path.join('.') || '(root)'}: ${i.message}`),
    );
  return {
    version: FROZEN_PROMETHEUS_VERSION,
    caseName,
    now: parsed.data.now ?? now,
    recordings: parsed.data.recordings.map(toRecording),
  };
}

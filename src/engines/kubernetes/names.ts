import { createHash } from 'node:crypto';
import { LABEL_PREFIX } from '../labels.js';

// Names and labels of the kubernetes engine's objects: the Job name derived from the run id, label
// keys and values made valid for the API server, and the annotations that keep the exact originals.

/** The agent's container name inside every Job pod. */
export const AGENT_CONTAINER = 'agent';
/** The init container that fetches the run's files from the daemon. */
export const FETCH_CONTAINER = 'fetch-run-files';
/** Label every Job of this engine carries; listing always selects on it. */
export const MANAGED_BY = { key: 'app.kubernetes.io/managed-by', value: 'triage-runner' } as const;
export const RUN_ID_ANNOTATION = `${LABEL_PREFIX}run-id`;
export const LABELS_ANNOTATION = `${LABEL_PREFIX}labels`;

const LABEL_VALUE_MAX = 63;

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}

/** A valid label value (≤63 chars, alphanumeric at both ends, [-_.A-Za-z0-9] inside). */
export function sanitizeLabelValue(value: string): string {
  let out = value.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (out.length > LABEL_VALUE_MAX) out = `${out.slice(0, LABEL_VALUE_MAX - 9)}-${shortHash(value)}`;
  return out.replace(/^[^A-Za-z0-9]+/, '').replace(/[^A-Za-z0-9]+$/, '');
}

/** A valid label key: optional DNS-subdomain prefix + "/" + a name of ≤63 chars. */
export function sanitizeLabelKey(key: string): string {
  const slash = key.lastIndexOf('/');
  const prefix =
    slash >= 0
      ? key
          .slice(0, slash)
          .toLowerCase()
          .replace(/[^a-z0-9.-]/g, '-')
      : '';
  const name = sanitizeLabelValue(slash >= 0 ? key.slice(slash + 1) : key) || 'label';
  return prefix ? `${prefix.slice(0, 253)}/${name}` : name;
}

/** The Job name for a run: a DNS-1123 label (lowercase, ≤63 chars) derived from the run id. */
export function jobNameFor(runId: string): string {
  const base = `triage-${runId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`
    .replace(/-+/g, '-')
    .replace(/-$/, '');
  return base.length <= LABEL_VALUE_MAX ? base : `${base.slice(0, LABEL_VALUE_MAX - 9)}-${shortHash(runId)}`;
}

export function sanitizeLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels).map(([k, v]) => [sanitizeLabelKey(k), sanitizeLabelValue(v)]),
  );
}

/** The selector of this engine's Jobs carrying `labels`. */
export function labelSelector(labels: Record<string, string>): string {
  const all = { ...sanitizeLabels(labels), [MANAGED_BY.key]: MANAGED_BY.value };
  return Object.entries(all)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The original labels a Job's annotation keeps; {} when it is missing or was edited into something else. */
export function parseLabels(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string')) as Record<
        string,
        string
      >;
    }
  } catch {
    // a hand-edited annotation: fall back to the labels
  }
  return {};
}

import { replaceFileIn } from '../util/fs.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { ALERTS_FILE, alertsPath } from './layout.js';
import { workloadsFrom, type IncidentWorkload } from './workloads.js';

// The alerts record: `alerts.json`, every alert behind an incident HTTP intake opened. Intake keeps
// the document itself (src/intake/webhooks/alerts-file.ts: its shape, kept parsed between batches);
// what the rest of the daemon reads of it is when every alert resolved and which workloads alerted.

/** alerts.json holds at most intake.max_alerts_per_incident alerts; a bigger file is not read. */
export const ALERTS_MAX_BYTES = 8 << 20;

/** What the rest of the daemon reads of alerts.json. */
export interface AlertsRecord {
  /** When every alert behind the incident resolved, if they all did. */
  resolvedAt?: string;
  /** The workloads alerting, first to alert first; absent in files written before they were kept. */
  workloads?: IncidentWorkload[];
}

/**
/**
 * alerts.json parsed, or undefined: no file, unreadable, not JSON, or reached through a symbolic link
 * below `base` (default: the workspace). Its alerts are as received (the triage step reads their
 * generatorURL).
 */
export async function readAlertsDocument(dir: string, base = dir): Promise<unknown> {
  const read = await readOwnFileBelow(base, alertsPath(dir), ALERTS_MAX_BYTES).catch(() => undefined);
  if (read?.kind !== 'ok') return undefined;
  try {
    return JSON.parse(read.text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * alerts.json's `resolvedAt` and `workloads`, or undefined: no file, unreadable, not JSON, or reached
 * through a symbolic link below `base` (default: the workspace).
 */
export async function readAlertsRecord(dir: string, base = dir): Promise<AlertsRecord | undefined> {
  const doc = await readAlertsDocument(dir, base);
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { resolvedAt: at, workloads: listed } = doc as { resolvedAt?: unknown; workloads?: unknown };
  const workloads = workloadsFrom(listed);
  return {
    ...(typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? { resolvedAt: at } : {}),
    ...(workloads ? { workloads } : {}),
  };
}

/**
 * Replaces alerts.json of an existing workspace with the document's text (in chunks, written in order);
 * false when the folder is gone, which is never re-created.
 */
export const writeAlerts = (dir: string, text: readonly Uint8Array[]): Promise<boolean> =>
  replaceFileIn(dir, ALERTS_FILE, text);

/** When every alert behind the incident resolved (alerts.json's `resolvedAt`), or undefined. */
export async function alertsResolvedAt(dir: string, base = dir): Promise<string | undefined> {
  return (await readAlertsRecord(dir, base))?.resolvedAt;
}

import { readdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { z } from '../shared/zod.js';
import { tryLock } from '../util/file-lock.js';
import { outboxDir } from './layout.js';
import { NOTIFY_SINK_TYPES, type NotifySinkType } from '../config/schema.js';
import { writeFileAtomic } from '../util/fs.js';
import { createExclusive, readNoFollow, realDirs } from './files.js';

// `<workspace>/.triage/outbox/`: one file per delivery (`<key>.json`, its state and retry schedule,
// rewritten atomically after every step) and what it sends (`<key>.payload.json`, written once before the
// entry exists). An entry is recorded before its first attempt, so a process killed at any point leaves
// either nothing (the delivery is planned again) or an entry that the next start finishes.

const ENTRY_SUFFIX = '.json';
const PAYLOAD_SUFFIX = '.payload.json';
const LOCK_SUFFIX = '.lock';
const MAX_ENTRY_BYTES = 1024 * 1024;
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/**
 * Why a delivery was created: a run started (sinks that keep one message per incident only), a run finished, someone re-sent it, a replay/compare asked for it, or every
 * alert behind an incident already told resolved (a follow-up to the message the sink already has).
 */
/** `feedback`: a responder rated the answer, and the incident's one message (Slack's parent) says so. */
export const TRIGGERS = [
  'running',
  'finished',
  'resend',
  'replay',
  'compare',
  'resolved',
  'feedback',
] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** What one delivered step leaves behind (Slack ts, PagerDuty dedup key, HTTP status…). */
export type StepResult = Record<string, string | number | boolean>;

export type StepStatus = 'pending' | 'sending' | 'delivered';

export interface StepState {
  id: string;
  status: StepStatus;
  /** When the current send began (a crash leaves `sending`: the next attempt reconciles first). */
  startedAt?: string;
  deliveredAt?: string;
  result?: StepResult;
}

export type EntryStatus = 'pending' | 'delivered' | 'failed';

/** A failure as recorded: never a secret (everything passes through the redactor first). */
export interface RecordedError {
  message: string;
  /** permanent: not retried; retry: scheduled again. */
  kind: 'retry' | 'permanent';
  status?: number;
  code?: string;
  /** The response body, cut to a few KB. */
  response?: string;
  retryAfterMs?: number;
}

/** `.triage/outbox/<key>.json`: one delivery to one sink, its steps and its retry schedule. */
export interface OutboxEntry {
  version: 1;
  key: string;
  /** Sent to the sink (webhook header, Slack metadata, PagerDuty note footer); unique across workspaces. */
  idempotencyKey: string;
  sink: string;
  type: NotifySinkType;
  incidentId: string;
  runId: string;
  trigger: Trigger;
  createdAt: string;
  status: EntryStatus;
  /** Failed attempts so far (drives the backoff). */
  attempts: number;
  nextAttemptAt?: string;
  lastError?: RecordedError;
  steps: StepState[];
  finishedAt?: string;
  /**
   * The incident's message at this sink from an earlier delivery (Slack: the parent's channel and ts):
   * this delivery updates it in place instead of posting another one.
   */
  parent?: { channel: string; ts: string };
}

/** What a sink renders once, stored beside the entry (`<key>.payload.json`) and sent as is on every retry. */
export type SinkPayload = Record<string, unknown>;

/** Keys are file names: `<run id>.<sink>[.<suffix>]`. */
export const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

const stepResult = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
const entrySchema = z.object({
  version: z.literal(1),
  key: z.string().regex(SAFE_KEY),
  idempotencyKey: z.string().min(1),
  sink: z.string().min(1),
  type: z.enum(NOTIFY_SINK_TYPES),
  incidentId: z.string(),
  runId: z.string(),
  trigger: z.enum(TRIGGERS),
  createdAt: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int().min(0),
  nextAttemptAt: z.string().optional(),
  lastError: z
    .object({
      message: z.string(),
      kind: z.enum(['retry', 'permanent']),
      status: z.number().optional(),
      code: z.string().optional(),
      response: z.string().optional(),
      retryAfterMs: z.number().optional(),
    })
    .optional(),
  steps: z.array(
    z.object({
      id: z.string().min(1),
      status: z.enum(['pending', 'sending', 'delivered']),
      startedAt: z.string().optional(),
      deliveredAt: z.string().optional(),
      result: stepResult.optional(),
    }),
  ),
  finishedAt: z.string().optional(),
  parent: z.object({ channel: z.string().min(1), ts: z.string().min(1) }).optional(),
});

export class OutboxError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'OutboxError';
  }
}

/** Records a delivery and what it sends; false when an entry with this key exists already. */
export async function recordDelivery(
  workspaceDir: string,
  entry: OutboxEntry,
  payload: SinkPayload,
): Promise<boolean> {
  checkKey(entry.key);
  const dir = outboxDir(workspaceDir);
  await realDirs(workspaceDir, dir, true);
  if (await readNoFollow(dir, entry.key + ENTRY_SUFFIX, 0)) return false;
  await writeFileAtomic(path.join(dir, entry.key + PAYLOAD_SUFFIX), JSON.stringify(payload));
  return createExclusive(dir, entry.key + ENTRY_SUFFIX, `${JSON.stringify(entry, null, 2)}\n`);
}

/** Rewrites an entry (temp file, fsync, rename: never through a link, which rename replaces). */
export async function saveEntry(workspaceDir: string, entry: OutboxEntry): Promise<void> {
  checkKey(entry.key);
  const dir = outboxDir(workspaceDir);
  await realDirs(workspaceDir, dir, true);
  await writeFileAtomic(path.join(dir, entry.key + ENTRY_SUFFIX), `${JSON.stringify(entry, null, 2)}\n`);
}

export async function readEntry(workspaceDir: string, key: string): Promise<OutboxEntry | undefined> {
  checkKey(key);
  const dir = outboxDir(workspaceDir);
  const read = await readNoFollow(dir, key + ENTRY_SUFFIX, MAX_ENTRY_BYTES);
  if (!read) return undefined;
  return parseEntry(path.join(dir, key + ENTRY_SUFFIX), read.text, read.truncated, key);
}

export async function readPayload(workspaceDir: string, key: string): Promise<SinkPayload> {
  checkKey(key);
  const dir = outboxDir(workspaceDir);
  const file = path.join(dir, key + PAYLOAD_SUFFIX);
  const read = await readNoFollow(dir, key + PAYLOAD_SUFFIX, MAX_PAYLOAD_BYTES);
  if (!read)
    throw new OutboxError(
      file,
      'is missing; the delivery cannot be sent (re-send it with `triage-runner notify`)',
    );
  if (read.truncated) throw new OutboxError(file, `is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  try {
    const value: unknown = JSON.parse(read.text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as SinkPayload;
  } catch {
    // reported below
  }
  throw new OutboxError(
    file,
    'is not a JSON object; the delivery cannot be sent (re-send it with `triage-runner notify`)',
  );
}

function parseEntry(file: string, text: string, truncated: boolean, key: string): OutboxEntry {
  if (truncated) throw new OutboxError(file, `is larger than ${MAX_ENTRY_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OutboxError(file, 'is not valid JSON');
  }
  const parsed = entrySchema.safeParse(value);
  if (!parsed.success)
    throw new OutboxError(file, `is not an outbox entry (${parsed.error.issues[0]?.message ?? 'bad shape'})`);
  if (parsed.data.key !== key) throw new OutboxError(file, `records key ${parsed.data.key}, not ${key}`);
  return parsed.data as OutboxEntry;
}

export interface OutboxListing {
  entries: OutboxEntry[];
  /** Entries that could not be read (corrupt, a link, too large): reported, never fatal. */
  problems: OutboxError[];
}

/** Every entry of a workspace's outbox (none when it has no outbox). */
export async function listEntries(workspaceDir: string): Promise<OutboxListing> {
  const dir = outboxDir(workspaceDir);
  const out: OutboxListing = { entries: [], problems: [] };
  if (!(await realDirs(workspaceDir, dir, false))) return out;
  const names = await readdir(dir);
  for (const name of names.sort()) {
    if (!name.endsWith(ENTRY_SUFFIX) || name.endsWith(PAYLOAD_SUFFIX) || name.startsWith('.')) continue;
    const key = name.slice(0, -ENTRY_SUFFIX.length);
    if (!SAFE_KEY.test(key)) continue;
    try {
      const entry = await readEntry(workspaceDir, key);
      if (entry) out.entries.push(entry);
    } catch (err) {
      out.problems.push(
        err instanceof OutboxError ? err : new OutboxError(path.join(dir, name), (err as Error).message),
      );
    }
  }
  return out;
}

/**
 * Takes the entry's lock (one process delivers it at a time, across replicas sharing the volume); undefined
 * when another live process holds it. A holder that died is taken over (same host: at once; another host:
 * after `staleMs` without a `touch`).
 */
export async function lockEntry(
  workspaceDir: string,
  key: string,
  staleMs: number,
): Promise<{ release: () => Promise<void>; touch: () => Promise<void> } | undefined> {
  checkKey(key);
  const dir = outboxDir(workspaceDir);
  await realDirs(workspaceDir, dir, true);
  const file = path.join(dir, key + LOCK_SUFFIX);
  const got = await tryLock(file, { staleMs });
  if (!got.acquired) return undefined;
  const release = () => got.lock.release();
  const touch = async () => {
    const now = new Date();
    await utimes(file, now, now).catch(() => undefined);
  };
  return { release, touch };
}

function checkKey(key: string): void {
  if (!SAFE_KEY.test(key))
    throw new OutboxError(key, 'is not a safe outbox key (letters, digits, ".", "_", "-")');
}

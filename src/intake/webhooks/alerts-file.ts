import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  type BigIntStats,
} from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../util/errors.js';
import { ALERTS_FILE } from '../../workspace/layout.js';
import { workloadsProblem, type IncidentWorkload } from '../../workspace/workloads.js';

// alerts.json of the incidents intake is filling, kept parsed between batches, and its text made
// without serializing every stored alert again. In a storm every batch adds to the same few
// incidents (once a storm key has storm_limit incidents, further groups join the latest), whose files
// hold up to max_alerts_per_incident alerts: reading and rewriting the whole file per batch made each
// alert cost more the bigger its incident grew.

/** One alert (or PagerDuty event) as kept in alerts.json. */
export interface AlertEntry {
  key: string;
  alias?: string;
  receivedAt: string;
  status: 'firing' | 'resolved';
  resolvedAt?: string;
  source: string;
  group: Record<string, string>;
  /** The alert exactly as received. */
  alert: unknown;
}

/** `<workspace>/alerts.json`: every alert behind the incident, appended as they arrive. */
export interface AlertsDoc {
  version: 1;
  firstAt: string;
  lastAt: string;
  /** Set once every alert has resolved. */
  resolvedAt?: string;
  /** Alerts received (including those over max_alerts_per_incident, which are counted only). */
  count: number;
  /** Alerts not stored because the incident already holds max_alerts_per_incident. */
  omitted: number;
  /** Alerts still firing. */
  open: number;
  /** The workloads alerting, first to alert first (a storm joins many); absent in files before it was kept. */
  workloads?: IncidentWorkload[];
  alerts: AlertEntry[];
}

/** A stored alert's bytes inside alerts.json, with the status fields they were made from. */
interface EntryBytes {
  status: AlertEntry['status'];
  resolvedAt: string | undefined;
  bytes: Buffer;
}

/**
 * Each stored alert's bytes, made once. An entry changes after it is stored only when it resolves
 * (store.ts sets `status` and `resolvedAt`): bytes made before that are made again.
 */
const entryBytes = new WeakMap<AlertEntry, EntryBytes>();

const reindent = (json: string, by: string): string => json.replaceAll('\n', `\n${by}`);

/** An entry as JSON.stringify(doc, null, 2) writes it inside the `alerts` array. */
function bytesOf(entry: AlertEntry): Buffer {
  // An alerts.json edited by hand may hold anything in its list: only objects are remembered.
  if (typeof entry !== 'object' || entry === null)
    return Buffer.from(`    ${reindent(JSON.stringify(entry, null, 2) ?? 'null', '    ')}`);
  const known = entryBytes.get(entry);
  if (known && known.status === entry.status && known.resolvedAt === entry.resolvedAt) return known.bytes;
  const bytes = Buffer.from(`    ${reindent(JSON.stringify(entry, null, 2), '    ')}`);
  entryBytes.set(entry, { status: entry.status, resolvedAt: entry.resolvedAt, bytes });
  return bytes;
}

const BETWEEN_ENTRIES = Buffer.from(',\n');

/**
 * The bytes of `JSON.stringify(doc, null, 2)`, as chunks to write in order: each stored alert is
 * serialized once and its bytes reused, and nothing joins them into one string. A batch that adds one
 * alert to an incident holding 500 serializes one alert, not 500.
 */
export function alertsDocChunks(doc: AlertsDoc): Buffer[] {
  const chunks: Buffer[] = [];
  let text = '';
  let first = true;
  for (const [key, value] of Object.entries(doc)) {
    const entries =
      key === 'alerts' && Array.isArray(value) && value.length > 0 ? (value as AlertEntry[]) : [];
    const json = entries.length > 0 ? '' : (JSON.stringify(value, null, 2) as string | undefined);
    if (json === undefined) continue;
    text += `${first ? '{\n' : ',\n'}  ${JSON.stringify(key)}: `;
    first = false;
    if (entries.length > 0) {
      chunks.push(Buffer.from(`${text}[\n`));
      entries.forEach((entry, i) => {
        if (i > 0) chunks.push(BETWEEN_ENTRIES);
        chunks.push(bytesOf(entry));
      });
      text = '\n  ]';
    } else text += reindent(json, '  ');
  }
  chunks.push(Buffer.from(first ? '{}' : `${text}\n}`));
  return chunks;
}

/** `JSON.stringify(doc, null, 2)`, made from alertsDocChunks. */
export const alertsDocText = (doc: AlertsDoc): string => Buffer.concat(alertsDocChunks(doc)).toString('utf8');

/**
 * Why `value`, parsed from alerts.json, is not a doc intake can add alerts to (an edit by hand, another
 * program's file); undefined when it is one.
 */
export function alertsDocProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is not a JSON object';
  const doc = value as Record<string, unknown>;
  if (doc.version !== 1) return `"version" is ${JSON.stringify(doc.version) ?? 'missing'}, not 1`;
  for (const key of ['firstAt', 'lastAt'])
    if (typeof doc[key] !== 'string') return `"${key}" is not a string`;
  if (doc.resolvedAt !== undefined && typeof doc.resolvedAt !== 'string')
    return '"resolvedAt" is not a string';
  for (const key of ['count', 'omitted', 'open'])
    if (!Number.isSafeInteger(doc[key])) return `"${key}" is not a whole number`;
  const workloads = workloadsProblem(doc.workloads);
  if (workloads) return workloads;
  if (!Array.isArray(doc.alerts)) return '"alerts" is not a list';
  const bad = doc.alerts.findIndex((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return true;
    const { key, status } = entry as Record<string, unknown>;
    return typeof key !== 'string' || (status !== 'firing' && status !== 'resolved');
  });
  if (bad >= 0)
    return `alerts[${bad}] is not a stored alert (an object with a "key" and a "status" of firing or resolved)`;
  return undefined;
}

/** Told once per version of an alerts.json that is there but not a doc: its path and what is wrong. */
export type OnMalformed = (file: string, problem: string) => void;

/** At most this many malformed files are remembered (to be told once each); then the memory starts over. */
const MAX_MALFORMED = 1024;

interface Known {
  doc: AlertsDoc;
  /** Inode, size and modification time of the file the doc was read from or written to. */
  identity: string;
  bytes: number;
}

/**
 * The file's own stats (a symbolic link's, not its target's); undefined when it cannot be looked at
 * (gone, or its folder replaced by a file).
 */
function statOf(file: string): BigIntStats | undefined {
  try {
    return lstatSync(file, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

const identityOf = (stats: BigIntStats): string => `${stats.ino}:${stats.size}:${stats.mtimeNs}`;

/**
 * Parsed alerts.json files by path, most recently used last, bounded by the bytes of their files. A
 * doc is answered from memory only while its file has the inode, size and modification time this
 * process last read or wrote: a replica's write (a new inode) or an edit by hand is read afresh.
 * The store mutates the docs it is handed; a batch that fails must `forget` them.
 */
export class AlertsDocCache {
  private readonly known = new Map<string, Known>();
  private bytes = 0;
  /** Files that were there but not a doc, by path: the identity that was told. */
  private readonly malformed = new Map<string, string>();

  private readonly maxBytes: number;
  private readonly maxReadBytes: number;
  private readonly onMalformed: OnMalformed;

  /**
   * `maxBytes`: the parsed files held (8 MiB). `maxReadBytes`: a larger file is not read at all (64 MiB;
   * intake writes at most max_alerts_per_incident alerts to it).
   */
  constructor(options: { maxBytes?: number; maxReadBytes?: number; onMalformed?: OnMalformed } = {}) {
    this.maxBytes = options.maxBytes ?? 8 << 20;
    this.maxReadBytes = options.maxReadBytes ?? 64 << 20;
    this.onMalformed = options.onMalformed ?? (() => undefined);
  }

  /**
   * alerts.json in `dir`; null when the folder or file is gone or not a regular file, or when the file
   * is not an alerts doc (told to onMalformed once per version of the file).
   */
  read(dir: string): AlertsDoc | null {
    const file = path.join(dir, ALERTS_FILE);
    const known = this.known.get(file);
    if (known) {
      const stats = statOf(file);
      if (stats?.isFile() && identityOf(stats) === known.identity) {
        this.known.delete(file);
        this.known.set(file, known);
        return known.doc;
      }
      this.forget(dir);
    }
    let fd: number;
    try {
      // Not through a symbolic link: the file is the incident's own, or it is not read.
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch (err) {
      const link = (err as NodeJS.ErrnoException).code === 'ELOOP' ? statOf(file) : undefined;
      if (link) this.tell(file, identityOf(link), 'it is a symbolic link, which intake does not follow');
      return null;
    }
    try {
      const stats = fstatSync(fd, { bigint: true });
      const identity = identityOf(stats);
      if (!stats.isFile()) {
        this.tell(file, identity, 'it is not a regular file');
        return null;
      }
      if (this.malformed.get(file) === identity) return null;
      if (stats.size > this.maxReadBytes) {
        this.tell(file, identity, `it is ${stats.size} bytes, over the ${this.maxReadBytes} intake reads`);
        return null;
      }
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(fd).toString('utf8'));
      } catch (err) {
        this.tell(file, identity, `it is not JSON (${errorMessage(err)})`);
        return null;
      }
      const problem = alertsDocProblem(value);
      if (problem) {
        this.tell(file, identity, problem);
        return null;
      }
      this.malformed.delete(file);
      this.remember(file, value as AlertsDoc, stats);
      return value as AlertsDoc;
    } catch {
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /** `doc` is what alerts.json in `dir` now holds (just written by this process). */
  wrote(dir: string, doc: AlertsDoc): void {
    const file = path.join(dir, ALERTS_FILE);
    this.forget(dir);
    const stats = statOf(file);
    if (stats?.isFile()) this.remember(file, doc, stats);
  }

  forget(dir: string): void {
    const file = path.join(dir, ALERTS_FILE);
    const known = this.known.get(file);
    if (!known) return;
    this.known.delete(file);
    this.bytes -= known.bytes;
  }

  get size(): number {
    return this.known.size;
  }

  /** Tells onMalformed of `file`, unless this version of it was told already. */
  private tell(file: string, identity: string, problem: string): void {
    if (this.malformed.get(file) === identity) return;
    if (this.malformed.size >= MAX_MALFORMED) this.malformed.clear();
    this.malformed.set(file, identity);
    this.onMalformed(file, problem);
  }

  private remember(file: string, doc: AlertsDoc, stats: BigIntStats): void {
    const bytes = Number(stats.size);
    if (bytes > this.maxBytes) return;
    this.known.set(file, { doc, identity: identityOf(stats), bytes });
    this.bytes += bytes;
    for (const [oldest, { bytes: b }] of this.known) {
      if (this.bytes <= this.maxBytes) break;
      this.known.delete(oldest);
      this.bytes -= b;
    }
  }
}

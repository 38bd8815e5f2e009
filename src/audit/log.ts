import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
  type BigIntStats,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Redactor } from '../log/redact.js';
import { AUDIT_FILE, AUDIT_HEAD_FILE } from '../workspace/layout.js';
import { waitLock } from '../util/file-lock.js';
import { fileModeFor, fsyncFd, writeFileAtomic } from '../util/fs.js';
import { ensureOwnDir } from '../util/safe-path.js';
import { KeyedQueue } from '../util/keyed-queue.js';

// `.triage/audit.jsonl`: an append-only event log where each line carries the hash of the line
// before it, so that editing, deleting, inserting or reordering lines is detectable.

export type AuditEventType =
  | 'detected'
  | 'validated'
  | 'rejected'
  | 'claimed'
  | 'queued'
  | 'deferred'
  | 'duplicate'
  | 'retry_scheduled'
  | 'preparing'
  | 'skills_resolved'
  | 'triage_started'
  | 'triage_finished'
  | 'context_built'
  | 'launched'
  | 'report_validated'
  | 'finished'
  | 'interrupted'
  | 'adopted'
  | 'requeued'
  | 'released'
  | 'replayed'
  | 'reattached'
  // An adopted run's model gateway: listening again where its agent calls, or why it could not.
  | 'gateway_resumed'
  | 'outcome'
  | 'waiting'
  | 'retry_requested'
  | 'incident_changed'
  | 'resolved'
  | 'unsafe'
  // The kubectl guard (src/kubectl): a cluster call refused by the guard or by the agent CLI's own rules.
  | 'kubectl_refused'
  // The evidence check of the report against the run's recorded cluster calls (src/evidence).
  | 'evidence_checked'
  // Permissions probed with kubectl auth can-i for an incident without incident_cluster_permissions.json.
  | 'permissions_probed'
  // Results out (src/notify): a delivery recorded in the outbox, each attempt, and how it ended.
  | 'notify_queued'
  | 'notify_attempted'
  | 'notify_delivered'
  | 'notify_failed'
  // A responder's verdict on the investigation (src/feedback).
  | 'feedback_recorded'
  // Retention (src/audit/prune.ts): a run's recorded outputs removed, with the digests they had.
  | 'pruned';

export interface AuditEvent {
  type: AuditEventType;
  incidentId?: string;
  runId?: string;
  [field: string]: unknown;
}

export interface AuditEntry extends AuditEvent {
  seq: number;
  ts: string;
  prev: string;
  /** HMAC-SHA256 of `hash` with the audit key, when the log is keyed (audit.hmac_secret). */
  mac?: string;
  hash: string;
}

const GENESIS = '0'.repeat(64);
const LOCK_STALE_MS = 30_000;
// Longer than LOCK_STALE_MS, so that one append always outlasts a lock left by a crashed holder elsewhere.
const LOCK_WAIT_MS = 40_000;
// The last line is found by reading backwards from the end in blocks of this size.
const TAIL_BLOCK_BYTES = 64 * 1024;

/**
 * The log is opened once per write, to read its tail and append, and never through a symlink at its
 * place (a planted link is never written through).
 */
const OPEN_FOR_APPEND = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hash covers every field except `hash` itself, in a stable key order. */
function entryHash(entry: Omit<AuditEntry, 'hash'>): string {
  return sha256(stableStringify(entry));
}

export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface AuditLogOptions {
  redactor?: Redactor;
  now?: () => Date;
  /** Keys the chain: each entry carries an HMAC of its hash, which only a holder of the key can forge. */
  key?: string;
}

export const entryMac = (key: string, hash: string): string =>
  createHmac('sha256', key).update(hash).digest('hex');

/**
 * Appends hash-chained events to `<dir>/audit.jsonl`, serialised within and across processes. Events
 * for one folder appended in the same tick, or while a write is under way, are written together (one
 * lock, one tail read, one fsync, one head update), in the order they were appended; each append
 * resolves only once its write is synced.
 */
export class AuditLog {
  private readonly queue = new KeyedQueue<AuditEvent, AuditEntry>(
    (triageDir, events) => this.appendLocked(triageDir, events),
    Infinity,
  );
  /**
   * The last line this log wrote to each file, with the file's inode, size and mtime right after: the
   * next append finds the tail by one fstat instead of reading it back (any other writer changes them).
   */
  private readonly tails = new Map<string, KnownTail>();
  constructor(private readonly options: AuditLogOptions = {}) {}

  /** Events held back to share a later write, per folder (see `append`'s `linger`). */
  private readonly held = new Map<string, { events: Held[]; timer: NodeJS.Timeout }>();

  /**
   * `triageDir` is the workspace's `.triage/` folder. Resolves once the event is durable. With
   * `linger`, the event waits (at most AUDIT_LINGER_MS) for the folder's next event without it and is
   * written with that one, in order: a run's stage events, which nothing waits for, then cost one
   * write between them instead of one each.
   */
  append(triageDir: string, event: AuditEvent, options: { linger?: boolean } = {}): Promise<AuditEntry> {
    if (options.linger)
      return new Promise<AuditEntry>((resolve, reject) => {
        let held = this.held.get(triageDir);
        if (!held) {
          held = { events: [], timer: setTimeout(() => void this.release(triageDir), AUDIT_LINGER_MS) };
          this.held.set(triageDir, held);
        }
        held.events.push({ event, resolve, reject });
      });
    void this.release(triageDir);
    return this.queue.submit(triageDir, event);
  }

  /** Writes every held event now (the daemon's shutdown); resolves once they are durable. */
  async flush(): Promise<void> {
    await Promise.all([...this.held.keys()].map((dir) => this.release(dir)));
  }

  /** Queues the folder's held events (ahead of anything queued after this call). */
  private release(triageDir: string): Promise<unknown> {
    const held = this.held.get(triageDir);
    if (!held) return Promise.resolve();
    this.held.delete(triageDir);
    clearTimeout(held.timer);
    return Promise.allSettled(
      held.events.map(({ event, resolve, reject }) =>
        this.queue.submit(triageDir, event).then(resolve, reject),
      ),
    );
  }

  private async appendLocked(triageDir: string, events: AuditEvent[]): Promise<AuditEntry[]> {
    // Never through a symlink, and never re-creating a removed workspace (or root): the folder holding
    // the audit folder must exist.
    await ensureOwnDir(triageDir, path.dirname(triageDir));
    const lock = await waitLock(path.join(triageDir, 'audit.lock'), {
      // Only excludes other writers while this one runs: after a crash it is stale whatever it holds.
      durable: false,
      staleMs: LOCK_STALE_MS,
      waitMs: LOCK_WAIT_MS,
      what: 'audit log',
    });
    try {
      const file = path.join(triageDir, AUDIT_FILE);
      const known = this.tails.get(file);
      // Synchronous file calls around the one fsync: see util/fs.ts.
      const fd = openSync(file, OPEN_FOR_APPEND, fileModeFor(file));
      // One fstat: the file's kind, and (inode, size, mtime) for the tail check.
      const st = fstatSync(fd, { bigint: true });
      if (!st.isFile()) {
        closeSync(fd);
        throw new Error(
          `${file} is not a regular file, so no event can be appended; remove it (and run \`triage-runner audit verify\` on the workspace)`,
        );
      }
      this.tails.delete(file);
      let last: string | undefined;
      const entries: AuditEntry[] = [];
      try {
        const tail = lastLineRepairingTornTail(fd, st, known);
        last = tail.last;
        let repaired = tail.repaired;
        let seq = last ? parseEntry(last, file).seq + 1 : 0;
        const lines: string[] = [];
        for (const event of events) {
          const redacted = this.options.redactor ? this.options.redactor.redactValue(event) : event;
          // Hash exactly what a reader will parse back (Dates become strings, undefined disappears).
          const clean = JSON.parse(JSON.stringify(redacted)) as AuditEvent;
          // How many entries follow this one in the same write: audit.head may lag by one whole write.
          const rest = events.length - 1 - entries.length;
          const base = {
            ...clean,
            ...(repaired ? { repaired } : {}),
            ...(rest > 0 ? { rest } : {}),
            seq: seq++,
            ts: (this.options.now?.() ?? new Date()).toISOString(),
            prev: last ? sha256(last) : GENESIS,
          };
          const hash = entryHash(base);
          const key = this.options.key;
          const entry: AuditEntry = { ...base, hash, ...(key ? { mac: entryMac(key, hash) } : {}) };
          last = JSON.stringify(entry);
          repaired = undefined;
          entries.push(entry);
          lines.push(last);
        }
        writeAll(fd, lines.map((l) => `${l}\n`).join(''));
        await fsyncFd(fd);
        this.remember(file, tailOf(fstatSync(fd, { bigint: true }), last as string));
      } finally {
        closeSync(fd);
      }
      const lastEntry = entries.at(-1) as AuditEntry;
      await writeHead(triageDir, { seq: lastEntry.seq, line: sha256(last as string) });
      return entries;
    } finally {
      await lock.release();
    }
  }

  private remember(file: string, tail: KnownTail): void {
    // One entry per workspace written recently: a soak's thousands of folders do not pile up.
    if (this.tails.size >= MAX_KNOWN_TAILS) {
      const oldest = this.tails.keys().next().value;
      if (oldest !== undefined) this.tails.delete(oldest);
    }
    this.tails.set(file, tail);
  }
}

const MAX_KNOWN_TAILS = 256;

/** How long an event appended with `linger` may wait for the next write to its folder. */
export const AUDIT_LINGER_MS = 250;

interface Held {
  event: AuditEvent;
  resolve: (entry: AuditEntry) => void;
  reject: (err: unknown) => void;
}

/** A log file as this process left it: its last line, and what an fstat said right after the write. */
interface KnownTail {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  last: string;
}

const tailOf = (st: BigIntStats, last: string): KnownTail => ({
  ino: st.ino,
  size: st.size,
  mtimeNs: st.mtimeNs,
  last,
});

function parseEntry(line: string, file: string): AuditEntry {
  let entry: Partial<AuditEntry> | null;
  try {
    entry = JSON.parse(line) as Partial<AuditEntry> | null;
  } catch {
    throw new Error(
      `the last line of ${file} is not valid JSON, so no event can be chained after it; run \`triage-runner audit verify\` on the workspace and restore the log`,
    );
  }
  // The next entry's seq and hash come from this one: anything else would chain garbage after it.
  if (
    typeof entry !== 'object' ||
    entry === null ||
    !Number.isSafeInteger(entry.seq) ||
    (entry.seq as number) < 0
  )
    throw new Error(
      `the last line of ${file} is not an audit entry (an object with a whole-number "seq"), so no event can be chained after it; run \`triage-runner audit verify\` on the workspace and restore the log`,
    );
  return entry as AuditEntry;
}

/**
 * The last complete line, read backwards from the end of the file (an append costs the same for a log of
 * ten entries or a hundred thousand). A final line without its newline can only come from a write cut
 * short by a crash (appends are acknowledged after the newline is synced): when it does not parse, it is
 * cut off and the next entry records how many bytes were dropped; when it does parse, the missing
 * newline is added.
 */
function lastLineRepairingTornTail(
  fd: number,
  st: BigIntStats,
  known?: KnownTail,
): { last?: string; repaired?: string } {
  if (known && st.ino === known.ino && st.size === known.size && st.mtimeNs === known.mtimeNs)
    return { last: known.last };
  const size = Number(st.size);
  if (size === 0) return {};
  const lastByte = Buffer.alloc(1);
  readSync(fd, lastByte, 0, 1, size - 1);
  if (lastByte[0] === 0x0a) {
    const start = lineStart(fd, size - 1);
    return { last: readRange(fd, start, size - 1).toString('utf8') };
  }
  // No final newline: [cut, size) is an unterminated line.
  const cut = lineStart(fd, size);
  const tail = readRange(fd, cut, size);
  const tailText = tail.toString('utf8');
  let tailParses = true;
  try {
    JSON.parse(tailText);
  } catch {
    tailParses = false;
  }
  if (tailParses) {
    writeAll(fd, '\n');
    return { last: tailText };
  }
  ftruncateSync(fd, cut);
  const repaired = `dropped ${tail.length} bytes of an incomplete last line (a write cut short)`;
  if (cut === 0) return { repaired };
  const prev = lastLineRepairingTornTail(fd, fstatSync(fd, { bigint: true }));
  return { ...(prev.last !== undefined ? { last: prev.last } : {}), repaired };
}

/** Writes all of `text` at the end of the file (O_APPEND), however many calls it takes. */
function writeAll(fd: number, text: string): void {
  const data = Buffer.from(text);
  for (let done = 0; done < data.length;) done += writeSync(fd, data, done, data.length - done);
}

/** Offset just after the last newline before `end` (0 when there is none), reading backwards in blocks. */
function lineStart(fd: number, end: number): number {
  let pos = end;
  // Every byte used is read into it first.
  const block = Buffer.allocUnsafe(TAIL_BLOCK_BYTES);
  while (pos > 0) {
    const from = Math.max(0, pos - TAIL_BLOCK_BYTES);
    const bytesRead = readSync(fd, block, 0, pos - from, from);
    const at = block.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) return from + at + 1;
    pos = from;
  }
  return 0;
}

function readRange(fd: number, start: number, end: number): Buffer {
  const out = Buffer.alloc(end - start);
  let done = 0;
  while (done < out.length) {
    const bytesRead = readSync(fd, out, done, out.length - done, start + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return out.subarray(0, done);
}

/** What `audit.head` records: the last entry written, by sequence number and line hash. */
export interface AuditHead {
  seq: number;
  line: string;
}

/**
 * `audit.head` holds two fixed-size slots, each a JSON head with a checksum padded to
 * HEAD_SLOT_BYTES. A write overwrites the older slot in place and syncs its data (no temp file, rename
 * or folder sync, and no journal commit since the size does not change); a write cut short leaves the
 * other, intact slot one write behind, which verify accepts. A head of another shape (none yet, or a
 * single JSON object from before the slots) is replaced atomically by the two-slot form.
 */
const HEAD_SLOT_BYTES = 512;
const fdatasyncFd: (fd: number) => Promise<void> = promisify(fdatasync);

const headSum = (head: AuditHead): string => sha256(`${head.seq}:${head.line}`);

function headSlot(head: AuditHead): string {
  return `${JSON.stringify({ ...head, sum: headSum(head) }).padEnd(HEAD_SLOT_BYTES - 1, ' ')}\n`;
}

function parseHeadSlot(text: string): AuditHead | undefined {
  try {
    const slot = JSON.parse(text) as { seq?: unknown; line?: unknown; sum?: unknown };
    if (typeof slot.seq !== 'number' || typeof slot.line !== 'string') return undefined;
    const head = { seq: slot.seq, line: slot.line };
    return slot.sum === headSum(head) ? head : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The head recorded in `text`: the newer intact slot of the two-slot form, or the single JSON object
 * written before the slots; undefined when neither can be read.
 */
export function parseAuditHead(text: string): AuditHead | undefined {
  if (text.length === 2 * HEAD_SLOT_BYTES) {
    const slots = [text.slice(0, HEAD_SLOT_BYTES), text.slice(HEAD_SLOT_BYTES)].map(parseHeadSlot);
    const intact = slots.filter((h): h is AuditHead => h !== undefined);
    if (intact.length > 0) return intact.reduce((a, b) => (b.seq > a.seq ? b : a));
  }
  try {
    const head = JSON.parse(text) as { seq?: unknown; line?: unknown };
    if (head && typeof head === 'object') return head as AuditHead;
  } catch {
    // neither form
  }
  return undefined;
}

/** Records `head` in `<triageDir>/audit.head` (see HEAD_SLOT_BYTES); durable when it resolves. */
async function writeHead(triageDir: string, head: AuditHead): Promise<void> {
  const file = path.join(triageDir, AUDIT_HEAD_FILE);
  const slot = headSlot(head);
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_NOFOLLOW);
  } catch {
    // absent, or something planted in its place (a link): replaced below
  }
  if (fd !== undefined) {
    try {
      if (fstatSync(fd).size === 2 * HEAD_SLOT_BYTES) {
        const both = Buffer.alloc(2 * HEAD_SLOT_BYTES);
        readSync(fd, both, 0, both.length, 0);
        const [a, b] = [0, 1].map((i) =>
          parseHeadSlot(both.toString('utf8', i * HEAD_SLOT_BYTES, (i + 1) * HEAD_SLOT_BYTES)),
        );
        const older = (a?.seq ?? -1) <= (b?.seq ?? -1) ? 0 : 1;
        if (writeSync(fd, slot, older * HEAD_SLOT_BYTES, 'utf8') === HEAD_SLOT_BYTES) {
          await fdatasyncFd(fd);
          return;
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  await writeFileAtomic(file, slot + slot, fileModeFor(file), { createDir: false });
}

/**
 * How a verified chain is keyed: from line `from` (1-based; the lines before it were written before the
 * chain was keyed, e.g. an old workspace retried), every line carries an HMAC, `checked` with the key
 * when one was given. A chain without it is unkeyed (written without a key, before chains were keyed by
 * default): an appended line with recomputed hashes cannot be detected.
 */
export interface ChainKeying {
  from: number;
  checked: boolean;
}

export type VerifyResult =
  | { ok: true; entries: number; keyed?: ChainKeying }
  | { ok: false; entries: number; line: number; problem: string };

/** Checks the chain: line numbers in the result are 1-based, as an editor shows them. */
export interface VerifyOptions {
  /**
   * The audit key: every HMAC must match it (a forged line with recomputed hashes fails). Without it
   * the HMACs are only checked to be there: from the first keyed line on, a line without one fails.
   */
  key?: string;
}

const MAC_HEX = /^[0-9a-f]{64}$/;

export async function verifyAuditLog(triageDir: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const file = path.join(triageDir, AUDIT_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      entries: 0,
      line: 0,
      problem: code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file} (${code})`,
    };
  }
  const lines = text.split('\n');
  const unterminated = lines.at(-1) !== '';
  if (!unterminated) lines.pop();
  let prevLine: string | undefined;
  let keyedFrom: number | undefined;
  for (const [i, line] of lines.entries()) {
    const bad = (problem: string): VerifyResult => ({
      ok: false,
      entries: lines.length,
      line: i + 1,
      problem,
    });
    let entry: AuditEntry;
    try {
      entry = JSON.parse(line) as AuditEntry;
    } catch {
      return bad(
        unterminated && i === lines.length - 1
          ? 'not valid JSON, and the file does not end with a newline: the line was cut short (a crash mid-append, or the file was truncated); the next append drops it and records the repair'
          : 'not valid JSON',
      );
    }
    if (!entry || typeof entry !== 'object' || Array.isArray(entry))
      return bad('not an audit entry (a JSON object)');
    const expectedPrev = prevLine === undefined ? GENESIS : sha256(prevLine);
    if (entry.seq !== i)
      return bad(
        `sequence number is ${String(entry.seq)}, expected ${i} (a line was deleted, inserted or moved)`,
      );
    if (entry.prev !== expectedPrev)
      return bad('does not chain to the line before it (a line was deleted, inserted or moved)');
    const { hash, mac, ...rest } = entry;
    if (entryHash(rest) !== hash) return bad('content does not match its hash (the line was edited)');
    if (mac === undefined) {
      // Once keyed, always keyed: a line without an HMAC after keyed ones was written without the key.
      if (keyedFrom !== undefined)
        return bad(
          `carries no HMAC though the log is keyed from line ${keyedFrom} (a line appended or rewritten without the audit key)`,
        );
    } else {
      if (typeof mac !== 'string' || !MAC_HEX.test(mac))
        return bad('HMAC is not 64 hex digits (the line was edited)');
      keyedFrom ??= i + 1;
      if (options.key !== undefined) {
        const want = Buffer.from(entryMac(options.key, hash), 'hex');
        if (!timingSafeEqual(want, Buffer.from(mac, 'hex')))
          return bad(
            'HMAC does not match (the line was forged or the key is not the one the log was written with)',
          );
      }
    }
    prevLine = line;
  }
  const head = await checkHead(triageDir, lines);
  if (!head.ok) return head;
  if (keyedFrom === undefined) return head;
  return { ...head, keyed: { from: keyedFrom, checked: options.key !== undefined } };
}

/**
 * `audit.head` records the last entry written, so removing lines from the end is detected. The head may
 * lag the log by exactly one entry (a crash between the append and the head update); it may never be ahead.
 */
type HeadCheck = { ok: true; entries: number } | Extract<VerifyResult, { ok: false }>;

async function checkHead(triageDir: string, lines: string[]): Promise<HeadCheck> {
  const headFile = path.join(triageDir, AUDIT_HEAD_FILE);
  let headText: string;
  try {
    headText = await readFile(headFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // The head is written after every append: only a crash right after the very first one leaves a log
    // without it. Otherwise it was deleted, and with it the proof that no lines were cut from the end.
    if (lines.length <= 1) return { ok: true, entries: lines.length };
    return {
      ok: false,
      entries: lines.length,
      line: lines.length + 1,
      problem: `${AUDIT_HEAD_FILE} is missing, so lines removed from the end cannot be ruled out (the log has ${lines.length} entries; ${AUDIT_HEAD_FILE} is written after every append)`,
    };
  }
  const bad = (problem: string): HeadCheck => ({
    ok: false,
    entries: lines.length,
    line: lines.length + 1,
    problem,
  });
  const head = parseAuditHead(headText) as { seq?: unknown; line?: unknown } | undefined;
  if (!head)
    return bad(
      `${AUDIT_HEAD_FILE} is not valid JSON (no intact slot), so truncation at the end cannot be ruled out`,
    );
  const lastSeq = lines.length - 1;
  const matches = (seq: number) => {
    const line = lines[seq];
    return head.seq === seq && line !== undefined && head.line === sha256(line);
  };
  if (matches(lastSeq)) return { ok: true, entries: lines.length };
  // A crash between a write and the head update leaves the head at the entry before that write: the
  // entries after it must then be exactly one write (the first says how many follow it).
  const h = typeof head.seq === 'number' ? head.seq : -1;
  if (h >= 0 && h < lastSeq && matches(h)) {
    const first = JSON.parse(lines[h + 1] as string) as { rest?: unknown };
    if ((typeof first.rest === 'number' ? first.rest : 0) === lastSeq - h - 1)
      return { ok: true, entries: lines.length };
  }
  if (head.seq === lastSeq && lastSeq >= 0) {
    return {
      ok: false,
      entries: lines.length,
      line: lines.length,
      problem: `the last line is not the entry ${AUDIT_HEAD_FILE} recorded as entry ${lastSeq} (its hash differs: the last line was replaced)`,
    };
  }
  return bad(
    `the log ends at entry ${lastSeq} but ${AUDIT_HEAD_FILE} records entry ${String(head.seq)} as the last ` +
      '(lines were removed from the end, or the last line was replaced)',
  );
}

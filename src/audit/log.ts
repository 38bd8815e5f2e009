import { createHash, randomBytes } from 'node:crypto';
import {
  appendFile,
  open,
  readFile,
  mkdir,
  rename,
  unlink,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Redactor } from '../log/redact.js';
import { writeFileAtomic } from '../util/fs.js';
import { pidAlive } from '../util/process.js';

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
  | 'finished'
  | 'interrupted'
  | 'adopted'
  | 'requeued'
  | 'released'
  | 'replayed';

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
  hash: string;
}

export const AUDIT_FILE = 'audit.jsonl';
const HEAD_FILE = 'audit.head';
const GENESIS = '0'.repeat(64);
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 10_000;
const LOCK_TAKEOVER_SETTLE_MS = 25;

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
}

/** Appends hash-chained events to `<dir>/audit.jsonl`, serialised within and across processes. */
export class AuditLog {
  private readonly chains = new Map<string, Promise<unknown>>();
  constructor(private readonly options: AuditLogOptions = {}) {}

  /** `triageDir` is the workspace's `.triage/` folder. */
  append(triageDir: string, event: AuditEvent): Promise<AuditEntry> {
    const previous = this.chains.get(triageDir) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.appendLocked(triageDir, event));
    this.chains.set(triageDir, next);
    // Cleanup must not re-raise: the caller handles `next`'s rejection; `finally` would leave an unhandled copy.
    const forget = () => {
      if (this.chains.get(triageDir) === next) this.chains.delete(triageDir);
    };
    next.then(forget, forget);
    return next;
  }

  private async appendLocked(triageDir: string, event: AuditEvent): Promise<AuditEntry> {
    await mkdir(triageDir, { recursive: true });
    const release = await acquireFileLock(path.join(triageDir, 'audit.lock'));
    try {
      const file = path.join(triageDir, AUDIT_FILE);
      const { last, repaired } = await lastLineRepairingTornTail(file);
      const prevEntry = last ? parseEntry(last, file) : undefined;
      const redacted = this.options.redactor ? this.options.redactor.redactValue(event) : event;
      // Hash exactly what a reader will parse back (Dates become strings, undefined disappears).
      const clean = JSON.parse(JSON.stringify(redacted)) as AuditEvent;
      const base = {
        ...clean,
        ...(repaired ? { repaired } : {}),
        seq: prevEntry ? prevEntry.seq + 1 : 0,
        ts: (this.options.now?.() ?? new Date()).toISOString(),
        prev: last ? sha256(last) : GENESIS,
      };
      const entry: AuditEntry = { ...base, hash: entryHash(base) };
      const line = JSON.stringify(entry);
      const handle = await open(file, 'a', 0o644);
      try {
        await handle.write(`${line}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await writeFileAtomic(
        path.join(triageDir, HEAD_FILE),
        JSON.stringify({ seq: entry.seq, line: sha256(line) }),
      );
      return entry;
    } finally {
      await release();
    }
  }
}

function parseEntry(line: string, file: string): AuditEntry {
  try {
    return JSON.parse(line) as AuditEntry;
  } catch {
    throw new Error(
      `the last line of ${file} is not valid JSON, so no event can be chained after it; run \`triage-runner audit verify\` on the workspace and restore the log`,
    );
  }
}

/**
 * The last complete line. A final line without its newline can only come from a write cut short by a
 * crash (appends are acknowledged after the newline is synced): when it does not parse, it is cut off and
 * the next entry records how many bytes were dropped; when it does parse, the missing newline is added.
 */
async function lastLineRepairingTornTail(file: string): Promise<{ last?: string; repaired?: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  if (text.length === 0) return {};
  const cut = text.lastIndexOf('\n');
  if (cut === text.length - 1) return { last: text.slice(text.lastIndexOf('\n', cut - 1) + 1, cut) };
  const tail = text.slice(cut + 1);
  let tailParses = true;
  try {
    JSON.parse(tail);
  } catch {
    tailParses = false;
  }
  if (tailParses) {
    await appendFile(file, '\n');
    return { last: tail };
  }
  await truncate(file, Buffer.byteLength(text.slice(0, cut + 1)));
  const before = text.slice(0, cut + 1);
  const prev = before.slice(before.lastIndexOf('\n', before.length - 2) + 1, -1);
  return {
    ...(prev ? { last: prev } : {}),
    repaired: `dropped ${Buffer.byteLength(tail)} bytes of an incomplete last line (a write cut short)`,
  };
}

/**
 * A lock file created exclusively and holding `host:pid:token`. It is taken over when its holder is a
 * dead process on this host (a daemon SIGKILLed mid-append) or when it is older than LOCK_STALE_MS
 * (a holder on another host). Takeover renames our own lock over it and re-reads after a pause, so
 * of two processes racing for the same stale lock only the last rename wins and the other backs off.
 */
async function acquireFileLock(lockPath: string): Promise<() => Promise<void>> {
  const token = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const release = async () => {
    const current = await readFile(lockPath, 'utf8').catch(() => undefined);
    if (current === token) await unlink(lockPath).catch(() => undefined);
  };
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(token);
      } finally {
        await handle.close();
      }
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [holder, age] = await Promise.all([
      readFile(lockPath, 'utf8').catch(() => ''),
      stat(lockPath).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      ),
    ]);
    const [host, pid] = holder.split(':');
    const holderDead = host === hostname() && Number(pid) > 0 && !pidAlive(Number(pid));
    if (holderDead || age > LOCK_STALE_MS) {
      const mine = `${lockPath}.${randomBytes(6).toString('hex')}`;
      await writeFile(mine, token);
      await rename(mine, lockPath);
      await new Promise((r) => setTimeout(r, LOCK_TAKEOVER_SETTLE_MS));
      if ((await readFile(lockPath, 'utf8').catch(() => '')) === token) return release;
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(
        `audit log lock ${lockPath} held by ${holder || 'an unknown process'} for over ${LOCK_WAIT_MS} ms; remove it if no daemon is running`,
      );
    await new Promise((r) => setTimeout(r, delay));
  }
}

export type VerifyResult =
  { ok: true; entries: number } | { ok: false; entries: number; line: number; problem: string };

/** Checks the chain: line numbers in the result are 1-based, as an editor shows them. */
export async function verifyAuditLog(triageDir: string): Promise<VerifyResult> {
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
  if (lines.at(-1) === '') lines.pop();
  let prevLine: string | undefined;
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
      return bad('not valid JSON');
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
    const { hash, ...rest } = entry;
    if (entryHash(rest) !== hash) return bad('content does not match its hash (the line was edited)');
    prevLine = line;
  }
  return checkHead(triageDir, lines);
}

/**
 * `audit.head` records the last entry written, so removing lines from the end is detected. The head may
 * lag the log by exactly one entry (a crash between the append and the head update); it may never be ahead.
 */
async function checkHead(triageDir: string, lines: string[]): Promise<VerifyResult> {
  const headFile = path.join(triageDir, HEAD_FILE);
  let headText: string;
  try {
    headText = await readFile(headFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // Logs written before the head file existed, or a log copied without it: nothing more to check.
    return { ok: true, entries: lines.length };
  }
  const bad = (problem: string): VerifyResult => ({
    ok: false,
    entries: lines.length,
    line: lines.length + 1,
    problem,
  });
  let head: { seq?: unknown; line?: unknown };
  try {
    head = JSON.parse(headText) as { seq?: unknown; line?: unknown };
  } catch {
    return bad(`${HEAD_FILE} is not valid JSON, so truncation at the end cannot be ruled out`);
  }
  const lastSeq = lines.length - 1;
  const matches = (seq: number) => {
    const line = lines[seq];
    return head.seq === seq && line !== undefined && head.line === sha256(line);
  };
  if (matches(lastSeq) || (lastSeq >= 1 && matches(lastSeq - 1))) return { ok: true, entries: lines.length };
  return bad(
    `the log ends at entry ${lastSeq} but ${HEAD_FILE} records entry ${String(head.seq)} as the last ` +
      '(lines were removed from the end, or the last line was replaced)',
  );
}

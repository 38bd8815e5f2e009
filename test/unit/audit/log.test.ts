import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFile,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AUDIT_LINGER_MS,
  AuditLog,
  parseAuditHead,
  stableStringify,
  verifyAuditLog,
} from '../../../src/audit/log.js';
import { AUDIT_FILE } from '../../../src/workspace/layout.js';
import { Redactor } from '../../../src/log/redact.js';
import { waitLock, type WaitLockOptions } from '../../../src/util/file-lock.js';
import { processStartTime } from '../../../src/util/process.js';

const run = promisify(execFile);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let dir: string;
const logFile = () => path.join(dir, AUDIT_FILE);
const readLines = async () => (await readFile(logFile(), 'utf8')).split('\n').filter((l) => l !== '');
const writeLines = (lines: string[]) => writeFile(logFile(), lines.map((l) => `${l}\n`).join(''));

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'audit-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeEvents(n: number): Promise<string[]> {
  let t = Date.parse('2026-11-22T00:00:00Z');
  const log = new AuditLog({ now: () => new Date((t += 1000)) });
  const types = [
    'detected',
    'validated',
    'claimed',
    'queued',
    'triage_started',
    'triage_finished',
    'launched',
  ];
  for (let i = 0; i < n; i++)
    await log.append(dir, { type: types[i % types.length] as 'detected', incidentId: 'inc-1', i });
  return readLines();
}

describe('verifyAuditLog', () => {
  it('accepts an untouched log and counts its entries', async () => {
    await writeEvents(5);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 5 });
  });

  it('detects an edited field and names the edited line', async () => {
    const lines = await writeEvents(5);
    lines[2] = (lines[2] as string).replace('"incidentId":"inc-1"', '"incidentId":"inc-2"');
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 3,
      problem: expect.stringContaining('edited'),
    });
  });

  it('detects an edited line whose own hash was recomputed, at the line after it', async () => {
    const lines = await writeEvents(4);
    // Re-append a forged copy of entry 1 into a fresh log to get a self-consistent edited line.
    const forged = JSON.parse(lines[1] as string) as Record<string, unknown>;
    const other = await mkdtemp(path.join(tmpdir(), 'audit-forge-'));
    try {
      const log = new AuditLog();
      await log.append(other, { type: 'detected' });
      const { seq: _s, ts: _t, prev: _p, hash: _h, ...event } = forged;
      await log.append(other, { ...(event as { type: 'detected' }), incidentId: 'forged' });
      lines[1] = (await readFile(path.join(other, AUDIT_FILE), 'utf8')).split('\n')[1] as string;
    } finally {
      await rm(other, { recursive: true, force: true });
    }
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, line: 2 });
  });

  it('detects a deleted middle line at the line that followed it', async () => {
    const lines = await writeEvents(5);
    lines.splice(2, 1);
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 3,
      problem: expect.stringContaining('deleted'),
    });
  });

  it('detects a deleted last line through audit.head', async () => {
    const lines = await writeEvents(5);
    await writeLines(lines.slice(0, 4));
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 5,
      problem: expect.stringContaining('records entry 4 as the last'),
    });
  });

  it('detects a truncated (emptied) log file', async () => {
    await writeEvents(3);
    await writeFile(logFile(), '');
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, line: 1 });
  });

  it('detects a file cut in the middle of a line as invalid JSON on that line', async () => {
    await writeEvents(3);
    const text = await readFile(logFile(), 'utf8');
    await writeFile(logFile(), text.slice(0, text.length - 20));
    expect(await verifyAuditLog(dir)).toEqual({
      ok: false,
      entries: 3,
      line: 3,
      problem: expect.stringMatching(/^not valid JSON, and the file does not end with a newline/),
    });
  });

  it('detects a replaced last line whose hash and chain link were recomputed, naming that line', async () => {
    const lines = await writeEvents(4);
    const original = JSON.parse(lines[3] as string) as Record<string, unknown>;
    const { hash: _h, ...rest }: Record<string, unknown> = { ...original, incidentId: 'forged' };
    const forged = { ...rest, hash: sha256(stableStringify(rest)) };
    lines[3] = JSON.stringify(forged);
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 4,
      problem: expect.stringContaining('the last line was replaced'),
    });
  });

  it('detects an inserted line', async () => {
    const lines = await writeEvents(4);
    lines.splice(2, 0, lines[1] as string);
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, line: 3 });
  });

  it('detects two reordered lines at the first moved line', async () => {
    const lines = await writeEvents(5);
    [lines[1], lines[3]] = [lines[3] as string, lines[1] as string];
    await writeLines(lines);
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 2,
      problem: expect.stringContaining('moved'),
    });
  });

  it('reports a line that is not JSON, and one that is JSON but not an object', async () => {
    const lines = await writeEvents(3);
    await writeLines([lines[0] as string, '{not json', lines[2] as string]);
    expect(await verifyAuditLog(dir)).toEqual({ ok: false, entries: 3, line: 2, problem: 'not valid JSON' });
    await writeLines([lines[0] as string, 'null']);
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 2,
      problem: expect.stringContaining('object'),
    });
  });

  it('detects an audit.head that does not match the last line', async () => {
    const lines = await writeEvents(3);
    await writeFile(path.join(dir, 'audit.head'), JSON.stringify({ seq: 2, line: '0'.repeat(64) }));
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 3,
      problem: expect.stringContaining('replaced'),
    });
    await writeFile(path.join(dir, 'audit.head'), JSON.stringify({ seq: 7, line: '0'.repeat(64) }));
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, line: 4 });
    await writeFile(path.join(dir, 'audit.head'), '{oops');
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not valid JSON'),
    });
    expect(lines).toHaveLength(3);
  });

  it('detects a deleted audit.head (which would hide lines cut from the end), after the first entry', async () => {
    await writeEvents(1);
    await rm(path.join(dir, 'audit.head'));
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 1 });
    await writeEvents(3);
    await rm(path.join(dir, 'audit.head'));
    await writeLines((await readLines()).slice(0, 3));
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 4,
      problem: expect.stringContaining('audit.head is missing'),
    });
  });

  it('accepts a head one entry behind the log (a crash between the append and the head update)', async () => {
    await writeEvents(3);
    const head = await readFile(path.join(dir, 'audit.head'), 'utf8');
    await new AuditLog().append(dir, { type: 'finished' });
    await writeFile(path.join(dir, 'audit.head'), head);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 4 });
  });

  it('moves audit.head in place, in two slots: no new file per append, and a torn slot falls back one write', async () => {
    const headFile = path.join(dir, 'audit.head');
    await writeEvents(1);
    const first = await stat(headFile);
    const log = new AuditLog();
    await log.append(dir, { type: 'queued' });
    await log.append(dir, { type: 'claimed' });
    // The same file (inode) both times: written in place, not replaced through a temp file and a rename.
    expect((await stat(headFile)).ino).toBe(first.ino);
    const lines = await readLines();
    const text = await readFile(headFile, 'utf8');
    expect(text).toHaveLength(1024);
    expect(parseAuditHead(text)).toEqual({ seq: 2, line: sha256(lines[2] as string) });
    // The slot holding entry 2 cut short by a crash: the other slot (entry 1) is one write behind, accepted.
    const newer = text.slice(0, 512).includes('"seq":2') ? 0 : 1;
    const torn =
      newer === 0
        ? `{"seq":2,"li${' '.repeat(499)}\n${text.slice(512)}`
        : `${text.slice(0, 512)}{"seq":2,"li`;
    await writeFile(headFile, torn.padEnd(1024, '\0'));
    expect(parseAuditHead(await readFile(headFile, 'utf8'))).toEqual({
      seq: 1,
      line: sha256(lines[1] as string),
    });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
    // A slot whose checksum does not match its fields is not trusted either.
    await writeFile(headFile, text.replace(/"seq":2/, '"seq":9'));
    expect(parseAuditHead(await readFile(headFile, 'utf8'))).toEqual({
      seq: 1,
      line: sha256(lines[1] as string),
    });
  });

  it('reads a single-object audit.head written before the slots, and replaces it with slots on the next append', async () => {
    const lines = await writeEvents(2);
    const headFile = path.join(dir, 'audit.head');
    await writeFile(headFile, JSON.stringify({ seq: 1, line: sha256(lines[1] as string) }));
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 2 });
    await new AuditLog().append(dir, { type: 'finished' });
    const text = await readFile(headFile, 'utf8');
    expect(text).toHaveLength(1024);
    expect(parseAuditHead(text)).toEqual({ seq: 2, line: sha256((await readLines())[2] as string) });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
  });

  it('reports a missing log file at line 0', async () => {
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      line: 0,
      problem: expect.stringContaining('does not exist'),
    });
  });
});

describe('AuditLog.append', () => {
  it('keeps the chain valid for events holding Dates and undefined fields', async () => {
    const log = new AuditLog();
    await log.append(dir, {
      type: 'launched',
      at: new Date('2026-01-01T00:00:00Z'),
      gone: undefined,
      list: [undefined],
    });
    await log.append(dir, { type: 'finished' });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 2 });
    const first = JSON.parse((await readLines())[0] as string) as Record<string, unknown>;
    expect(first.at).toBe('2026-01-01T00:00:00.000Z');
  });

  it('makes its own folder in a workspace, but never the workspace itself once it was removed', async () => {
    const log = new AuditLog();
    const ws = path.join(dir, 'ws');
    await mkdir(ws);
    await log.append(path.join(ws, '.triage'), { type: 'detected' });
    expect(await verifyAuditLog(path.join(ws, '.triage'))).toEqual({ ok: true, entries: 1 });
    await rm(ws, { recursive: true });
    await expect(log.append(path.join(ws, '.triage'), { type: 'released' })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it('redacts secret values before they are written', async () => {
    const log = new AuditLog({ redactor: new Redactor({ ANTHROPIC_API_KEY: 'plain-secret-value-123' }) });
    await log.append(dir, { type: 'launched', env: 'key=plain-secret-value-123' });
    const text = await readFile(logFile(), 'utf8');
    expect(text).not.toContain('plain-secret-value-123');
    expect(text).toContain('[REDACTED:ANTHROPIC_API_KEY]');
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 1 });
  });

  it('serializes concurrent appends within one process into one chain', async () => {
    const log = new AuditLog();
    await Promise.all(Array.from({ length: 30 }, (_, i) => log.append(dir, { type: 'queued', i })));
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 30 });
  });

  it('holds a lingering event back until the next event without linger, and writes both in one write, in order', async () => {
    const log = new AuditLog();
    await log.append(dir, { type: 'detected' });
    let stageWritten = false;
    const stage = log.append(dir, { type: 'preparing' }, { linger: true }).then((e) => {
      stageWritten = true;
      return e;
    });
    // Nothing was written for it yet: the log still ends at `detected`.
    await new Promise((r) => setImmediate(r));
    expect(stageWritten).toBe(false);
    expect(await readLines()).toHaveLength(1);
    const finished = await log.append(dir, { type: 'finished' });
    const held = await stage;
    expect([held.seq, held.type, held.rest, finished.seq, finished.type]).toEqual([
      1,
      'preparing',
      1,
      2,
      'finished',
    ]);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
  });

  it('writes a lingering event on its own after AUDIT_LINGER_MS, and at once on flush()', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const log = new AuditLog();
      const held = log.append(dir, { type: 'preparing' }, { linger: true });
      await vi.advanceTimersByTimeAsync(AUDIT_LINGER_MS - 1);
      expect(await readFile(logFile(), 'utf8').catch(() => '')).toBe('');
      await vi.advanceTimersByTimeAsync(1);
      expect((await held).type).toBe('preparing');
      const again = log.append(dir, { type: 'skills_resolved' }, { linger: true });
      await log.flush();
      expect((await again).seq).toBe(1);
      expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 2 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the events appended in one tick together, in order, and resolves each once written', async () => {
    const log = new AuditLog();
    await log.append(dir, { type: 'detected' });
    const appends = ['validated', 'queued', 'claimed'].map((type) =>
      log.append(dir, { type: type as 'queued' }),
    );
    const entries = await Promise.all(appends);
    expect(entries.map((e) => [e.seq, e.type, e.rest])).toEqual([
      [1, 'validated', 2],
      [2, 'queued', 1],
      [3, 'claimed', undefined],
    ]);
    // One write: audit.head moved once, to its last entry, and the chain stays valid.
    const lines = await readLines();
    expect(parseAuditHead(await readFile(path.join(dir, 'audit.head'), 'utf8'))).toEqual({
      seq: 3,
      line: sha256(lines[3] as string),
    });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 4 });
  });

  it('drops an incomplete last line left by a crash and records the repair in the next entry', async () => {
    await writeEvents(2);
    await writeFile(logFile(), `${await readFile(logFile(), 'utf8')}{"type":"fini`);
    await new AuditLog().append(dir, { type: 'finished' });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
    const last = JSON.parse((await readLines())[2] as string) as Record<string, unknown>;
    expect(last.repaired).toContain('dropped 13 bytes');
  });

  it('appends after a 600 MB log by reading only its end (memory stays bounded)', async () => {
    // A sparse file: 600 MB of zero bytes (no disk used), then two real entries. Reading it whole into a
    // string would throw (V8's string limit is ~512 MB); the append must only look at the last line.
    const first = await mkdtemp(path.join(tmpdir(), 'audit-src-'));
    try {
      const log = new AuditLog();
      await log.append(first, { type: 'detected' });
      await truncate(logFile(), 0).catch(() => undefined);
      await writeFile(logFile(), '');
      await truncate(logFile(), 600 * 1024 * 1024 - 1);
      await appendFile(logFile(), `\n${(await readFile(path.join(first, AUDIT_FILE), 'utf8')).trim()}\n`);
      const entry = await log.append(dir, { type: 'validated' });
      expect(entry.seq).toBe(1);
      const handle = await open(logFile(), 'r');
      const tailBytes = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(tailBytes, 0, tailBytes.length, 600 * 1024 * 1024);
      await handle.close();
      const tail = tailBytes.subarray(0, bytesRead).toString('utf8');
      const [prev, next] = tail.split('\n');
      expect(JSON.parse(next as string)).toMatchObject({
        type: 'validated',
        seq: 1,
        prev: sha256(prev as string),
      });
    } finally {
      await rm(first, { recursive: true, force: true });
    }
  });

  it('repairs a torn last line that is longer than one read block', async () => {
    await writeEvents(2);
    const torn = `{"type":"finished","note":"${'x'.repeat(200_000)}`;
    await appendFile(logFile(), torn);
    const entry = await new AuditLog().append(dir, { type: 'finished' });
    expect(entry.repaired).toContain(`dropped ${torn.length} bytes`);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
  });

  it('refuses to chain after a last line that is not JSON, naming the file', async () => {
    await writeEvents(2);
    await writeFile(logFile(), `${await readFile(logFile(), 'utf8')}garbage\n`);
    await expect(new AuditLog().append(dir, { type: 'finished' })).rejects.toThrow(
      /last line of .*audit\.jsonl is not valid JSON/,
    );
  });

  it('keeps one valid chain when two processes append at the same time', async () => {
    const script = path.resolve('test/fixtures/audit/append-many.ts');
    const child = (writer: string) =>
      run(process.execPath, ['--import', 'tsx', script, dir, writer, '40'], { timeout: 50_000 });
    await Promise.all([child('a'), child('b')]);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 80 });
    const writers = (await readLines()).map((l) => (JSON.parse(l) as { writer: string }).writer);
    expect(writers.filter((w) => w === 'a')).toHaveLength(40);
    expect(writers.filter((w) => w === 'b')).toHaveLength(40);
  });
});

describe('audit log lock (the shared exclusive-file lock)', () => {
  const lockFile = () => path.join(dir, 'audit.lock');
  const holder = (pid: number | string, startTime: string | null = null) =>
    JSON.stringify({
      holder: `${hostname()}:${pid}:x`,
      pid: Number(pid),
      host: hostname(),
      startTime,
      acquiredAt: new Date().toISOString(),
    });
  const waitAudit = (options: Partial<WaitLockOptions> = {}) =>
    waitLock(lockFile(), { staleMs: 30_000, waitMs: 40_000, what: 'audit log', ...options });

  it('takes over a lock left by a dead process on this host (a daemon SIGKILLed mid-append)', async () => {
    const dead = await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(lockFile(), holder(dead.stdout));
    await new AuditLog().append(dir, { type: 'detected', incidentId: 'i-1' });
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 1 });
    await expect(readFile(lockFile(), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await readdir(dir)).filter((f) => f.startsWith('audit.lock'))).toEqual([]);
  });

  it('takes over a lock whose pid now belongs to another process (pid reused after a restart)', async () => {
    // Same host and a live pid (ours), but a start time that is not this process's: a previous
    // incarnation that died (a container restarted with the same hostname and pid).
    await writeFile(lockFile(), holder(process.pid, '1'));
    // With the clock stopped the lock never grows stale by age, and the wait never runs out: only the
    // takeover of the dead incarnation's lock lets the append through (else the test times out).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await new AuditLog().append(dir, { type: 'detected', incidentId: 'i-1' });
    } finally {
      vi.useRealTimers();
    }
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 1 });
  }, 15_000);

  it('lets only one of two processes that judged the same dead lock stale take it over', async () => {
    const dead = await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(lockFile(), holder(dead.stdout));
    const events: string[] = [];
    // B sees the dead holder first, then stalls (a loaded machine) before acting on it...
    let resumeB!: () => void;
    let bStalled!: () => void;
    const stalled = new Promise<void>((r) => (bStalled = r));
    const b = waitAudit({
      beforeTakeover: async () => {
        bStalled();
        await new Promise<void>((r) => (resumeB = r));
      },
    }).then((lock) => {
      events.push('B acquired');
      return lock;
    });
    await stalled;
    // ...meanwhile A takes the dead lock over and holds it.
    const lockA = await waitAudit();
    events.push('A acquired');
    resumeB();
    // reason: a window for B to (wrongly) replace A's lock before A lets go; B's loop has no marker.
    const early = await Promise.race([
      b.then(() => 'B acquired early'),
      new Promise((r) => setTimeout(r, 200)),
    ]);
    expect(early).toBeUndefined();
    events.push('A released');
    await lockA.release();
    await (await b).release();
    expect(events).toEqual(['A acquired', 'A released', 'B acquired']);
    expect((await readdir(dir)).filter((f) => f.startsWith('audit.lock'))).toEqual([]);
  });

  it('fails after its wait limit with the holder and the milliseconds in the message', async () => {
    await writeFile(lockFile(), holder(process.pid, processStartTime(process.pid)));
    await expect(waitAudit({ waitMs: 150 })).rejects.toThrow(
      new RegExp(`audit log lock .* is held by process ${process.pid} on ${hostname()} for over 150 ms`),
    );
    expect((await stat(lockFile())).isFile()).toBe(true);
  });

  it('waits for a lock held by a live process and appends once it is released', async () => {
    await writeFile(lockFile(), holder(process.pid, processStartTime(process.pid)));
    let done = false;
    const pending = new AuditLog()
      .append(dir, { type: 'detected', incidentId: 'i-1' })
      .then(() => (done = true));
    // reason: a live holder's lock keeps the append waiting; its polls leave no marker to await.
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    await rm(lockFile());
    await pending;
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 1 });
  });
});

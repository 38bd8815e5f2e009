import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_FILE, AuditLog, verifyAuditLog } from '../../../src/audit/log.js';
import { Redactor } from '../../../src/log/redact.js';

const run = promisify(execFile);
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
    expect(await verifyAuditLog(dir)).toEqual({ ok: false, entries: 3, line: 3, problem: 'not valid JSON' });
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
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, line: 4 });
    await writeFile(path.join(dir, 'audit.head'), '{oops');
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not valid JSON'),
    });
    expect(lines).toHaveLength(3);
  });

  it('accepts a head one entry behind the log (a crash between the append and the head update)', async () => {
    await writeEvents(3);
    const head = await readFile(path.join(dir, 'audit.head'), 'utf8');
    await new AuditLog().append(dir, { type: 'finished' });
    await writeFile(path.join(dir, 'audit.head'), head);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 4 });
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

  it('drops an incomplete last line left by a crash and records the repair in the next entry', async () => {
    await writeEvents(2);
    await writeFile(logFile(), `${await readFile(logFile(), 'utf8')}{"type":"fini`);
    await new AuditLog().append(dir, { type: 'finished' });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3 });
    const last = JSON.parse((await readLines())[2] as string) as Record<string, unknown>;
    expect(last.repaired).toContain('dropped 13 bytes');
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

describe('audit log lock', () => {
  const lockFile = () => path.join(dir, 'audit.lock');

  it('takes over a lock left by a dead process on this host (a daemon SIGKILLed mid-append)', async () => {
    const dead = await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(lockFile(), `${hostname()}:${dead.stdout}:left-behind`);
    await new AuditLog().append(dir, { type: 'detected', incidentId: 'i-1' });
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 1 });
    await expect(readFile(lockFile(), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('waits for a lock held by a live process and appends once it is released', async () => {
    await writeFile(lockFile(), `${hostname()}:${process.pid}:someone-else`);
    let done = false;
    const pending = new AuditLog()
      .append(dir, { type: 'detected', incidentId: 'i-1' })
      .then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    await rm(lockFile());
    await pending;
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 1 });
  });
});

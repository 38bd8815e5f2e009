import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';

let dir: string;
let out: string[];
let err: string[];
const io = (): CliIO => ({ stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd: dir });

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'audit-cli-'));
  out = [];
  err = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function workspaceWithLog(events: number): Promise<string> {
  const ws = path.join(dir, 'inc-1');
  await mkdir(ws); // the log makes its .triage folder, never the workspace itself
  const log = new AuditLog();
  for (let i = 0; i < events; i++) await log.append(path.join(ws, '.triage'), { type: 'detected', i });
  return ws;
}

describe('triage-runner audit verify', () => {
  it('exits 0 with a one-line summary for an intact unkeyed log, saying plainly that an unkeyed chain cannot detect an appended line', async () => {
    await workspaceWithLog(3);
    expect(await runCli(['audit', 'verify', 'inc-1'], io())).toBe(0);
    expect(out.join('')).toMatch(
      /audit\.jsonl: intact \(3 entries, UNKEYED hash chain verified; 0 run bundles, the report and state.json match what it recorded\)\n$/,
    );
    expect(err.join('')).toMatch(/the chain is unkeyed .*an unkeyed chain cannot detect an appended line/);
  });

  it('exits 1 naming the first bad line (1-based) when a line was deleted', async () => {
    const ws = await workspaceWithLog(4);
    const file = path.join(ws, '.triage', 'audit.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines.splice(1, 1);
    await writeFile(file, lines.join('\n'));
    expect(await runCli(['audit', 'verify', ws], io())).toBe(1);
    expect(err.join('')).toMatch(/audit\.jsonl:2: .*deleted/);
  });

  it('exits 2 for a folder without an audit log and for a path that is not a folder', async () => {
    await mkdir(path.join(dir, 'empty'));
    expect(await runCli(['audit', 'verify', 'empty'], io())).toBe(2);
    expect(err.join('')).toContain('audit.jsonl does not exist');
    expect(await runCli(['audit', 'verify', 'nope'], io())).toBe(2);
    expect(err.join('')).toContain('is not a folder');
  });

  it('exits 2 when the workspace argument is missing, and for `audit` without a subcommand', async () => {
    expect(await runCli(['audit', 'verify'], io())).toBe(2);
    expect(await runCli(['audit'], io())).toBe(2);
    expect(err.join('')).toContain('audit verify <workspace>');
    expect(await runCli(['audit', 'frob', 'x'], io())).toBe(2);
  });

  it.each([
    [
      'an edited line',
      (l: string[]) => void (l[2] = (l[2] as string).replace('"i":2', '"i":9')),
      3,
      /edited/,
    ],
    ['a deleted first line', (l: string[]) => void l.splice(0, 1), 1, /sequence number is 1, expected 0/],
    ['a deleted last line', (l: string[]) => void l.pop(), 5, /lines were removed from the end/],
    ['an inserted line', (l: string[]) => void l.splice(3, 0, l[1] as string), 4, /expected 3/],
    [
      'two reordered lines',
      (l: string[]) => void ([l[1], l[2]] = [l[2] as string, l[1] as string]),
      2,
      /moved/,
    ],
    ['a truncated (emptied) log', (l: string[]) => void l.splice(0), 1, /records entry 4 as the last/],
  ])('exits 1 naming the first bad line for %s', async (_kind, tamper, line, problem) => {
    const ws = await workspaceWithLog(5);
    const file = path.join(ws, '.triage', 'audit.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
    tamper(lines);
    await writeFile(file, lines.map((l) => `${l}\n`).join(''));
    expect(await runCli(['audit', 'verify', ws], io())).toBe(1);
    const message = err.join('');
    expect(message).toMatch(new RegExp(`audit\\.jsonl:${line}: `));
    expect(message).toMatch(problem);
  });
});

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  auditLogPath,
  dedupDir,
  feedbackPath,
  intakeDir,
  isPlainName,
  isRunId,
  leasePath,
  outboxDir,
  replayDir,
  runDirOf,
  runDirRelative,
  runsDir,
  sinkHistoryPath,
  statePath,
  triageDir,
  unsafeStateDir,
  workspaceOfRunDir,
} from '../../../src/workspace/layout.js';

const ws = '/srv/incidents/pod-crash';
const root = '/srv/incidents';

describe('the .triage/ layout', () => {
  it.each([
    ['triageDir', triageDir(ws), '/srv/incidents/pod-crash/.triage'],
    ['statePath', statePath(ws), '/srv/incidents/pod-crash/.triage/state.json'],
    ['leasePath', leasePath(ws), '/srv/incidents/pod-crash/.triage/lease'],
    ['auditLogPath', auditLogPath(ws), '/srv/incidents/pod-crash/.triage/audit.jsonl'],
    ['feedbackPath', feedbackPath(ws), '/srv/incidents/pod-crash/.triage/feedback.json'],
    ['outboxDir', outboxDir(ws), '/srv/incidents/pod-crash/.triage/outbox'],
    ['runsDir', runsDir(ws), '/srv/incidents/pod-crash/.triage/runs'],
    ['runDirOf', runDirOf(ws, 'r-1'), '/srv/incidents/pod-crash/.triage/runs/r-1'],
    ['runDirRelative', runDirRelative('r-1'), '.triage/runs/r-1'],
    ['replayDir', replayDir(ws), '/srv/incidents/pod-crash/.triage/replay'],
    ['dedupDir', dedupDir(root), '/srv/incidents/.triage/dedup'],
    ['intakeDir', intakeDir(root), '/srv/incidents/.triage/intake'],
    ['unsafeStateDir', unsafeStateDir(root), '/srv/incidents/.triage/unsafe'],
    ['sinkHistoryPath', sinkHistoryPath(root), '/srv/incidents/.triage/notify-sinks.json'],
  ])('%s keeps its file where the daemon has always kept it', (_name, got, want) => {
    expect(got).toBe(want);
  });

  it('recognises a run bundle folder and names its workspace, and nothing else', () => {
    expect(workspaceOfRunDir(runDirOf(ws, 'r-1'))).toBe(ws);
    expect(workspaceOfRunDir(ws)).toBeUndefined();
    expect(workspaceOfRunDir('/srv/x/runs/r-1')).toBeUndefined();
    expect(workspaceOfRunDir('/srv/x/.triage/outbox/r-1')).toBeUndefined();
  });

  it('is the only module under src/ that spells a .triage path in code', async () => {
    const src = path.resolve(import.meta.dirname, '../../../src');
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const offenders: string[] = [];
    for (const file of files) {
      // The folder's own name is held in shared/ for util's file modes; the layout hands it on.
      if (file === path.join('workspace', 'layout.ts') || file === path.join('shared', 'triage-dir.ts'))
        continue;
      const lines = (await readFile(path.join(src, file), 'utf8')).split('\n');
      // A string literal naming the folder or a path below it; comments and messages may mention it.
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        if (/['"]\.triage['"/]/.test(line) || /\bTRIAGE_DIR\b.*['"]runs['"]/.test(line))
          offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});

/** Every line of code under src/ (comments left out), with its file relative to src/. */
async function codeLines(): Promise<{ file: string; line: number; text: string }[]> {
  const src = path.resolve(import.meta.dirname, '../../../src');
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
  const out: { file: string; line: number; text: string }[] = [];
  for (const file of files)
    (await readFile(path.join(src, file), 'utf8')).split('\n').forEach((text, i) => {
      if (!/^\s*(\/\/|\*|\/\*)/.test(text)) out.push({ file, line: i + 1, text });
    });
  return out;
}

describe('the workspace has one owner (src/workspace/)', () => {
  it('names result.json, state.json and incident.json in one module', async () => {
    const named = (await codeLines()).filter((l) => /['"`](result|state|incident)\.json['"`]/.test(l.text));
    expect(named.map((l) => `${l.file}:${l.line}`)).toEqual([
      expect.stringMatching(/^workspace\/layout\.ts:/),
      expect.stringMatching(/^workspace\/layout\.ts:/),
      expect.stringMatching(/^workspace\/layout\.ts:/),
    ]);
  });

  it('is the only place that reads or parses them: elsewhere their paths are only looked at (stat, watch, messages)', async () => {
    const record = String.raw`\b(statePath|incidentPath|resultPath|INCIDENT_FILE|STATE_FILE|RUN_FILES\.result|unsafeStatePath)\b`;
    const reading = new RegExp(
      String.raw`(readFile|readFileSync|readOwnFile\w*|readRegularFileSync|readNoFollow|readBounded|createReadStream|open)\([^)]*${record}`,
    );
    const parsing =
      /\b(parseStateText|parseRunResult|parseRunManifest|runResultSchema|runManifestSchema|readStateText)\b/;
    const offenders = (await codeLines())
      .filter((l) => !l.file.startsWith(`workspace${path.sep}`))
      .filter((l) => reading.test(l.text) || parsing.test(l.text))
      .map((l) => `${l.file}:${l.line}: ${l.text.trim()}`);
    expect(offenders).toEqual([]);
  });
});

describe('names joined into paths (isPlainName, isRunId)', () => {
  it.each(['20261127T140000Z-a1b2c3', 'pod-crash_1.2', 'a', 'A9'])('accepts %j', (name) => {
    expect(isPlainName(name, 200)).toBe(true);
    expect(isRunId(name)).toBe(true);
  });

  it.each(['', '..', '.hidden', '-flag', '_x', 'a/b', 'a\\b', 'a b', 'ä', 'a\nb', 42, null, undefined])(
    'refuses %j',
    (name) => {
      expect(isPlainName(name, 200)).toBe(false);
      expect(isRunId(name)).toBe(false);
    },
  );

  it('holds each caller to its own length: 128 for a run id, as asked otherwise', () => {
    expect(isRunId('r'.repeat(128))).toBe(true);
    expect(isRunId('r'.repeat(129))).toBe(false);
    expect(isPlainName('w'.repeat(200), 200)).toBe(true);
    expect(isPlainName('w'.repeat(201), 200)).toBe(false);
  });
});

// Forges audit lines the way someone who can write a workspace but has no audit key would: a line with
// a valid seq, prev and hash, and audit.head recomputed to match (the attack a keyed chain detects).
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stableStringify } from '../../src/audit/log.js';

const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');

/** Appends `event` to the workspace's chain; `mac` is set as given (a guessed HMAC), else left out. Returns its 1-based line. */
export async function forgeLine(
  workspaceDir: string,
  event: Record<string, unknown>,
  mac?: string,
): Promise<number> {
  const file = path.join(workspaceDir, '.triage', 'audit.jsonl');
  const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
  const last = lines.at(-1) as string;
  const base = { ...event, seq: lines.length, ts: new Date().toISOString(), prev: sha256(last) };
  const line = JSON.stringify({ ...base, hash: sha256(stableStringify(base)), ...(mac ? { mac } : {}) });
  await writeFile(file, `${lines.join('\n')}\n${line}\n`);
  await writeFile(
    path.join(workspaceDir, '.triage', 'audit.head'),
    JSON.stringify({ seq: lines.length, line: sha256(line) }),
  );
  return lines.length + 1;
}

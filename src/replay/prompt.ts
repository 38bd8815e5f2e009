import path from 'node:path';
import { RUN_FILES } from '../workspace/layout.js';
import { readContextRecord, readPromptParts } from '../workspace/run-record.js';
import { promptDigest } from '../context/build.js';
import type { PromptParts } from '../context/types.js';

// The prompts compared: the one a run sent, its hash, and where two differ.

export interface PromptHash {
  sha256: string;
  file: string;
}

/** The hash replay compares: prepare's digest of both prompt parts (the `prompt sha256` row of prompt-sent.md). */
export const promptSha256 = (parts: PromptParts): string => promptDigest(parts);

/**
 * A run's prompt as sent (prompt.json) and its sha256 as recorded in context.json (taken before any
 * redaction, so it is the hash of what the agent really received), else the digest of the parts.
 */
export async function readSentPrompt(bundleDir: string): Promise<PromptHash & { parts: PromptParts }> {
  const file = path.join(bundleDir, RUN_FILES.promptParts);
  const parts = await readPromptParts(bundleDir);
  if (!parts.ok) throw new Error(parts.problem);
  const context = await readContextRecord(bundleDir);
  const recorded = context.ok ? context.value.promptSha256 : undefined;
  return { sha256: recorded ?? promptSha256(parts.value), file, parts: parts.value };
}

/** A run's id: its bundle's folder name (`.triage/runs/<run id>`). */
export const runIdOfBundle = (bundleDir: string): string => path.basename(bundleDir);

/**
 * What a replay changes by design, original → replay, longest first: its run folder and workspace on
 * the host (the process engine gives the agent host paths), and its run id (a replay has its own, which
 * a container's run folder path and the run's notes name).
 */
export function replayMoves(
  original: { runDir: string; workspaceDir: string },
  replayed: { runDir: string; workspaceDir: string; runId: string },
): [string, string][] {
  return [
    [original.runDir, replayed.runDir],
    [original.workspaceDir, replayed.workspaceDir],
    [runIdOfBundle(original.runDir), replayed.runId],
  ];
}

/** The prompt with what `moves` names of the original replaced by the replay's (in order). */
export function relocate(parts: PromptParts, moves: [string, string][]): PromptParts {
  const apply = (text: string) => moves.reduce((t, [from, to]) => t.split(from).join(to), text);
  return { system: apply(parts.system), user: apply(parts.user) };
}

/** Characters of each line shown, and of the common start kept before where they part. */
const EXCERPT = 80;
const LEAD = 20;

/**
 * Names the first differing line of two prompts and shows both from a little before where they part,
 * e.g. `user part, line 12: "…home-2026…" vs "…home-2027…"` (a long line differing past its start would
 * otherwise print as two identical excerpts).
 */
export function firstDifference(a: PromptParts, b: PromptParts): string | undefined {
  for (const part of ['system', 'user'] as const) {
    if (a[part] === b[part]) continue;
    const la = a[part].split('\n');
    const lb = b[part].split('\n');
    let i = 0;
    while (i < la.length && i < lb.length && la[i] === lb[i]) i++;
    const [x, y] = [la[i], lb[i]];
    let col = 0;
    if (x !== undefined && y !== undefined) while (col < x.length && x[col] === y[col]) col++;
    const from = col > EXCERPT - LEAD ? col - LEAD : 0;
    const excerpt = (line: string | undefined) =>
      line === undefined ? '<end>' : `${from > 0 ? '…' : ''}${line.slice(from, from + EXCERPT)}`;
    return `${part} part, line ${i + 1}: ${JSON.stringify(excerpt(x))} vs ${JSON.stringify(excerpt(y))}`;
  }
  return undefined;
}

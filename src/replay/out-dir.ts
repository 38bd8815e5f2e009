import { copyFile, mkdir, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { copyIncidentFiles } from '../workspace/incident.js';
import { replayDir, replayTriageInputDir } from '../workspace/layout.js';
import { savedTriageFiles } from '../context/triage-products.js';
import { compactStamp } from '../util/time.js';
import { type ReplaySource, ReplayUsageError } from './source.js';
import { type ReplayOptions } from './options.js';

// Where a replay goes: a new workspace folder beside (or instead of) the source, and the inputs copied in.

const inside = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Real path of `p`, or of its nearest existing ancestor joined with the rest (for folders not yet created). */
async function realish(p: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** Picks and checks the output folder: never the original's tree, never an existing non-empty folder. */
export async function chooseOutDir(
  source: ReplaySource,
  options: ReplayOptions,
  now: number,
): Promise<string> {
  const out = options.out
    ? path.resolve(options.cwd, options.out)
    : path.join(options.cwd, 'replays', `${path.basename(source.workspaceDir)}-${compactStamp(now)}`);
  const real = await realish(out);
  const originals = [source.workspaceDir, source.input];
  for (const original of originals) {
    const realOriginal = await realish(original);
    if (inside(real, realOriginal) || inside(realOriginal, real)) {
      throw new ReplayUsageError(
        `--out ${out} overlaps the original ${original}; a replay never writes into the original: choose a folder outside it`,
      );
    }
  }
  for (const root of options.forbiddenRoots ?? []) {
    if (inside(real, await realish(root))) {
      throw new ReplayUsageError(
        `--out ${out} is inside the workspaces root ${root}, where a running daemon would pick the replay up as a new incident: choose a folder outside it`,
      );
    }
  }
  const entries = await readdir(out).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    if (err.code === 'ENOTDIR')
      throw new ReplayUsageError(`--out ${out} is a file; give a new or empty folder`);
    throw err;
  });
  if (entries.length > 0)
    throw new ReplayUsageError(`--out ${out} already exists and is not empty; give a new or empty folder`);
  return out;
}

/**
 * Copies the incident (and permissions) byte for byte into the new workspace, plus the saved triage
 * output with the products the script saved beside it (triage-report.md, evidence/…), which the reused
 * output names: `<out>/.triage/replay/triage-input/`.
 */
export async function copyInputs(source: ReplaySource, outDir: string): Promise<string | undefined> {
  await mkdir(replayDir(outDir), { recursive: true });
  await copyIncidentFiles(source.workspaceDir, outDir);
  if (!source.savedTriageLog) return undefined;
  const saved = path.dirname(source.savedTriageLog);
  const target = replayTriageInputDir(outDir);
  const log = path.basename(source.savedTriageLog);
  await mkdir(target, { recursive: true });
  await copyFile(source.savedTriageLog, path.join(target, log));
  for (const f of await savedTriageFiles(saved, log)) {
    await mkdir(path.dirname(path.join(target, f.rel)), { recursive: true });
    await copyFile(path.join(saved, f.rel), path.join(target, f.rel));
  }
  return path.join(target, log);
}

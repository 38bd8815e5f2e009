import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SkillsSourceSnapshot } from '../types.js';
import type {
  IndexSkillsOptions,
  SkillConflict,
  SkillEntry,
  SkillProblem,
  SkillsIndex,
} from './skill-types.js';
import { compare } from './markup.js';
import { inside, readSkill, SKILL_FILE } from './skill-file.js';

export { SKILL_FILE } from './skill-file.js';

export type * from './skill-types.js';

const SKIP_DIRS = new Set(['node_modules', '.git']);
const READ_CONCURRENCY = 32;

/**
 * Finds every skill in every source of a snapshot and validates it leniently: a bad name warns and
 * keeps the skill; a missing description, an oversize SKILL.md, a YAML error or a symlink that leaves
 * the source skips it. On a name conflict (two skills laid out in one folder, `dirName`) `project`
 * sources win over `user` ones, then config order; the run lays out the winners only.
 */
export async function indexSkills(opts: IndexSkillsOptions): Promise<SkillsIndex> {
  const problems: SkillProblem[] = [];
  const found: (SkillEntry & { order: number })[] = [];
  for (const [order, source] of opts.snapshot.sources.entries()) {
    const entries = await scanSource(source, opts, problems);
    for (const e of entries) found.push({ ...e, order });
  }
  for (const p of problems) {
    opts.log.warn({ source: p.source, file: p.file, line: p.line, action: p.action }, `skill: ${p.message}`);
  }

  const scopeRank = (s: SkillEntry) => (s.scope === 'project' ? 0 : 1);
  found.sort((a, b) => scopeRank(a) - scopeRank(b) || a.order - b.order || compare(a.relDir, b.relDir));
  const byName = new Map<string, SkillEntry>();
  const conflicts: SkillConflict[] = [];
  for (const { order: _order, ...skill } of found) {
    const winner = byName.get(skill.dirName);
    if (!winner) {
      byName.set(skill.dirName, skill);
      continue;
    }
    const conflict = { name: skill.name, winner: label(winner), loser: label(skill) };
    conflicts.push(conflict);
    opts.log.warn(
      conflict,
      'skill name conflict: the higher-precedence source wins (project over user, then config order)',
    );
  }
  const skills = [...byName.values()].sort(
    (a, b) => compare(a.name, b.name) || compare(a.bootPath, b.bootPath),
  );
  return { skills, problems, conflicts };
}

function label(s: SkillEntry): string {
  return `${s.bootPath} (${s.scope})`;
}

async function scanSource(
  source: SkillsSourceSnapshot,
  opts: IndexSkillsOptions,
  problems: SkillProblem[],
): Promise<SkillEntry[]> {
  let root: string;
  try {
    root = await realpath(source.dir);
  } catch (err) {
    problems.push({
      source: source.name,
      file: source.dir,
      action: 'skipped',
      message: `source folder cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); its skills are not indexed`,
    });
    return [];
  }
  const dirs = await findSkillDirs(source, root, opts.maxDepth ?? 4, problems);
  return readSkills(source, root, dirs, opts, problems);
}

/** Skill folders (those holding SKILL.md) under `root`, to `maxDepth`, in folder order. */
async function findSkillDirs(
  source: SkillsSourceSnapshot,
  root: string,
  maxDepth: number,
  problems: SkillProblem[],
): Promise<{ dir: string; rel: string }[]> {
  // Skill folders by real path: one reachable both directly and through an in-source symlink is
  // indexed once, under the path without symlinks (then the shorter, then the first in order).
  const found = new Map<string, { dir: string; rel: string; viaLink: boolean }>();
  const better = (a: { rel: string; viaLink: boolean }, b: { rel: string; viaLink: boolean }) =>
    a.viaLink !== b.viaLink
      ? !a.viaLink
      : a.rel.length !== b.rel.length
        ? a.rel.length < b.rel.length
        : a.rel < b.rel;

  const walk = async (dir: string, rel: string, depth: number, ancestors: Set<string>, viaLink: boolean) => {
    const real = await realpath(dir).catch(() => undefined);
    if (!real || ancestors.has(real)) return; // a symlink cycle
    const dirents = (await readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) =>
      compare(a.name, b.name),
    );
    if (dirents.some((d) => d.name === SKILL_FILE)) {
      const seen = found.get(real);
      if (!seen || better({ rel, viaLink }, seen)) found.set(real, { dir, rel, viaLink });
      return; // a skill's own folders (scripts/, references/) hold no further skills
    }
    if (depth >= maxDepth) return;
    const inner = new Set(ancestors).add(real);
    for (const d of dirents) {
      const name = d.name;
      if (name.startsWith('.') || SKIP_DIRS.has(name)) continue;
      const child = path.join(dir, name);
      const childRel = rel ? `${rel}/${name}` : name;
      if (d.isSymbolicLink()) {
        const target = await realpath(child).catch(() => undefined);
        const targetInfo = target ? await stat(target).catch(() => undefined) : undefined;
        if (!target || !targetInfo?.isDirectory()) continue;
        if (!inside(root, target)) {
          problems.push({
            source: source.name,
            file: child,
            action: 'skipped',
            message: `symlink ${childRel} points outside the source (${target}); not followed`,
          });
          continue;
        }
        await walk(child, childRel, depth + 1, inner, true);
      } else if (d.isDirectory()) {
        await walk(child, childRel, depth + 1, inner, viaLink);
      }
    }
  };
  await walk(root, '', 0, new Set(), false);
  return [...found.values()].sort((a, b) => compare(a.rel, b.rel));
}

/** Reads each skill folder's SKILL.md in parallel (bounded); results and problems in folder order. */
async function readSkills(
  source: SkillsSourceSnapshot,
  root: string,
  dirs: readonly { dir: string; rel: string }[],
  opts: IndexSkillsOptions,
  problems: SkillProblem[],
): Promise<SkillEntry[]> {
  const results: { entry?: SkillEntry; problems: SkillProblem[] }[] = [];
  for (let i = 0; i < dirs.length; i += READ_CONCURRENCY) {
    const batch = dirs.slice(i, i + READ_CONCURRENCY).map(async ({ dir, rel }) => {
      const own: SkillProblem[] = [];
      // Whatever goes wrong with one SKILL.md (unreadable, removed meanwhile, hostile YAML) skips that skill only.
      const entry = await readSkill(source, root, dir, rel, opts, own).catch((err: unknown) => {
        own.push({
          source: source.name,
          file: path.join(dir, SKILL_FILE),
          action: 'skipped',
          message: `SKILL.md cannot be read: ${err instanceof Error ? err.message : String(err)}`,
        });
        return undefined;
      });
      return { ...(entry ? { entry } : {}), problems: own };
    });
    results.push(...(await Promise.all(batch)));
  }
  for (const r of results) problems.push(...r.problems);
  return results.flatMap((r) => (r.entry ? [r.entry] : []));
}

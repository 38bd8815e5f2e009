import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SkillsSourceSnapshot } from '../types.js';
import { oneLine, parseFrontmatter } from './frontmatter.js';
import type { IndexSkillsOptions, SkillEntry, SkillProblem } from './skill-types.js';

// Reading and validating one SKILL.md (Agent Skills format: name 1–64 lowercase letters, digits and
// hyphens equal to the folder name; description 1–1,024 characters).

export const SKILL_FILE = 'SKILL.md';
const NAME_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/** Reads one skill folder's SKILL.md; problems are appended, and undefined means the skill is skipped. */
export async function readSkill(
  source: SkillsSourceSnapshot,
  root: string,
  dir: string,
  relDir: string,
  opts: IndexSkillsOptions,
  problems: SkillProblem[],
): Promise<SkillEntry | undefined> {
  const file = path.join(dir, SKILL_FILE);
  const problem = (action: SkillProblem['action'], message: string, line?: number) =>
    problems.push({ source: source.name, file, action, message, ...(line === undefined ? {} : { line }) });

  const target = await realpath(file).catch(() => undefined);
  if (!target) return void problem('skipped', 'SKILL.md cannot be resolved (dangling symlink?)');
  const hostDir = await realpath(dir);
  if (!inside(root, target)) {
    return void problem('skipped', `SKILL.md is a symlink to ${target}, outside the source; not read`);
  }
  const info = await stat(target);
  if (!info.isFile()) return void problem('skipped', 'SKILL.md is not a regular file');
  if (info.size > opts.maxSkillFileBytes) {
    return void problem(
      'skipped',
      `SKILL.md is ${info.size} bytes, over skills.max_skill_file_bytes (${opts.maxSkillFileBytes}); raise the limit or shorten the file`,
    );
  }
  const fm = parseFrontmatter(await readFile(target, 'utf8'));
  if (!fm.ok) {
    if (fm.reason === 'yaml') {
      return void problem(
        'skipped',
        `${file}:${fm.line}:${fm.column}: frontmatter is not valid YAML: ${fm.message}`,
        fm.line,
      );
    }
    if (fm.reason === 'rejected') return void problem('skipped', `${file}: ${fm.message}`);
    return void problem('skipped', `${fm.message}; a skill needs frontmatter with name and description`);
  }

  const folder = relDir ? (relDir.split('/').pop() as string) : source.name;
  const description = typeof fm.data.description === 'string' ? oneLine(fm.data.description) : '';
  if (!description)
    return void problem('skipped', 'frontmatter has no description (1–1,024 characters); skill not indexed');
  if (description.length > MAX_DESCRIPTION) {
    problem(
      'kept',
      `description is ${description.length} characters, over the ${MAX_DESCRIPTION} the format allows`,
    );
  }

  let name = folder;
  if (typeof fm.data.name !== 'string' || fm.data.name.trim() === '') {
    problem('kept', `frontmatter has no name; using the folder name "${folder}"`);
  } else {
    name = fm.data.name.trim();
    const bad = nameProblem(name, folder);
    if (bad) problem('kept', `name "${name}" ${bad}`);
  }

  const bootPath = relDir ? `${source.name}/${relDir}` : source.name;
  const dirName = skillDirName(name, folder);
  return {
    name,
    description,
    source: source.name,
    scope: source.scope,
    relDir,
    bootPath,
    file,
    hostDir,
    dirName,
    path: path.posix.join(opts.skillsDir, dirName, SKILL_FILE),
  };
}

const SAFE_DIR = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The folder a skill is laid out in, one level under the CLI's skills folder: its name (Claude Code
 * lists a skill under its folder name), else a slug of the name or of its own folder, never a path.
 */
export function skillDirName(name: string, folder: string): string {
  if (SAFE_DIR.test(name)) return name;
  for (const candidate of [name, folder]) {
    const slug = candidate
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, MAX_NAME)
      .replace(/-+$/, '');
    if (slug) return slug;
  }
  return 'skill';
}

function nameProblem(name: string, folder: string): string | undefined {
  if (name.length > MAX_NAME) return `is ${name.length} characters, over ${MAX_NAME}`;
  if (!NAME_RE.test(name))
    return 'should be lowercase letters, digits and single hyphens (not at either end)';
  if (name !== folder) return `should equal its folder name "${folder}"`;
  return undefined;
}

/** True when target is root or below it. */
export function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

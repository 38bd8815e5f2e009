import { readFile } from 'node:fs/promises';
import { parseYamlValue } from './frontmatter.js';
import { GlobSet } from './glob.js';
import { ParseCache } from '../../util/parse-cache.js';

// boot.yml: which briefs and skills are said (full content) and which are referenced
// (path only). Simple mode: top-level `briefs:`/`skills:` with `say:` globs. Subject mode: `always:`
// plus `subject.<slug>:` sections with `say:`/`ref:` globs. The two modes never mix.

/** One `briefs:` or `skills:` block; `undefined` lists were absent from the file. */
export interface Curation {
  say?: GlobSet;
  ref?: GlobSet;
}

/** A section's curation of both resource kinds. */
export interface Collection {
  briefs?: Curation;
  skills?: Curation;
}

export type BootSpec =
  | { mode: 'none'; file: string }
  | { mode: 'simple'; file: string; briefs?: Curation; skills?: Curation }
  | {
      mode: 'subject';
      file: string;
      always?: Collection;
      subjects: { slug: string; collection: Collection }[];
    };

export type BootMode = BootSpec['mode'];
export type ItemKind = 'brief' | 'skill';

/** A brief or skill as boot.yml globs see it. */
export interface BootItem {
  id: string;
  kind: ItemKind;
  /** Paths a glob may match (a brief's relative path; a skill's `<source>/<dir>` and `…/SKILL.md`). */
  candidates: string[];
}

/** Where one item lands: said in full, referenced, or referenced because an earlier section said it. */
export interface Placement {
  id: string;
  kind: ItemKind;
  how: 'say' | 'ref' | 'mentioned';
  /** `all` (no boot file / simple mode), `always`, `subject.<slug>` or `also`. */
  section: string;
  /** For `mentioned`: the section that said it. */
  earlier?: string;
}

export interface BootPlan {
  mode: BootMode;
  /** Subjects booted, in boot order (subject mode only). */
  subjects: string[];
  /** True when every subject was booted (the `also` section is present). */
  allSubjects: boolean;
  placements: Placement[];
}

/** boot.yml could not be used; the message names the file, the problem and the fix. */
export class BootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BootError';
  }
}

const SIMPLE_KEYS = ['briefs', 'skills'];
export const SUBJECT_PREFIX = 'subject.';

/** Reads and validates a boot file; an absent file is mode `none` (say everything). */
export async function loadBootFile(file: string): Promise<BootSpec> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { mode: 'none', file };
    throw new BootError(`boot file ${file} cannot be read: ${(err as Error).message}`);
  }
  return bootCache.get(file, text, () => parseBootText(text, file));
}

/** Parsed boot files by text: every run reads boot.yml, few change it. */
const bootCache = new ParseCache<BootSpec>();

/** Parses boot.yml text; throws BootError listing every problem (mixed modes fail before anything else). */
export function parseBootText(text: string, file: string): BootSpec {
  const parsed = parseYamlValue(text);
  if (!parsed.ok) {
    const { message, line, column } = parsed.error;
    const where = line !== undefined ? `${file}:${line}:${column ?? 1}` : file;
    throw new BootError(
      `${where}: boot file ${parsed.rejected ? 'was rejected by the YAML parser' : 'is not valid YAML'}: ${message}; fix the file`,
    );
  }
  const raw = parsed.value;
  if (raw === null || raw === undefined) return { mode: 'simple', file };
  if (!isMap(raw))
    throw new BootError(
      `${file}: boot file must be a YAML mapping (briefs/skills, or always/subject.<slug>)`,
    );

  const keys = Object.keys(raw);
  const simple = keys.filter((k) => SIMPLE_KEYS.includes(k));
  const subject = keys.filter((k) => k === 'always' || k.startsWith(SUBJECT_PREFIX));
  if (simple.length > 0 && subject.length > 0) {
    throw new BootError(
      `${file}: mixed mode not allowed — use either top-level briefs/skills (simple mode) OR always/subject.<slug> ` +
        `(subject mode), not both (found ${[...simple, ...subject].join(', ')})`,
    );
  }
  const problems: string[] = [];
  for (const k of keys) {
    if (!simple.includes(k) && !subject.includes(k)) {
      problems.push(`unknown key "${k}" (expected briefs and skills, or always and subject.<slug>)`);
    }
    if (k === SUBJECT_PREFIX) problems.push(`"${k}" has no subject name after "subject."`);
  }

  let spec: BootSpec;
  if (subject.length > 0) {
    spec = {
      mode: 'subject',
      file,
      ...(raw.always === undefined ? {} : { always: collection(raw.always, 'always', true, problems) }),
      subjects: subject
        .filter((k) => k.startsWith(SUBJECT_PREFIX) && k.length > SUBJECT_PREFIX.length)
        .map((k) => ({
          slug: k.slice(SUBJECT_PREFIX.length),
          collection: collection(raw[k], k, true, problems),
        })),
    };
  } else {
    const c = collection(raw, '', false, problems);
    spec = { mode: 'simple', file, ...c };
  }
  if (problems.length > 0) {
    throw new BootError(
      `${file}: boot file has ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
  return spec;
}

function collection(value: unknown, at: string, allowRef: boolean, problems: string[]): Collection {
  const out: Collection = {};
  if (value === null || value === undefined) return out;
  if (!isMap(value)) {
    problems.push(`${at}: expected a mapping with briefs and/or skills`);
    return out;
  }
  const prefix = at ? `${at}.` : '';
  for (const [k, v] of Object.entries(value)) {
    if (k !== 'briefs' && k !== 'skills') {
      if (at) problems.push(`${prefix}${k}: unknown key (expected briefs or skills)`);
      continue;
    }
    out[k] = curation(v, `${prefix}${k}`, allowRef, problems);
  }
  return out;
}

function curation(value: unknown, at: string, allowRef: boolean, problems: string[]): Curation {
  const out: Curation = {};
  if (value === null || value === undefined) return out;
  if (!isMap(value)) {
    problems.push(`${at}: expected a mapping with say${allowRef ? ' and/or ref' : ''} glob lists`);
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === 'ref' && !allowRef) {
      problems.push(
        `${at}.ref: ref lists are for subject mode; in simple mode every item not in say is already a ref`,
      );
      continue;
    }
    if (k !== 'say' && k !== 'ref') {
      problems.push(`${at}.${k}: unknown key (expected say${allowRef ? ' or ref' : ''})`);
      continue;
    }
    if (v === null || v === undefined) continue;
    if (!Array.isArray(v) || !v.every((g) => typeof g === 'string' && g.trim() !== '')) {
      problems.push(`${at}.${k}: expected a list of glob strings, e.g. [runbooks/**/*.md]`);
      continue;
    }
    out[k] = new GlobSet(v as string[]);
  }
  return out;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

import type { Placement } from './boot.js';
import { attr, compare, escapeContent } from './markup.js';
import type { PersonaLevel1 } from './persona.js';
import type { SkillEntry } from './skills-index.js';

// Level-1 rendering. Deterministic: the same inputs always give the same bytes (sorted, no clocks).
// Every entry of an index costs tokens on every model call, so a folder is said once, before the
// entries that live in it, and each skill's description is capped (INDEX_DESCRIPTION_CHARS): the same
// rule for every CLI that gets our index.

export const PART_NAMES = ['persona', 'workflows', 'skills', 'briefs', 'refs'] as const;
export type PartName = (typeof PART_NAMES)[number];

/**
 * A skill's description in the index is cut to this many characters (at a word, marked `…`): what the
 * skill does and when to use it comes first in a description (agentskills.io), and the agent reads
 * the rest in SKILL.md. 50 skills stay near 2,000 o200k tokens.
 */
export const INDEX_DESCRIPTION_CHARS = 160;

/** Everything the renderer needs, resolved and read up front. */
export interface RenderModel {
  persona?: PersonaLevel1;
  /** Skills by id (`skill:<source>/<dir>`). */
  skills: Map<string, SkillEntry>;
  /** Where the agent finds the skills: `<skillsDir>/<folder>/SKILL.md`. */
  skillsDir: string;
  /** Where the agent finds the briefs: `<briefsDir>/<id>`. */
  briefsDir: string;
  /** Agent-visible path of each brief, by id. */
  briefPaths: Map<string, string>;
  /** Full text of said items, by id. */
  content: Map<string, string>;
  placements: Placement[];
  /**
   * Set when the agent's CLI lists the skills laid out in `skillsDir` itself: the index is not
   * repeated (said skills still are, in full), a line points at the CLI's own listing instead.
   */
  listedByCli?: { skillsDir: string };
}

/** The line that stands for the index when the CLI lists the skills itself. */
export function listedByCliLine(skillsDir: string): string {
  return `Your CLI lists the skills available to you (name and description) in its own skills listing; this prompt does not repeat that list. Each skill's files are in ${skillsDir}/<name>/: when a task matches a description, read that skill's SKILL.md first.`;
}

export function renderPersona(p: PersonaLevel1 | undefined): string {
  if (!p) return '';
  const lines = [
    `<persona name="${attr(p.name)}" path="${attr(p.path)}">`,
    escapeContent(p.summary),
    'Your full identity, principles and guardrails are in the file at path; read it before you start.',
  ];
  if (p.categories.length > 0) {
    lines.push('Capabilities:', ...p.categories.map((c) => escapeContent(`- ${c.name}: ${c.summary}`)));
  }
  lines.push('</persona>');
  return lines.join('\n');
}

export function renderWorkflows(p: PersonaLevel1 | undefined): string {
  if (!p || p.workflows.length === 0) return '';
  return [
    '<workflows>',
    escapeContent(
      `Step-by-step procedures, each in ${p.workflowsDir}/<key>.md; read the one that fits before you act on it:`,
    ),
    ...p.workflows.map((w) =>
      escapeContent(
        w.path === `${p.workflowsDir}/${w.key}.md`
          ? `- ${w.key}: ${w.summary}`
          : `- ${w.key}: ${w.summary} → ${w.path}`,
      ),
    ),
    '</workflows>',
  ].join('\n');
}

/** `text` cut to at most `max` characters, at a word where there is one, marked with `…`. */
export function capDescription(text: string, max = INDEX_DESCRIPTION_CHARS): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '')}…`;
}

/** One index line: the name (and the folder, when it is not the name), the capped description. */
function indexLine(s: SkillEntry, skillsDir: string): string {
  const description = capDescription(s.description);
  if (s.path === `${skillsDir}/${s.name}/SKILL.md`) return `- ${s.name}: ${description}`;
  if (s.path === `${skillsDir}/${s.dirName}/SKILL.md`)
    return `- ${s.name} (folder ${s.dirName}): ${description}`;
  return `- ${s.name}: ${description} → ${s.path}`;
}

/** Said skills in full, then the index (name, description, path) of every other booted skill. */
export function renderSkills(m: RenderModel, degraded: ReadonlySet<string>): string {
  const said: string[] = [];
  const full = new Set<string>();
  const indexed = new Set<string>();
  for (const p of m.placements) {
    if (p.kind !== 'skill') continue;
    if (p.how === 'say' && !degraded.has(p.id) && m.content.has(p.id)) {
      full.add(p.id);
      said.push(p.id);
    } else {
      indexed.add(p.id);
    }
  }
  const index = [...indexed]
    .filter((id) => !full.has(id))
    .map((id) => m.skills.get(id))
    .filter((s): s is SkillEntry => s !== undefined)
    .sort((a, b) => compare(a.name, b.name));
  if (said.length === 0 && index.length === 0) return '';
  const lines = ['<skills>'];
  for (const id of said) {
    const s = m.skills.get(id) as SkillEntry;
    lines.push(
      `<skill name="${attr(s.name)}" path="${attr(s.path)}">`,
      body(m.content.get(id) as string),
      '</skill>',
    );
  }
  if (index.length > 0 && m.listedByCli) {
    lines.push(escapeContent(listedByCliLine(m.listedByCli.skillsDir)));
  } else if (index.length > 0) {
    lines.push(
      escapeContent(
        `Skills to read on demand, each in ${m.skillsDir}/<name>/SKILL.md: when a task matches a description, read that file first.`,
      ),
    );
    for (const s of index) lines.push(escapeContent(indexLine(s, m.skillsDir)));
  }
  lines.push('</skills>');
  return lines.join('\n');
}

export function renderBriefs(m: RenderModel, degraded: ReadonlySet<string>): string {
  const said = m.placements.filter(
    (p) => p.kind === 'brief' && p.how === 'say' && !degraded.has(p.id) && m.content.has(p.id),
  );
  if (said.length === 0) return '';
  return said
    .map(
      (p) =>
        `<brief path="${attr(m.briefPaths.get(p.id) ?? p.id)}">\n${body(m.content.get(p.id) as string)}\n</brief>`,
    )
    .join('\n');
}

/**
 * Plain brief paths (relative to the briefs folder), grouped by folder: `- runbooks/: a.md, b.md`, so
 * that a folder costs its tokens once; top-level files on a line of their own each.
 */
function groupedPaths(ids: readonly string[]): string[] {
  const folders = new Map<string, string[]>();
  for (const id of ids) {
    const slash = id.lastIndexOf('/');
    const folder = slash === -1 ? '' : id.slice(0, slash + 1);
    folders.set(folder, [...(folders.get(folder) ?? []), id.slice(slash + 1)]);
  }
  return [...folders].flatMap(([folder, names]) =>
    folder === '' ? names.map((n) => `- ${n}`) : [`- ${folder}: ${names.join(', ')}`],
  );
}

/**
 * Referenced briefs (and said ones degraded to fit the budget), then the `also` section, by path
 * relative to the briefs folder, which is said once. A brief with a note has a line of its own.
 */
export function renderRefs(m: RenderModel, degraded: ReadonlySet<string>): string {
  const noted: string[] = [];
  const plain: string[] = [];
  const also: string[] = [];
  const rel = (id: string) => {
    const at = m.briefPaths.get(id) ?? id;
    return at === `${m.briefsDir}/${id}` ? id : at;
  };
  for (const p of m.placements) {
    if (p.kind !== 'brief') continue;
    const entry = `- ${rel(p.id)}`;
    if (p.how === 'say') {
      if (degraded.has(p.id)) noted.push(`${entry} (not preloaded, to fit the token budget)`);
      else if (!m.content.has(p.id)) noted.push(`${entry} (could not be preloaded)`);
    } else if (p.how === 'mentioned') {
      if (degraded.has(p.id)) continue; // already listed once, where it was degraded
      noted.push(`${entry} (as mentioned earlier in ${p.earlier})`);
    } else if (p.section === 'also') {
      also.push(rel(p.id));
    } else {
      plain.push(rel(p.id));
    }
  }
  if (noted.length === 0 && plain.length === 0 && also.length === 0) return '';
  const lines = [
    `Briefs not preloaded, in ${m.briefsDir}/; read one when it becomes relevant:`,
    ...groupedPaths(plain),
    ...noted,
  ].map(escapeContent);
  if (also.length > 0) lines.push('<also>', ...groupedPaths(also).map(escapeContent), '</also>');
  return lines.join('\n');
}

function body(text: string): string {
  return escapeContent(text.replace(/\s+$/, ''));
}

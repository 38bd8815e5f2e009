import type { Placement } from './boot.js';
import { attr, compare, escapeContent } from './markup.js';
import type { PersonaLevel1 } from './persona.js';
import type { SkillEntry } from './skills-index.js';

// Level-1 rendering. Deterministic: the same inputs always give the same bytes (sorted, no clocks).

export const PART_NAMES = ['persona', 'workflows', 'skills', 'briefs', 'refs'] as const;
export type PartName = (typeof PART_NAMES)[number];

/** Everything the renderer needs, resolved and read up front. */
export interface RenderModel {
  persona?: PersonaLevel1;
  /** Skills by id (`skill:<source>/<dir>`). */
  skills: Map<string, SkillEntry>;
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
    'Step-by-step procedures; read the file of the one that fits before you act on it:',
    ...p.workflows.map((w) => escapeContent(`- ${w.key}: ${w.summary} → ${w.path}`)),
    '</workflows>',
  ].join('\n');
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
    lines.push('Skills to read on demand: when a task matches a description, read its SKILL.md first.');
    for (const s of index)
      lines.push(escapeContent(`- ${s.name}: ${s.description}`), escapeContent(`  → ${s.path}`));
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

/** Referenced briefs (and said ones degraded to fit the budget), then the `also` section. */
export function renderRefs(m: RenderModel, degraded: ReadonlySet<string>): string {
  const refs: string[] = [];
  const also: string[] = [];
  for (const p of m.placements) {
    if (p.kind !== 'brief') continue;
    const tag = `<ref path="${attr(m.briefPaths.get(p.id) ?? p.id)}"/>`;
    if (p.how === 'say') {
      if (degraded.has(p.id)) refs.push(`${tag} (not preloaded, to fit the token budget)`);
      else if (!m.content.has(p.id)) refs.push(`${tag} (could not be preloaded)`);
    } else if (p.how === 'mentioned') {
      if (degraded.has(p.id)) continue; // already listed once, where it was degraded
      refs.push(`${tag} (as mentioned earlier in ${p.earlier})`);
    } else if (p.section === 'also') {
      also.push(`  ${tag}`);
    } else {
      refs.push(tag);
    }
  }
  if (refs.length === 0 && also.length === 0) return '';
  const lines = ['Briefs not preloaded; read one when it becomes relevant:', ...refs];
  if (also.length > 0) lines.push('<also>', ...also, '</also>');
  return lines.join('\n');
}

function body(text: string): string {
  return escapeContent(text.replace(/\s+$/, ''));
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Incident } from '../../workspace/incident.js';
import type { Logger } from '../../log/logger.js';
import type { AgentView, SkillsSnapshot } from '../types.js';
import {
  BootError,
  loadBootFile,
  type BootItem,
  type BootPlan,
  type BootSpec,
  type Placement,
} from './boot.js';
import { resolveBoot } from './boot-resolve.js';
import { GlobSet } from './glob.js';
import { listBriefs, type BriefFile } from './briefs.js';
import { loadPersona, type PersonaLevel1 } from './persona.js';
import {
  renderBriefs,
  renderPersona,
  renderRefs,
  renderSkills,
  renderWorkflows,
  type PartName,
  type RenderModel,
} from './render.js';
import { indexSkills, type SkillEntry } from './skills-index.js';
import { chooseSubjects } from './subjects.js';
import { FileDepsCache } from '../../util/file-deps-cache.js';
import type { SkillsIndex } from './skill-types.js';

export { BootError } from './boot.js';
export { PersonaError } from './persona.js';

export interface DisclosureInput {
  config: Config;
  incident: Incident;
  subjects?: string[];
  skills: SkillsSnapshot;
  view: AgentView;
  log: Logger;
}

export interface Disclosure {
  persona?: string;
  /**
   * Files that could not be used, each with the file and what was left out because of it (a bad
   * SKILL.md skips that skill, a bad PERSONA.md the persona, a bad boot.yml the curation). Empty when
   * everything was used.
   */
  problems: string[];
  subjects: string[];
  bootMode: 'none' | 'simple' | 'subject';
  /** Said briefs that may be degraded to references, lowest priority first. */
  degradable: string[];
  /** The skills the prompt names (said or indexed), sorted by name: the ones the run lays out for the agent. */
  skills: SkillEntry[];
  /** Renders the Level-1 text; briefs whose ids are in `degraded` are rendered as references. */
  render(degraded: ReadonlySet<string>): { text: string; parts: { part: string; text: string }[] };
}

/** Id of a skill in `degradable`/`degraded` (briefs use their path relative to briefs_dir). */
export const skillId = (s: SkillEntry): string => `skill:${s.bootPath}`;

/**
 * Builds the progressive-disclosure part of the prompt: persona summary, workflow index, skills index,
 * and the briefs boot.yml says (full text) or references (path). Throws BootError / PersonaError with
 * a message that names the file and the fix (mixed boot modes, unknown subject, missing persona, …).
 */
export async function buildDisclosure(input: DisclosureInput): Promise<Disclosure> {
  const { config, view, log } = input;
  const problems: string[] = [];
  // Each source of the disclosure fails on its own: its failure is reported and the rest is built.
  const contained = async <T>(what: string, load: Promise<T>, fallback: T): Promise<T> => {
    try {
      return await load;
    } catch (err) {
      if (what === 'boot' && input.subjects !== undefined && err instanceof BootError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      const left = LEFT_OUT[what] ?? what;
      problems.push(`${message} (${left})`);
      log.warn({ part: what, err: message }, `disclosure: ${left}`);
      return fallback;
    }
  };
  const [persona, index, briefs, spec] = await Promise.all([
    contained('persona', cachedPersona(config, view, log), undefined),
    contained('skills', cachedSkillsIndex(input, view, log), { skills: [], problems: [], conflicts: [] }),
    contained('briefs', cachedBriefs(config.briefs_dir, log), []),
    contained('boot', cachedBootFile(config.boot_file), referenceEverything(config.boot_file)),
  ]);
  for (const p of index.problems) if (p.action === 'skipped') problems.push(`${p.file}: ${p.message}`);

  const skills = new Map(index.skills.map((s) => [skillId(s), s]));
  const items: BootItem[] = [
    ...briefs.map((b): BootItem => ({ id: b.id, kind: 'brief', candidates: [b.id] })),
    ...index.skills.map((s): BootItem => ({
      id: skillId(s),
      kind: 'skill',
      candidates: [s.bootPath, `${s.bootPath}/SKILL.md`],
    })),
  ];
  const plan = resolveBoot(spec, items, { subjects: pickSubjects(input, spec, log) });

  const content = await saidContent(plan.placements, briefs, skills, log);
  const model: RenderModel = {
    persona,
    skills,
    skillsDir: view.skillsDir,
    briefsDir: view.briefsDir,
    briefPaths: new Map(briefs.map((b) => [b.id, path.posix.join(view.briefsDir, b.id)])),
    content,
    placements: plan.placements,
    ...(view.skillsListedByCli ? { listedByCli: { skillsDir: view.skillsDir } } : {}),
  };
  const booted = new Set(plan.placements.filter((p) => p.kind === 'skill').map((p) => p.id));
  log.debug(
    { bootMode: plan.mode, subjects: plan.subjects, briefs: briefs.length, skills: index.skills.length },
    'disclosure built',
  );

  return {
    ...(persona ? { persona: persona.name } : {}),
    problems,
    subjects: plan.subjects,
    bootMode: plan.mode,
    degradable: degradationOrder(plan, content),
    skills: index.skills.filter((s) => booted.has(skillId(s))),
    render: (degraded) => renderDisclosure(model, degraded),
  };
}

/**
 * What every run's disclosure reads that changes only with its files: built again when a file or
 * folder it was read from changed (persona, briefs, boot.yml, said items), or for another skills
 * commit (the skills index), else served after one stat per dependency.
 */
export const disclosureCaches = {
  persona: new FileDepsCache<PersonaLevel1>(),
  briefs: new FileDepsCache<BriefFile[]>(),
  boot: new FileDepsCache<BootSpec>(),
  text: new FileDepsCache<string>(256),
  skills: new FileDepsCache<SkillsIndex>(),
};

function cachedPersona(config: Config, view: AgentView, log: Logger): Promise<PersonaLevel1> {
  const key = `${config.personas_dir}\0${config.persona}\0${view.personasDir}`;
  return disclosureCaches.persona.get(key, async () => {
    const deps: string[] = [];
    const value = await loadPersona({
      personasDir: config.personas_dir,
      persona: config.persona,
      viewDir: view.personasDir,
      log,
      deps,
    });
    return { value, deps };
  });
}

function cachedBriefs(briefsDir: string, log: Logger): Promise<BriefFile[]> {
  return disclosureCaches.briefs.get(briefsDir, async () => {
    const deps: string[] = [];
    return { value: await listBriefs(briefsDir, log, deps), deps };
  });
}

function cachedBootFile(file: string): Promise<BootSpec> {
  return disclosureCaches.boot.get(file, async () => ({ value: await loadBootFile(file), deps: [file] }));
}

function cachedText(file: string): Promise<string> {
  return disclosureCaches.text.get(file, async () => ({ value: await readFile(file, 'utf8'), deps: [file] }));
}

/** A skills checkout never changes under its commit: the index is keyed by the sources' commits. */
function cachedSkillsIndex(input: DisclosureInput, view: AgentView, log: Logger): Promise<SkillsIndex> {
  const { sources } = input.skills;
  const maxSkillFileBytes = input.config.skills.max_skill_file_bytes;
  const key = JSON.stringify([
    view.skillsDir,
    maxSkillFileBytes,
    sources.map((s) => [s.name, s.scope, s.dir, s.commit]),
  ]);
  return disclosureCaches.skills.get(key, async () => ({
    value: await indexSkills({ snapshot: { sources }, maxSkillFileBytes, skillsDir: view.skillsDir, log }),
    deps: [],
  }));
}

const LEFT_OUT: Record<string, string> = {
  persona: 'the prompt has no persona',
  skills: 'the prompt has no skills index',
  briefs: 'the prompt has no briefs',
  boot: 'boot file unusable: every brief is referenced and every skill indexed, none said in full',
};

/** The curation used when boot.yml cannot be: nothing said in full, everything listed (Level 1). */
function referenceEverything(file: string): BootSpec {
  return { mode: 'simple', file, briefs: { say: new GlobSet([]) }, skills: { say: new GlobSet([]) } };
}

/**
 * Subjects to boot. An explicit list (`context --subject`) is passed through and boot.yml rejects it
 * when unusable (simple mode, unknown subject). Subjects from config rules only warn on the same
 * problems: a rule that does not fit the boot file must not stop an incident being investigated.
 */
function pickSubjects(input: DisclosureInput, spec: BootSpec, log: Logger): string[] | undefined {
  const choice = chooseSubjects(input.config.subjects, input.incident, input.subjects);
  if (choice.source !== 'rules' || choice.subjects === undefined) return choice.subjects;
  if (spec.mode !== 'subject') {
    log.warn(
      { subjects: choice.subjects, bootFile: spec.file, bootMode: spec.mode },
      'subject rules matched the incident but the boot file is not in subject mode; subjects ignored',
    );
    return undefined;
  }
  const known = new Set(spec.subjects.map((s) => s.slug));
  const unknown = choice.subjects.filter((s) => !known.has(s));
  if (unknown.length > 0) {
    log.warn(
      { unknown, known: [...known], bootFile: spec.file },
      'subject rules name subjects the boot file does not define; those are ignored',
    );
  }
  const usable = choice.subjects.filter((s) => known.has(s));
  return usable.length > 0 ? usable : undefined;
}

/**
 * Lowest priority first: subject-specific said items before `always` ones (no boot file and simple
 * mode are one group); within a group said skills (which keep their index line) before said briefs,
 * and later ones before earlier ones.
 */
function degradationOrder(plan: BootPlan, content: Map<string, string>): string[] {
  const said = plan.placements.filter((p) => p.how === 'say' && content.has(p.id));
  const group = (subjectSpecific: boolean, kind: Placement['kind']) =>
    said
      .filter((p) => p.section.startsWith('subject.') === subjectSpecific && p.kind === kind)
      .map((p) => p.id)
      .reverse();
  return [
    ...group(true, 'skill'),
    ...group(true, 'brief'),
    ...group(false, 'skill'),
    ...group(false, 'brief'),
  ];
}

/** The text of each item the boot plan says in full (the others are referenced by path). */
async function saidContent(
  placements: ReturnType<typeof resolveBoot>['placements'],
  briefs: readonly { id: string; file: string }[],
  skills: ReadonlyMap<string, { file: string }>,
  log: Logger,
): Promise<Map<string, string>> {
  const briefFiles = new Map(briefs.map((b) => [b.id, b.file]));
  const content = new Map<string, string>();
  for (const p of placements) {
    if (p.how !== 'say') continue;
    const file = p.kind === 'brief' ? briefFiles.get(p.id) : skills.get(p.id)?.file;
    if (!file) continue;
    try {
      content.set(p.id, await cachedText(file));
    } catch (err) {
      log.warn(
        { id: p.id, file, err: (err as Error).message },
        'said item cannot be read; referenced instead',
      );
    }
  }
  return content;
}

/** The disclosure's parts in prompt order, with `degraded` items shortened to references. */
function renderDisclosure(model: RenderModel, degraded: ReadonlySet<string>) {
  const parts: { part: PartName; text: string }[] = [
    { part: 'persona', text: renderPersona(model.persona) },
    { part: 'workflows', text: renderWorkflows(model.persona) },
    { part: 'skills', text: renderSkills(model, degraded) },
    { part: 'briefs', text: renderBriefs(model, degraded) },
    { part: 'refs', text: renderRefs(model, degraded) },
  ];
  return {
    text: parts
      .map((p) => p.text)
      .filter((t) => t !== '')
      .join('\n\n'),
    parts,
  };
}

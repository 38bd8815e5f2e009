import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { oneLine, parseFrontmatter } from './frontmatter.js';
import { compare } from './markup.js';

// A persona is a folder: PERSONA.md (frontmatter name, description, categories, workflows; body = the
// full identity) and workflows/<key>.md. Only Level 1 (summary, categories, workflow index with paths)
// goes into the prompt; the agent reads PERSONA.md and a workflow file (Level 2) when it needs them.

export const PERSONA_FILE = 'PERSONA.md';
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface WorkflowEntry {
  key: string;
  summary: string;
  /** Where the agent reads it. */
  path: string;
}

/** What the prompt carries about a persona (never the PERSONA.md body or a workflow body). */
export interface PersonaLevel1 {
  name: string;
  /** One line. */
  summary: string;
  /** Where the agent reads the full identity. */
  path: string;
  categories: { name: string; summary: string }[];
  /** Where the agent reads the workflows: `<workflowsDir>/<key>.md`. */
  workflowsDir: string;
  workflows: WorkflowEntry[];
  warnings: string[];
}

/** The persona folder or its PERSONA.md is unusable; the message names what to fix. */
export class PersonaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PersonaError';
  }
}

export interface LoadPersonaOptions {
  personasDir: string;
  persona: string;
  /** `AgentView.personasDir`. */
  viewDir: string;
  /** Only its warnings are used (so `validate-config` checks a persona without loading pino). */
  log: Pick<Logger, 'warn'>;
  /** Every file and folder the Level-1 view was read from is added here (what a cache checks). */
  deps?: string[];
}

/** Loads a persona's Level-1 view; workflows missing on disk are omitted, unlisted ones added. */
export async function loadPersona(opts: LoadPersonaOptions): Promise<PersonaLevel1> {
  const { personasDir, persona } = opts;
  const dir = path.join(personasDir, persona);
  const file = path.join(dir, PERSONA_FILE);
  const workflowsDir = path.join(dir, 'workflows');
  opts.deps?.push(file, workflowsDir);
  if (!KEY_RE.test(persona) || !(await isFile(file))) {
    const available = await listPersonas(personasDir);
    throw new PersonaError(
      `persona "${persona}" not found: ${file} does not exist. ` +
        `Available personas in ${personasDir}: ${available.join(', ') || 'none'}. ` +
        'Set persona to one of them, or create <personas_dir>/<name>/PERSONA.md',
    );
  }
  const fm = parseFrontmatter(await readFile(file, 'utf8'));
  if (!fm.ok) {
    const where = fm.reason === 'yaml' ? `${file}:${fm.line}:${fm.column}` : file;
    throw new PersonaError(`${where}: PERSONA.md frontmatter cannot be read: ${fm.message}; fix the file`);
  }
  const data = fm.data;
  if (typeof data.description !== 'string' || oneLine(data.description) === '') {
    throw new PersonaError(`${file}: frontmatter has no description (the one-line persona summary); add one`);
  }
  const warnings: string[] = [];
  const warn = (msg: string, meta: Record<string, unknown>) => {
    warnings.push(msg);
    opts.log.warn({ persona, ...meta }, msg);
  };
  const name = typeof data.name === 'string' && data.name.trim() ? data.name.trim() : persona;
  if (name !== persona) warn(`persona name "${name}" differs from its folder "${persona}"`, { file });

  const viewRoot = path.posix.join(opts.viewDir, persona);
  const categories = stringMap(data.categories, 'categories', file, warn);
  const listed = stringMap(data.workflows, 'workflows', file, warn);
  const onDisk = new Map<string, string>();
  for (const f of (await readdir(workflowsDir).catch(() => [] as string[])).sort(compare)) {
    if (!f.endsWith('.md')) continue;
    opts.deps?.push(path.join(workflowsDir, f));
    if (await isFile(path.join(workflowsDir, f))) onDisk.set(f.slice(0, -3), f);
  }

  const workflows: WorkflowEntry[] = [];
  const viewWorkflows = path.posix.join(viewRoot, 'workflows');
  const entry = (key: string, summary: string): WorkflowEntry => ({
    key,
    summary,
    path: path.posix.join(viewWorkflows, `${key}.md`),
  });
  for (const { name: key, summary } of listed) {
    if (!KEY_RE.test(key)) {
      warn(`workflow key "${key}" is not a plain file name; omitted`, { file, workflow: key });
    } else if (!onDisk.has(key)) {
      warn(`workflow "${key}" is listed in PERSONA.md but workflows/${key}.md does not exist; omitted`, {
        file,
        workflow: key,
      });
    } else {
      workflows.push(entry(key, summary));
    }
  }
  const listedKeys = new Set(listed.map((w) => w.name));
  for (const [key, f] of onDisk) {
    if (listedKeys.has(key) || !KEY_RE.test(key)) continue;
    const text = await readFile(path.join(workflowsDir, f), 'utf8').catch((err: unknown) => {
      warn(`workflow file workflows/${f} cannot be read (${(err as Error).message}); listed by its key`, {
        file: path.join(workflowsDir, f),
      });
      return '';
    });
    // The markdown parser is loaded only for such a file: validate-config and most runs never need it.
    const { firstHeading } = await import('../../util/markdown.js');
    const heading = firstHeading(text);
    workflows.push(entry(key, heading ? oneLine(heading) : key));
  }

  return {
    name,
    summary: oneLine(data.description),
    path: path.posix.join(viewRoot, PERSONA_FILE),
    categories,
    workflowsDir: viewWorkflows,
    workflows,
    warnings,
  };
}

/** Persona folders (those holding a PERSONA.md), sorted. */
export async function listPersonas(personasDir: string): Promise<string[]> {
  const names = await readdir(personasDir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const n of names.sort(compare)) if (await isFile(path.join(personasDir, n, PERSONA_FILE))) out.push(n);
  return out;
}

function stringMap(
  value: unknown,
  key: string,
  file: string,
  warn: (msg: string, meta: Record<string, unknown>) => void,
): { name: string; summary: string }[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    warn(`PERSONA.md ${key} must be a mapping of name to one line; ignored`, { file });
    return [];
  }
  const out: { name: string; summary: string }[] = [];
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string' && typeof v !== 'number') {
      warn(`PERSONA.md ${key}.${name} must be one line of text; ignored`, { file });
      continue;
    }
    out.push({ name, summary: oneLine(String(v)) });
  }
  return out;
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}

import type { Logger } from '../../log/logger.js';
import type { SkillsSnapshot } from '../types.js';

// What the skills index is made of; shared by the index and the SKILL.md reader.

/** One skill the agent can read on demand (Agent Skills format, agentskills.io). */
export interface SkillEntry {
  /** Frontmatter `name` (the folder name when absent). */
  name: string;
  /** Frontmatter `description`, on one line. */
  description: string;
  source: string;
  scope: 'user' | 'project';
  /** Skill folder relative to the source root, `/`-separated ('' when the root itself is the skill). */
  relDir: string;
  /** `<source>/<relDir>`: what boot.yml `skills` globs match. */
  bootPath: string;
  /** Host path of SKILL.md. */
  file: string;
  /** Host path of the skill folder, without symlinks (what the run mounts or links for the agent). */
  hostDir: string;
  /**
   * The skill's folder name where the run lays it out (`<skillsDir>/<dirName>/`): its name when that is
   * a safe folder name (every valid name is), else a slug of it. Unique in an index.
   */
  dirName: string;
  /** Where the agent reads it: `<AgentView.skillsDir>/<dirName>/SKILL.md`. */
  path: string;
}

/** Something wrong with one skill or source; `kept` problems are warnings, `skipped` ones dropped the skill. */
export interface SkillProblem {
  source: string;
  file: string;
  line?: number;
  action: 'kept' | 'skipped';
  message: string;
}

/** Two skills with one name (one folder name): the winner is in the index, the loser is not. */
export interface SkillConflict {
  name: string;
  winner: string;
  loser: string;
}

export interface SkillsIndex {
  /** Sorted by name. */
  skills: SkillEntry[];
  problems: SkillProblem[];
  conflicts: SkillConflict[];
}

export interface IndexSkillsOptions {
  snapshot: Pick<SkillsSnapshot, 'sources'>;
  /** `skills.max_skill_file_bytes`: a larger SKILL.md is skipped. */
  maxSkillFileBytes: number;
  /** `AgentView.skillsDir`. */
  skillsDir: string;
  log: Logger;
  /** Deepest skill folder below a source root (default 4, e.g. `skills/k8s-troubleshooter` is 2). */
  maxDepth?: number;
}

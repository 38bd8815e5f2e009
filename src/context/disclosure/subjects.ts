import type { Config } from '../../config/schema.js';
import type { Incident } from '../../workspace/incident.js';

// Which boot.yml subjects an incident boots: configuration maps incident fields to subjects, so a
// CrashLoop incident boots `crashloop` without anyone passing a flag; `context --subject` overrides.

export type SubjectRule = Config['subjects'][number];

export interface SubjectChoice {
  /** Subjects to boot; undefined = every subject (with the `also` section). */
  subjects?: string[];
  /** Why: an explicit override, matching rules, or no rule matched. */
  source: 'override' | 'rules' | 'default';
}

/**
 * Chooses subjects. An explicit override wins. Otherwise the union of every matching rule's subjects,
 * in config order, without duplicates. A rule matches when all of its fields match, each
 * case-insensitively against one value or any of a list. When no rule matches we boot ALL subjects
 * (subject mode) rather than only `always`: an incident nobody wrote a rule for is the one where the
 * agent most needs the whole curated library, and booting all keeps everything at least referenced.
 */
export function chooseSubjects(
  rules: readonly SubjectRule[],
  incident: Incident,
  override?: string[],
): SubjectChoice {
  if (override !== undefined) return { subjects: [...new Set(override)], source: 'override' };
  const chosen: string[] = [];
  for (const rule of rules) {
    if (!ruleMatches(rule, incident)) continue;
    for (const s of rule.subjects) if (!chosen.includes(s)) chosen.push(s);
  }
  return chosen.length > 0 ? { subjects: chosen, source: 'rules' } : { source: 'default' };
}

/** True when every field of the rule matches the incident (so an empty `match: {}` matches every incident). */
export function ruleMatches(rule: SubjectRule, incident: Incident): boolean {
  const fields = Object.entries(rule.match);
  return fields.every(([field, expected]) => {
    const actual = fieldAt(incident, field);
    if (actual === undefined) return false;
    const want = (Array.isArray(expected) ? expected : [expected]).map((v) => v.toLowerCase());
    return want.includes(actual.toLowerCase());
  });
}

/** The value at a dot path, as text; undefined when absent or not a scalar. */
export function fieldAt(obj: unknown, dotPath: string): string | undefined {
  let cur: unknown = obj;
  for (const key of dotPath.split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, key))
      return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return undefined;
}

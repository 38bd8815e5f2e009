import { describe, expect, it } from 'vitest';
import {
  chooseSubjects,
  fieldAt,
  ruleMatches,
  type SubjectRule,
} from '../../../src/context/disclosure/subjects.js';
import type { Incident } from '../../../src/workspace/incident.js';

const incident: Incident = {
  incidentId: 'i-1',
  cluster: 'prod',
  namespace: 'payments',
  resource: { kind: 'Pod', name: 'api-1' },
  faultType: 'CrashLoop',
  severity: 'HIGH',
  timestamp: '2026-11-22T00:00:00Z',
  context: { restarts: 7 },
};

describe('chooseSubjects', () => {
  it('maps a CrashLoop incident to the crashloop subject, case-insensitively', () => {
    const rules = [{ match: { faultType: 'crashloop' }, subjects: ['crashloop'] }];
    expect(chooseSubjects(rules, incident)).toEqual({ subjects: ['crashloop'], source: 'rules' });
  });

  it('matches a dot path against any value of a list', () => {
    const rules = [{ match: { 'resource.kind': ['Deployment', 'pod'] }, subjects: ['workloads'] }];
    expect(chooseSubjects(rules, incident).subjects).toEqual(['workloads']);
  });

  it('requires every field of a rule to match', () => {
    const rules = [{ match: { faultType: 'CrashLoop', severity: 'low' }, subjects: ['x'] }];
    expect(chooseSubjects(rules, incident)).toEqual({ source: 'default' });
  });

  it('unions matching rules in config order without duplicates', () => {
    const rules: SubjectRule[] = [
      { match: { severity: 'high' }, subjects: ['paging', 'crashloop'] },
      { match: { faultType: 'OOMKilled' }, subjects: ['oom'] },
      { match: { faultType: 'CrashLoop' }, subjects: ['crashloop', 'apps'] },
    ];
    expect(chooseSubjects(rules, incident).subjects).toEqual(['paging', 'crashloop', 'apps']);
  });

  it('lets an explicit override win over the rules', () => {
    const rules = [{ match: { faultType: 'CrashLoop' }, subjects: ['crashloop'] }];
    expect(chooseSubjects(rules, incident, ['oom', 'oom'])).toEqual({
      subjects: ['oom'],
      source: 'override',
    });
  });

  it('returns no subjects (boot all) when no rule matches', () => {
    expect(chooseSubjects([{ match: { faultType: 'Pending' }, subjects: ['p'] }], incident)).toEqual({
      source: 'default',
    });
  });

  it('does not match a missing field, and matches numbers by their text', () => {
    expect(ruleMatches({ match: { 'resource.uid': 'x' }, subjects: ['s'] }, incident)).toBe(false);
    expect(ruleMatches({ match: { 'context.restarts': '7' }, subjects: ['s'] }, incident)).toBe(true);
  });

  it('treats an empty match as matching every incident', () => {
    expect(ruleMatches({ match: {}, subjects: ['s'] }, incident)).toBe(true);
  });
});

describe('fieldAt', () => {
  it('reads scalars only and never walks the prototype', () => {
    expect(fieldAt(incident, 'resource.kind')).toBe('Pod');
    expect(fieldAt(incident, 'resource')).toBeUndefined();
    expect(fieldAt(incident, 'constructor')).toBeUndefined();
    expect(fieldAt(incident, 'resource.name.length')).toBeUndefined();
  });
});

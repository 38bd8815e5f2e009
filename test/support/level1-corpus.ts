// A Level-1 corpus as a team's library grows: generated skills (a SKILL.md of ~1,200 o200k tokens with
// a ~300-character description each) and briefs (a few hundred words each, in a handful of folders),
// deterministic so that every run measures the same content. Used by bench/disclosure.ts and the test
// that keeps Level 1 within its budget.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SkillsSnapshot } from '../../src/context/types.js';
import { seededRandom } from './random.js';

const rng = seededRandom;
const TOPICS = [
  'pod crash loops',
  'memory pressure',
  'DNS resolution',
  'ingress routing',
  'certificate expiry',
  'PVC binding',
  'node drain',
  'HPA scaling',
  'image pulls',
  'network policy',
  'etcd latency',
  'quota limits',
];
const VERBS = ['Diagnose', 'Investigate', 'Triage', 'Explain', 'Audit', 'Trace'];
const WORDS = (
  'kubectl describe events logs previous container restart exit code probe readiness liveness ' +
  'deployment replicaset node taint toleration affinity scheduler quota limit request namespace selector label ' +
  'service endpoint ingress certificate secret configmap volume claim storage class rollout history'
).split(' ');

/** One generated SKILL.md: frontmatter and eight sections of text and commands. */
export function skillText(i: number): { name: string; text: string } {
  const r = rng(i + 1);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)] as T;
  const topic = pick(TOPICS);
  const name = `${topic.replace(/\s+/g, '-').toLowerCase()}-${i}`;
  // ~300 characters: what it does, when to use it, what it needs.
  const description =
    `${pick(VERBS)} ${topic} in Kubernetes clusters using read-only kubectl, events and container logs. ` +
    `Use when an incident mentions ${topic} or ${pick(TOPICS)}, when pods show ${pick(WORDS)} or ${pick(WORDS)} ` +
    `symptoms, or before recommending a ${pick(WORDS)} change. Needs bash, kubectl and jq.`;
  const sections: string[] = [`# ${name}`, '', description, ''];
  for (let s = 1; s <= 8; s++) {
    sections.push(`## ${s}. ${pick(VERBS)} the ${pick(WORDS)}`, '');
    for (let p = 0; p < 4; p++) {
      sections.push(Array.from({ length: 18 }, () => pick(WORDS)).join(' ') + '.');
    }
    sections.push(
      '',
      '```bash',
      `kubectl get ${pick(WORDS)} -n "$NS" -o json | jq '.items[] | .metadata.name'`,
      '```',
      '',
    );
  }
  return {
    name,
    text: `---\nname: ${name}\ndescription: "${description}"\nlicense: Apache-2.0\n---\n${sections.join('\n')}\n`,
  };
}

/** `count` skills in one source folder (`skills/<name>/SKILL.md`), as a skills snapshot. */
export function writeSkills(root: string, count: number): SkillsSnapshot {
  const dir = path.join(root, `skills-${count}`);
  for (let i = 0; i < count; i++) {
    const { name, text } = skillText(i);
    mkdirSync(path.join(dir, 'skills', name), { recursive: true });
    writeFileSync(path.join(dir, 'skills', name, 'SKILL.md'), text);
  }
  return {
    sources: [{ name: 'bench', scope: 'project', dir, commit: 'local:bench' }],
    unavailable: [],
    release() {},
  };
}

const FOLDERS = ['runbooks', 'practices', 'reference', 'postmortems'];

/** `count` briefs of a few hundred words each, in a handful of folders, as a team's briefs_dir grows. */
export function writeBriefs(root: string, count: number): string {
  const dir = path.join(root, `briefs-${count}`);
  for (let i = 0; i < count; i++) {
    const r = rng(1000 + i);
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)] as T;
    const folder = FOLDERS[i % FOLDERS.length] as string;
    const name = `${pick(TOPICS).replace(/\s+/g, '-').toLowerCase()}-${pick(WORDS)}-${i}.md`;
    const body = Array.from({ length: 12 }, () => Array.from({ length: 24 }, () => pick(WORDS)).join(' '));
    mkdirSync(path.join(dir, folder), { recursive: true });
    writeFileSync(path.join(dir, folder, name), `# ${name}\n\n${body.join('.\n\n')}.\n`);
  }
  return dir;
}

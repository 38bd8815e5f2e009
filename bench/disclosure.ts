// Progressive disclosure benchmark: Level-1 prompt size (o200k tokens) for N skills, the shipped
// kubernetes-sre persona and M briefs listed by path, against the "say everything" prompt for the same
// content and against the 3,500-token target, and index rendering time for many skills against
// rendering them all in full.
//   npx tsx bench/disclosure.ts
//   BENCH_SKILLS=50 BENCH_BRIEFS=100 BENCH_TIMING_SKILLS=1000 BENCH_ITERATIONS=20 npx tsx bench/disclosure.ts
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { configSchema, type Config } from '../src/config/schema.js';
import { buildDisclosure, type Disclosure } from '../src/context/disclosure/index.js';
import { indexSkills } from '../src/context/disclosure/skills-index.js';
import type { AgentView, SkillsSnapshot } from '../src/context/types.js';
import type { Incident } from '../src/workspace/incident.js';
import { silentLogger } from '../src/log/logger.js';
import { writeBriefs, writeSkills } from '../test/support/level1-corpus.js';

const SKILLS = Number(process.env.BENCH_SKILLS ?? 50);
const BRIEFS = Number(process.env.BENCH_BRIEFS ?? 100);
/** Level 1 for 50 skills, a persona and 100 briefs stays within this many o200k tokens. */
const LEVEL1_TARGET = 3500;
const TIMING_SKILLS = Number(process.env.BENCH_TIMING_SKILLS ?? 1000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20);
const PERSONAS = path.resolve(import.meta.dirname, '../configs/personas');
const PERSONA_DIR = path.join(PERSONAS, 'kubernetes-sre');

const VIEW: AgentView = {
  workspaceDir: '/workspace',
  runDir: '/workspace/.triage/runs/bench',
  triageDir: '/workspace/.triage/runs/bench/triage',
  reportPath: '/workspace/output/investigation.md',
  skillsDir: '/home/agent/.claude/skills',
  personasDir: '/opt/triage/personas',
  briefsDir: '/opt/triage/briefs',
  skillsListedByCli: false,
  hostPaths: [],
};
const INCIDENT: Incident = {
  incidentId: 'bench',
  cluster: 'prod',
  namespace: 'payments',
  resource: { kind: 'Pod', name: 'api-1' },
  faultType: 'CrashLoop',
  severity: 'high',
  timestamp: '2026-11-22T00:00:00Z',
};

function config(root: string, boot: string | null, briefsDir = path.join(root, 'no-briefs')): Config {
  const bootFile = path.join(root, `boot-${Math.random().toString(36).slice(2)}.yml`);
  if (boot !== null) writeFileSync(bootFile, boot);
  return configSchema.parse({
    personas_dir: PERSONAS,
    briefs_dir: briefsDir,
    boot_file: bootFile,
    skills: { max_skill_file_bytes: '1MiB' },
  });
}

const build = (cfg: Config, skills: SkillsSnapshot): Promise<Disclosure> =>
  buildDisclosure({ config: cfg, incident: INCIDENT, skills, view: VIEW, log: silentLogger() });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}
async function timeIt(fn: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });

const root = mkdtempSync(path.join(tmpdir(), 'bench-disclosure-'));
try {
  // --- size: Level 1 vs say everything -------------------------------------------------------
  const small = writeSkills(root, SKILLS);
  const briefsDir = writeBriefs(root, BRIEFS);
  const level1 = (
    await build(config(root, 'skills: { say: [] }\nbriefs: { say: [] }\n', briefsDir), small)
  ).render(new Set());
  const part = (name: string) => level1.parts.find((p) => p.part === name)?.text ?? '';
  const everything = (await build(config(root, null, briefsDir), small)).render(new Set()).parts;
  const everythingSkills = everything.find((p) => p.part === 'skills')?.text ?? '';
  const everythingBriefs = everything.find((p) => p.part === 'briefs')?.text ?? '';
  const personaFull = readFileSync(path.join(PERSONA_DIR, 'PERSONA.md'), 'utf8');
  const workflowsFull = readdirSync(path.join(PERSONA_DIR, 'workflows'))
    .sort()
    .map((f) => readFileSync(path.join(PERSONA_DIR, 'workflows', f), 'utf8'))
    .join('\n\n');
  const rows: [string, number, number][] = [
    ['persona (summary + categories vs PERSONA.md)', countTokens(part('persona')), countTokens(personaFull)],
    ['workflows (index vs all workflow files)', countTokens(part('workflows')), countTokens(workflowsFull)],
    [
      `skills (${SKILLS}: index vs every SKILL.md)`,
      countTokens(part('skills')),
      countTokens(everythingSkills),
    ],
    [`briefs (${BRIEFS}: paths vs every brief)`, countTokens(part('refs')), countTokens(everythingBriefs)],
  ];
  const l1Total = countTokens(level1.text);
  const allTotal = countTokens([personaFull, workflowsFull, everythingSkills, everythingBriefs].join('\n\n'));
  console.log(
    `## Level-1 prompt size (o200k tokens), ${SKILLS} skills + kubernetes-sre persona + ${BRIEFS} briefs\n`,
  );
  console.log('| part | Level 1 | say everything | Level 1 / everything |');
  console.log('|---|---:|---:|---:|');
  for (const [name, a, b] of rows) console.log(`| ${name} | ${fmt(a)} | ${fmt(b)} | ${(a / b).toFixed(3)} |`);
  console.log(
    `| **total** | **${fmt(l1Total)}** | **${fmt(allTotal)}** | **${(l1Total / allTotal).toFixed(3)}** |`,
  );
  console.log(
    `\nper skill index entry: ${fmt(countTokens(part('skills')) / SKILLS)} tokens; ` +
      `per full SKILL.md: ${fmt(countTokens(everythingSkills) / SKILLS)} tokens; ` +
      `per brief path: ${fmt(countTokens(part('refs')) / Math.max(1, BRIEFS))} tokens`,
  );
  console.log(
    `target: Level 1 ≤ ${fmt(LEVEL1_TARGET)} tokens: ${fmt(l1Total)} (${(l1Total / LEVEL1_TARGET).toFixed(2)} of it) — ` +
      `${l1Total <= LEVEL1_TARGET ? 'met' : 'not met'}\n`,
  );

  // --- time: 1,000 skills --------------------------------------------------------------------
  const big = writeSkills(root, TIMING_SKILLS);
  const idxCfg = config(root, 'skills: { say: [] }\n');
  const allCfg = config(root, null);
  const discoverMs = await timeIt(() =>
    indexSkills({
      snapshot: big,
      maxSkillFileBytes: 1 << 20,
      skillsDir: VIEW.skillsDir,
      log: silentLogger(),
    }),
  );
  const buildIndexMs = await timeIt(() => build(idxCfg, big));
  const buildAllMs = await timeIt(() => build(allCfg, big));
  const dIndex = await build(idxCfg, big);
  const dAll = await build(allCfg, big);
  const renderIndexMs = await timeIt(() => dIndex.render(new Set()));
  const renderAllMs = await timeIt(() => dAll.render(new Set()));
  console.log(`## ${fmt(TIMING_SKILLS)} skills: time (median of ${ITERATIONS}, ms)\n`);
  console.log('| step | skills index (Level 1) | say everything (baseline) | ratio |');
  console.log('|---|---:|---:|---:|');
  console.log(`| discover + validate (indexSkills) | ${fmt(discoverMs)} | – | – |`);
  console.log(
    `| buildDisclosure (discover, boot, read said files) | ${fmt(buildIndexMs)} | ${fmt(buildAllMs)} | ${(buildIndexMs / buildAllMs).toFixed(2)} |`,
  );
  console.log(
    `| render() | ${fmt(renderIndexMs)} | ${fmt(renderAllMs)} | ${(renderIndexMs / renderAllMs).toFixed(2)} |`,
  );
  const idxText = dIndex.render(new Set()).text;
  console.log(
    `\nrendered Level-1 text for ${fmt(TIMING_SKILLS)} skills: ${fmt(idxText.length)} chars, ${fmt(countTokens(idxText))} o200k tokens`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}

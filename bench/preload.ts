// Preload benchmark: triage outputs of 100 KB, 10 MB and 100 MB of pod-log-like text, prepared into a
// budgeted prompt two ways, each case in its own child process so peak RSS is per case:
//   ours  - buildContext (reuse mode): bounded head/tail capture, lazy line counting, exact final check
//   naive - read everything, strip ANSI, tokenize everything, cut the token array to what fits
// Run: npx tsx bench/preload.ts   (BENCH_SIZES=100KB,10MB overrides the sizes; BENCH_AGENT=claude)
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { countTokens, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { RunBundle } from '../src/workspace/bundle.js';
import { configSchema, type AgentName } from '../src/config/schema.js';
import { stripAnsi } from '../src/context/capture.js';
import { buildContext } from '../src/context/build.js';
import { assemblePrompt, substituteReportPath } from '../src/context/prompt.js';
import {
  escapeTextContent,
  renderIncident,
  renderPermissions,
  renderTriage,
} from '../src/context/sections.js';
import { scaleTokens } from '../src/context/tokens.js';
import type { AgentView } from '../src/context/types.js';
import { silentLogger } from '../src/log/logger.js';
import { Redactor } from '../src/log/redact.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const AGENT = (process.env.BENCH_AGENT ?? 'claude') as AgentName;
const view: AgentView = {
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
const config = configSchema.parse({
  system_prompt_file: path.join(ROOT, 'configs/triage-system-prompt.md'),
  user_prompt_file: path.join(ROOT, 'configs/user-prompt.md'),
  personas_dir: path.join(ROOT, 'configs/personas'),
  briefs_dir: path.join(ROOT, 'configs/briefs'),
  boot_file: path.join(ROOT, 'configs/boot.yml'),
  skills: { sources: [] },
});
const incidentObj = {
  incidentId: 'bench-1',
  cluster: 'prod',
  namespace: 'shop',
  resource: { kind: 'Pod', name: 'api-1', namespace: 'shop' },
  faultType: 'CrashLoop',
  severity: 'high',
  timestamp: '2026-11-22T02:00:00Z',
};
const incidentText = JSON.stringify(incidentObj, null, 2);
/** The tokenizer called directly (the reference count; these texts have no pathological runs). */
const o200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const permissionsText =
  '{"cluster_name":"prod","can_get_pods":true,"can_get_logs":true,"can_get_events":true}';

function parseSize(s: string): number {
  const m = /^(\d+)(KB|MB)$/i.exec(s.trim());
  if (!m?.[1] || !m[2]) throw new Error(`BENCH_SIZES entry ${JSON.stringify(s)} is not like 100KB or 10MB`);
  return Number(m[1]) * (m[2].toUpperCase() === 'KB' ? 1000 : 1_000_000);
}

/** Deterministic pod-log-like lines (with some ANSI colour), exactly `bytes` long. */
async function generate(file: string, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const levels = ['INFO', 'WARN', '\u001b[31mERROR\u001b[0m', 'DEBUG'];
  let written = 0;
  let i = 0;
  let chunk = '';
  while (written < bytes) {
    const r = rnd();
    const line = `2026-11-22T02:${String(Math.floor(i / 60000) % 60).padStart(2, '0')}:${String(Math.floor(i / 1000) % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z pod/api-${(r % 9973).toString(36)}-${(r >> 8) % 97} ${levels[r % 4]} msg="dial tcp 10.${r % 255}.${(r >> 4) % 255}.${(r >> 12) % 255}:5432: connect: connection refused" attempt=${i} trace=${((r * 2654435761) % 2 ** 32).toString(16)}\n`;
    const take = line.length <= bytes - written ? line : line.slice(0, bytes - written);
    chunk += take;
    written += take.length;
    i += 1;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  out.write(chunk);
  await new Promise<void>((r) => out.end(() => r()));
}

async function ours(file: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-ours-'));
  try {
    const started = performance.now();
    const bundle = await RunBundle.create(dir, 'bench', new Redactor());
    const out = await buildContext({
      config,
      workspace: { dir, name: 'bench', incident: incidentObj, incidentText, permissionsText },
      agent: AGENT,
      placement: AGENT === 'claude' ? 'system' : 'user',
      view,
      bundle,
      skills: { sources: [], unavailable: [], release: () => undefined },
      log: silentLogger(),
      triage: { mode: 'reuse', logPath: file },
    });
    const wallMs = performance.now() - started;
    return {
      wallMs,
      o200k: o200k(out.prompt.system) + o200k(out.prompt.user),
      budgeted: out.context.totalTokens,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function naive(file: string) {
  const started = performance.now();
  const factor = config.context.safety_factor[AGENT] ?? 1;
  const count = (text: string) => scaleTokens(o200k(text), factor);
  const limit = config.context.budget.truncate;
  const [sys, user] = await Promise.all([
    readFile(config.system_prompt_file, 'utf8'),
    readFile(config.user_prompt_file, 'utf8'),
  ]);
  const build = (triage: string) =>
    assemblePrompt({
      systemPrompt: substituteReportPath(sys, view.reportPath),
      disclosure: '',
      runPaths: '',
      preloaded: [
        renderIncident(incidentText),
        renderPermissions(permissionsText),
        renderTriage(undefined, triage),
      ].join('\n\n'),
      userPrompt: substituteReportPath(user, view.reportPath),
      placement: AGENT === 'claude' ? 'system' : 'user',
    });
  const text = escapeTextContent(stripAnsi(await readFile(file, 'utf8')));
  const tokens = encode(text, { disallowedSpecial: new Set() });
  const empty = build('');
  const room = Math.floor((limit - count(empty.system) - count(empty.user)) / factor);
  const prompt = build(decode(tokens.slice(0, Math.max(0, room))));
  const wallMs = performance.now() - started;
  return {
    wallMs,
    o200k: o200k(prompt.system) + o200k(prompt.user),
    budgeted: count(prompt.system) + count(prompt.user),
  };
}

async function child(kind: string, file: string) {
  const result = kind === 'ours' ? await ours(file) : await naive(file);
  process.stdout.write(JSON.stringify({ ...result, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
}

async function main() {
  const sizes = (process.env.BENCH_SIZES ?? '100KB,10MB,100MB').split(',').map((s) => s.trim());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-preload-'));
  const self = fileURLToPath(import.meta.url);
  const rows: string[] = [];
  try {
    for (const size of sizes) {
      const file = path.join(dir, `${size}.log`);
      await generate(file, parseSize(size));
      const run = (kind: string) =>
        JSON.parse(
          execFileSync(process.execPath, ['--import', 'tsx', self, '--child', kind, file], {
            cwd: ROOT,
            maxBuffer: 1 << 20,
          }).toString(),
        ) as { wallMs: number; maxRssMb: number; o200k: number; budgeted: number };
      const o = run('ours');
      const n = run('naive');
      const limit = config.context.budget.truncate;
      rows.push(
        `| ${size} | ${o.wallMs.toFixed(0)} | ${n.wallMs.toFixed(0)} | ${(n.wallMs / o.wallMs).toFixed(1)}× | ${o.maxRssMb.toFixed(0)} | ${n.maxRssMb.toFixed(0)} | ${(n.maxRssMb / o.maxRssMb).toFixed(1)}× | ${o.o200k} / ${o.budgeted} ${o.budgeted <= limit ? '≤' : '>'} ${limit} | ${n.o200k} / ${n.budgeted} ${n.budgeted <= limit ? '≤' : '>'} ${limit} |`,
      );
      await rm(file, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      `Preload benchmark (agent ${AGENT}, safety factor ${config.context.safety_factor[AGENT]}, budget ${config.context.budget.truncate}, node ${process.version}, ${os.cpus().length} CPUs)`,
      '',
      '| triage output | ours ms | naive ms | naive/ours | ours peak RSS MB | naive peak RSS MB | naive/ours | ours o200k / budgeted | naive o200k / budgeted |',
      '|---|---:|---:|---:|---:|---:|---:|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

if (process.argv[2] === '--child') await child(process.argv[3] ?? '', process.argv[4] ?? '');
else await main();

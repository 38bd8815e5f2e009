// What an investigation costs in tokens, per agent CLI: the real Claude Code, Codex and Gemini CLIs
// run a shipped eval case through `triage-runner eval` (the daemon's own pipeline: context, prompt,
// adapter, model gateway) against scripted stand-in models (test/support/providers/) that play the
// case's investigation cut to five model turns and report every request counted in o200k tokens, with
// a provider's prompt cache modelled as a prefix cache shared by the runs. Per CLI:
//   - the first model request in o200k tokens (the whole request body, as the stand-in received it),
//     and the tools it offers with the o200k tokens of each definition;
//   - the run's total (input + output over its model calls, as the gateway recorded them in
//     result.json) and its cache-read share;
//   - the first request of a second incident (another case, run right after): how much of it the
//     cache serves, since what is the same for every incident comes first.
// The ratio column compares with the figures of the code before the token work (bench/cli-tokens.before.json:
// this bench, with these stand-ins, run on that code with --record); token counts do not depend on the
// host's load, only on the CLIs' versions and the prompt (a few tokens move with temporary paths).
//   npx tsx bench/cli-tokens.ts [--record FILE]        (BENCH_CASES=a,b picks the two cases)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cliBinDir, type CliName } from '../test/support/agent-clis.js';
import { startScriptedModel } from '../test/support/providers/scripted-anthropic.js';
import { startScriptedGeminiModel } from '../test/support/providers/scripted-gemini.js';
import { startScriptedOpenAI } from '../test/support/providers/scripted-openai.js';
import { limitTurns, loadScripts, type Script } from '../test/support/providers/scripted.js';
import type { FakeProvider, RecordedRequest } from '../test/support/providers/server.js';
import { o200k, prefixCacheUsage } from '../test/support/providers/usage-model.js';
import { printTable } from './table.js';

const REPO = path.resolve(import.meta.dirname, '..');
const SUITE = path.join(REPO, 'examples', 'evals');
const CONFIG = path.join(REPO, 'test', 'fixtures', 'evals', 'offline.yaml');
const BEFORE = path.join(import.meta.dirname, 'cli-tokens.before.json');
const TURNS = 5;
const CASES = (process.env.BENCH_CASES ?? 'crashloop-bad-config,oomkilled-low-limit').split(',');
const MODELS: Record<CliName, string> = { claude: 'sonnet', codex: 'gpt-5-codex', gemini: 'gemini-2.5-pro' };

/** What one CLI's runs measured. */
export interface CliFigures {
  firstCall: number;
  tools: { name: string; tokens: number }[];
  runTotal: number;
  runInput: number;
  runCacheRead: number;
  calls: number;
  /** The second incident's first request: its tokens and how many the modelled cache served. */
  nextFirstCall: number;
  nextFirstCacheRead: number;
}

interface Stand {
  provider: FakeProvider;
  /** The model requests of the conversation (side requests left out). */
  conversation: (requests: RecordedRequest[]) => RecordedRequest[];
  env: Record<string, string>;
}

const parse = (body: string): Record<string, unknown> => {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
};
const pathOf = (r: RecordedRequest) => r.url.split('?')[0] ?? '';

async function standIns(scripts: Map<string, Script>): Promise<Record<CliName, Stand>> {
  const [anthropic, openai, gemini] = await Promise.all([
    startScriptedModel(scripts, 0, prefixCacheUsage()),
    startScriptedOpenAI(scripts, prefixCacheUsage()),
    startScriptedGeminiModel(scripts, prefixCacheUsage()),
  ]);
  return {
    claude: {
      provider: anthropic,
      conversation: (rs) => rs.filter((r) => pathOf(r) === '/v1/messages' && parse(r.body).stream === true),
      env: { ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: 'sk-ant-bench' },
    },
    codex: {
      provider: openai,
      conversation: (rs) => rs.filter((r) => pathOf(r) === '/v1/responses'),
      env: { TRIAGE_RUNNER_PROVIDERS_OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: 'sk-bench' },
    },
    gemini: {
      provider: gemini,
      conversation: (rs) => rs.filter((r) => pathOf(r).endsWith(':streamGenerateContent')),
      env: { TRIAGE_RUNNER_PROVIDERS_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: 'gemini-bench' },
    },
  };
}

/** The tools a request offers, each with the o200k tokens of its definition. */
export function offeredTools(cli: CliName, body: string): { name: string; tokens: number }[] {
  const value = parse(body);
  const tools = Array.isArray(value.tools) ? (value.tools as Record<string, unknown>[]) : [];
  const defs =
    cli === 'gemini'
      ? tools.flatMap((t) =>
          Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Record<string, unknown>[]) : [t],
        )
      : tools;
  return defs.map((t) => ({
    name: typeof t.name === 'string' ? t.name : typeof t.type === 'string' ? t.type : '?',
    tokens: o200k(JSON.stringify(t)),
  }));
}

/** Runs `triage-runner eval <case> --agents <cli>` in its own process; resolves with its result.json. */
async function runEval(
  cli: CliName,
  caseName: string,
  root: string,
  stand: Stand,
): Promise<Record<string, unknown>> {
  const out = path.join(root, `${cli}-${caseName}`);
  const args = [
    '--import',
    'tsx',
    path.join(REPO, 'src', 'cli', 'main.ts'),
    'eval',
    path.join(SUITE, caseName),
  ];
  args.push(
    '--agents',
    cli,
    '--models',
    MODELS[cli],
    '--engine',
    'process',
    '--config',
    CONFIG,
    '--out',
    out,
  );
  const env = {
    PATH: [cliBinDir(), path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: root,
    SKILLS_CACHE_DIR: path.join(root, 'skills'),
    ...stand.env,
  };
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const scorecard = parse(await readFile(path.join(out, 'scorecard.json'), 'utf8').catch(() => '{}'));
  const cell = (scorecard.cells as { runDir?: string }[] | undefined)?.[0];
  if (!cell?.runDir)
    throw new Error(`${cli} on ${caseName}: eval exited ${String(code)} with no run\n${stderr}`);
  const result = parse(await readFile(path.join(cell.runDir, 'result.json'), 'utf8'));
  if (result.status !== 'succeeded') {
    throw new Error(`${cli} on ${caseName}: run ${String(result.status)}: ${String(result.error ?? '')}`);
  }
  return result;
}

async function measure(cli: CliName, root: string, stand: Stand): Promise<CliFigures> {
  const runs: { result: Record<string, unknown>; requests: RecordedRequest[] }[] = [];
  for (const caseName of CASES.slice(0, 2)) {
    const from = stand.provider.requests.length;
    const result = await runEval(cli, caseName, root, stand);
    runs.push({ result, requests: stand.conversation(stand.provider.requests.slice(from)) });
  }
  const [first, next] = runs;
  const firstBody = first?.requests[0]?.body ?? '';
  const gateway = first?.result.gateway as { calls: number; tokens: Record<string, number> } | undefined;
  const nextBody = next?.requests[0]?.body ?? '';
  const nextUsage = await firstCallCacheRead(next?.result);
  return {
    firstCall: o200k(firstBody),
    tools: offeredTools(cli, firstBody),
    runTotal: (gateway?.tokens.input ?? 0) + (gateway?.tokens.output ?? 0),
    runInput: gateway?.tokens.input ?? 0,
    runCacheRead: gateway?.tokens.cacheRead ?? 0,
    calls: gateway?.calls ?? 0,
    nextFirstCall: o200k(nextBody),
    nextFirstCacheRead: nextUsage,
  };
}

/** The cache reads of a run's first model call, from its model-calls.jsonl. */
async function firstCallCacheRead(result: Record<string, unknown> | undefined): Promise<number> {
  const report = result?.report as { path?: string } | undefined;
  const runId = typeof result?.runId === 'string' ? result.runId : '';
  if (!report?.path || !runId) return 0;
  const runDir = path.join(path.dirname(path.dirname(report.path)), '.triage', 'runs', runId);
  const text = await readFile(path.join(runDir, 'model-calls.jsonl'), 'utf8').catch(() => '');
  const first = text.split('\n').find(Boolean);
  return first ? ((parse(first).tokens as { cacheRead?: number } | undefined)?.cacheRead ?? 0) : 0;
}

const fmt = (n: number) => n.toLocaleString('en-US');
const ratio = (now: number, before: number | undefined) =>
  before === undefined || before === 0 ? '' : `${(now / before).toFixed(2)}×`;
const pct = (part: number, whole: number) => (whole === 0 ? '0%' : `${Math.round((part / whole) * 100)}%`);

function print(
  figures: Partial<Record<CliName, CliFigures>>,
  before: Partial<Record<CliName, CliFigures>>,
): void {
  const rows: string[][] = [];
  for (const [cli, f] of Object.entries(figures) as [CliName, CliFigures][]) {
    const b = before[cli];
    rows.push(
      [`${cli}: first request, o200k tokens`, fmt(f.firstCall), ratio(f.firstCall, b?.firstCall)],
      [
        `${cli}: tools offered`,
        `${f.tools.length} (${fmt(f.tools.reduce((s, t) => s + t.tokens, 0))} tokens)`,
        ratio(f.tools.length, b?.tools.length),
      ],
      [
        `${cli}: run of ${TURNS} turns, input + output`,
        `${fmt(f.runTotal)} over ${f.calls} calls`,
        ratio(f.runTotal, b?.runTotal),
      ],
      [
        `${cli}: cache-read share of the run`,
        pct(f.runCacheRead, f.runInput),
        b ? `before ${pct(b.runCacheRead, b.runInput)}` : '',
      ],
      [
        `${cli}: next incident's first request from cache`,
        `${fmt(f.nextFirstCacheRead)} of ${fmt(f.nextFirstCall)} (${pct(f.nextFirstCacheRead, f.nextFirstCall)})`,
        b ? `before ${pct(b.nextFirstCacheRead, b.nextFirstCall)}` : '',
      ],
      [
        `${cli}: next incident's first request, not from cache`,
        fmt(f.nextFirstCall - f.nextFirstCacheRead),
        ratio(f.nextFirstCall - f.nextFirstCacheRead, b ? b.nextFirstCall - b.nextFirstCacheRead : undefined),
      ],
    );
  }
  printTable(
    `Tokens per investigation (${CASES.join(' then ')}, ${TURNS} turns; ratio: now / before the token work)`,
    rows,
  );
  for (const [cli, f] of Object.entries(figures) as [CliName, CliFigures][]) {
    const was = new Map((before[cli]?.tools ?? []).map((t) => [t.name, t.tokens]));
    const names = [...new Set([...f.tools.map((t) => t.name), ...was.keys()])];
    const now = new Map(f.tools.map((t) => [t.name, t.tokens]));
    printTable(
      `${cli}: tools in the first request, o200k tokens each (result: now; ratio column: before)`,
      names.map((n) => [
        n,
        now.has(n) ? fmt(now.get(n) ?? 0) : 'not offered',
        was.has(n) ? fmt(was.get(n) ?? 0) : '—',
      ]),
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { record: { type: 'string' } } });
  const clis = (['claude', 'codex', 'gemini'] as const).filter((c) => existsSync(path.join(cliBinDir(), c)));
  if (clis.length === 0) {
    process.stdout.write(`no agent CLI under ${cliBinDir()}: run bash .ci/install-agent-clis.sh\n`);
    // CI never passes a benchmark it could not run.
    process.exitCode = process.env.CI ? 2 : 0;
    return;
  }
  const scripts = new Map(
    [...(await loadScripts(path.join(REPO, 'test', 'fixtures', 'evals', 'scripted'), SUITE))].map(
      ([id, s]) => [id, limitTurns(s, TURNS)] as const,
    ),
  );
  const stands = await standIns(scripts);
  const root = await mkdtemp(path.join(tmpdir(), 'bench-cli-tokens-'));
  const figures: Partial<Record<CliName, CliFigures>> = {};
  try {
    for (const cli of clis) figures[cli] = await measure(cli, root, stands[cli]);
  } finally {
    await Promise.all(Object.values(stands).map((s) => s.provider.close()));
    await rm(root, { recursive: true, force: true });
  }
  if (values.record) await writeFile(values.record, `${JSON.stringify(figures, null, 2)}\n`);
  const before = existsSync(BEFORE)
    ? (JSON.parse(await readFile(BEFORE, 'utf8')) as Partial<Record<CliName, CliFigures>>)
    : {};
  print(figures, before);
}

await main();

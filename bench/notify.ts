// Results-out costs for one finished incident with a large report (BENCH_NOTIFY_KB, default 200):
// rendering (summary, Slack thread parts, webhook body) against the markdown lexer alone, and the
// outbox writes that make delivery crash-safe against a plain file write. Run: npx tsx bench/notify.ts
import { Lexer } from 'marked';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recordDelivery, saveEntry } from '../src/workspace/outbox.js';
import { threadMessages } from '../src/notify/slack-blocks.js';
import { summarize } from '../src/notify/summary.js';
import { webhookDocument } from '../src/notify/sinks/webhook.js';
import type { OutboxEntry, RenderInput } from '../src/notify/types.js';
import { bigReport } from '../test/support/notify.js';

const KB = Number(process.env.BENCH_NOTIFY_KB ?? 200);
const ROUNDS = 5;

function median(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

async function medianAsync(fn: (i: number) => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await fn(i);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

const report = bigReport(KB * 1024);
const input: RenderInput = {
  workspaceDir: '/incidents/bench',
  folder: 'bench',
  incident: {
    incidentId: 'inc-bench',
    cluster: 'prod',
    namespace: 'payments',
    resource: { kind: 'Deployment', name: 'api' },
    faultType: 'CrashLoop',
    severity: 'critical',
    timestamp: '2026-03-01T10:00:00Z',
  },
  state: { state: 'succeeded', attempts: 1, runs: [] },
  runId: 'run-1',
  report,
  summary: summarize(report),
  trigger: 'finished',
  idempotencyKey: 'inc-bench/run-1.hook',
};

const lex = median(() => void new Lexer({ gfm: true }).lex(report));
const summary = median(() => void summarize(report));
const thread = median(() => void threadMessages(input));
const body = JSON.stringify(webhookDocument(input));
const webhook = median(() => void JSON.stringify(webhookDocument(input)));

const dir = await mkdtemp(path.join(tmpdir(), 'bench-notify-'));
try {
  const plain = await medianAsync((i) => writeFile(path.join(dir, `plain-${i}.json`), body));
  const entry = (i: number): OutboxEntry => ({
    version: 1,
    key: `run-${i}.hook`,
    idempotencyKey: `inc/run-${i}.hook`,
    sink: 'hook',
    type: 'webhook',
    incidentId: 'inc',
    runId: `run-${i}`,
    trigger: 'finished',
    createdAt: new Date().toISOString(),
    status: 'pending',
    attempts: 0,
    steps: [{ id: 'post', status: 'pending' }],
  });
  const record = await medianAsync(
    async (i) => void (await recordDelivery(dir, entry(i), { url: 'u', body })),
  );
  const step = await medianAsync((i) => saveEntry(dir, { ...entry(i), status: 'delivered' }));

  const row = (what: string, ms: number, baseline: string, base: number) =>
    console.log(
      `| ${what} | ${ms.toFixed(1)} ms | ${baseline} ${base.toFixed(1)} ms | ${(ms / base).toFixed(2)}× |`,
    );
  console.log(
    `report: ${(Buffer.byteLength(report) / 1024).toFixed(0)} KiB, ${threadMessages(input).length} Slack thread messages; median of ${ROUNDS}`,
  );
  console.log('| measure | time | baseline (same run) | ratio |');
  console.log('|---|---:|---:|---:|');
  row('summary (hypothesis, confidence, first action)', summary, 'marked lexer alone', lex);
  row('Slack thread parts (mrkdwn, split, packed)', thread, 'marked lexer alone', lex);
  row('webhook body (JSON with report text)', webhook, 'marked lexer alone', lex);
  row('record a delivery (payload + entry, fsync, link)', record, 'plain writeFile of the body', plain);
  row('record a delivered step (atomic rewrite)', step, 'plain writeFile of the body', plain);
} finally {
  await rm(dir, { recursive: true, force: true });
}

// Audit-trail costs: redacting agent output (RedactingLog) and appending hash-chained audit events,
// each against a baseline measured in the same run. Sizes: BENCH_REDACT_MIB (default 16),
// BENCH_AUDIT_EVENTS (default 300), BENCH_AUDIT_BIG (entries already in the log for the long-log row,
// default 100000). Run: npx tsx bench/audit.ts
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RedactingLog } from '../src/workspace/bundle.js';
import { AuditLog, stableStringify, verifyAuditLog } from '../src/audit/log.js';
import { AUDIT_FILE } from '../src/workspace/layout.js';
import { Redactor } from '../src/log/redact.js';

const MIB = Number(process.env.BENCH_REDACT_MIB ?? 16);
const EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 300);
const BIG = Number(process.env.BENCH_AUDIT_BIG ?? 100_000);

/** A valid hash chain of `n` entries, written directly (no fsync per line) to seed a long log. */
async function seedLog(triageDir: string, n: number): Promise<number> {
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');
  const lines: string[] = [];
  let prev = '0'.repeat(64);
  for (let seq = 0; seq < n; seq++) {
    const base = { type: 'queued', incidentId: `inc-${seq % 97}`, seq, ts: new Date().toISOString(), prev };
    const line = JSON.stringify({ ...base, hash: sha(stableStringify(base)) });
    lines.push(line);
    prev = sha(line);
  }
  await mkdir(triageDir, { recursive: true });
  const text = `${lines.join('\n')}\n`;
  await writeFile(path.join(triageDir, AUDIT_FILE), text);
  return Buffer.byteLength(text);
}

/** Realistic agent output: kubectl-ish lines, JSON usage lines, an occasional secret. */
function agentOutput(bytes: number): Buffer[] {
  const lines = [
    'NAME                                  READY   STATUS             RESTARTS   AGE\n',
    'payments-api-7c9d8f6b5d-x2k9q         0/1     CrashLoopBackOff   14         52m\n',
    '{"type":"assistant","usage":{"input_tokens":1234,"output_tokens":56},"text":"checking the pod logs"}\n',
    '2026-11-22T02:00:00Z ERROR could not connect to db: dial tcp 10.0.3.4:5432: connect: connection refused\n',
    'env: ANTHROPIC_API_KEY=anthropic-bench-secret-value-123 Authorization: Bearer abcdefghijklmnopqrstuv\n',
  ];
  const chunks: Buffer[] = [];
  let size = 0;
  let i = 0;
  while (size < bytes) {
    let chunk = '';
    while (chunk.length < 16 * 1024) chunk += lines[i++ % lines.length];
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return chunks;
}

async function time(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const dir = await mkdtemp(path.join(tmpdir(), 'bench-audit-'));
try {
  const chunks = agentOutput(MIB * 1024 * 1024);
  const redactor = new Redactor({
    ANTHROPIC_API_KEY: 'anthropic-bench-secret-value-123',
    CODEX_API_KEY: 'codex-bench-value-456',
  });

  const baselineWrite = await time(async () => {
    const handle = await open(path.join(dir, 'plain.log'), 'w');
    for (const c of chunks) await handle.write(c);
    await handle.close();
  });
  const redactedWrite = await time(async () => {
    const log = new RedactingLog(path.join(dir, 'redacted.log'), redactor, 1 << 30);
    for (const c of chunks) log.write(c);
    await log.close();
  });

  const baselineAppend = await time(async () => {
    for (let i = 0; i < EVENTS; i++) {
      const handle = await open(path.join(dir, 'plain.jsonl'), 'a');
      await handle.write(`${JSON.stringify({ type: 'queued', i, ts: new Date().toISOString() })}\n`);
      await handle.sync();
      await handle.close();
    }
  });
  const audit = new AuditLog({ redactor });
  const chainedAppend = await time(async () => {
    for (let i = 0; i < EVENTS; i++) await audit.append(path.join(dir, 'triage'), { type: 'queued', i });
  });
  const bigBytes = await seedLog(path.join(dir, 'big'), BIG);
  const LONG_EVENTS = Math.min(EVENTS, 100);
  const shortLog = await time(async () => {
    for (let i = 0; i < LONG_EVENTS; i++) await audit.append(path.join(dir, 'short'), { type: 'queued', i });
  });
  const longLog = await time(async () => {
    for (let i = 0; i < LONG_EVENTS; i++) await audit.append(path.join(dir, 'big'), { type: 'queued', i });
  });
  const verify = await time(async () => {
    const result = await verifyAuditLog(path.join(dir, 'triage'));
    if (!result.ok) throw new Error(`bench log did not verify: ${JSON.stringify(result)}`);
  });
  const parseOnly = await time(async () => {
    const text = await readFile(path.join(dir, 'triage', 'audit.jsonl'), 'utf8');
    for (const line of text.split('\n')) if (line) JSON.parse(line);
  });

  const mibps = (ms: number) => (MIB / (ms / 1000)).toFixed(0);
  console.log(`| measure | baseline | audit path | ratio |`);
  console.log(`|---|---:|---:|---:|`);
  console.log(
    `| write ${MIB} MiB agent output (MiB/s): plain file vs RedactingLog | ${mibps(baselineWrite)} | ${mibps(redactedWrite)} | ${(redactedWrite / baselineWrite).toFixed(1)}× slower |`,
  );
  console.log(
    `| append ${EVENTS} events (ms/event): fsync'd appendFile vs AuditLog.append (lock, chain, head) | ${(baselineAppend / EVENTS).toFixed(2)} | ${(chainedAppend / EVENTS).toFixed(2)} | ${(chainedAppend / baselineAppend).toFixed(1)}× |`,
  );
  console.log(
    `| AuditLog.append (ms/event) into an empty log vs a ${BIG}-entry (${(bigBytes / 1024 / 1024).toFixed(0)} MiB) log | ${(shortLog / LONG_EVENTS).toFixed(2)} | ${(longLog / LONG_EVENTS).toFixed(2)} | ${(longLog / shortLog).toFixed(1)}× |`,
  );
  console.log(
    `| read ${EVENTS}-entry log (ms): JSON.parse every line vs verifyAuditLog (re-hash chain) | ${parseOnly.toFixed(1)} | ${verify.toFixed(1)} | ${(verify / parseOnly).toFixed(1)}× |`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}

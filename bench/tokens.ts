// Token counting benchmark: worst-case inputs (a run of one character, 100 KB lines of `=`) and
// ordinary ones (prose, pod logs) at growing sizes, counted two ways in the same run:
//   bounded - countBounded (src/context/token-count.ts): long pre-tokens cut into 256-character pieces
//   direct  - the tokenizer's countTokens on the whole text (the old counter), quadratic in the length
//             of one pre-token; skipped where its predicted time exceeds the cap
// The time per MB of `bounded` stays flat as the size grows (linear); `direct` grows with the size on
// the worst cases. Counts are compared where both finished.
// Run: npx tsx bench/tokens.ts   (BENCH_SIZES=16KB,1MB overrides the sizes; BENCH_CAP_MS=5000 the cap)
import os from 'node:os';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countBounded } from '../src/context/token-count.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const direct = (text: string) => countTokens(text, PLAIN);
const CAP_MS = Number(process.env.BENCH_CAP_MS ?? 5000);

function parseSize(s: string): number {
  const m = /^(\d+)(KB|MB)$/i.exec(s.trim());
  if (!m?.[1] || !m[2]) throw new Error(`BENCH_SIZES entry ${JSON.stringify(s)} is not like 64KB or 1MB`);
  return Number(m[1]) * (m[2].toUpperCase() === 'KB' ? 1000 : 1_000_000);
}

let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
const fill = (bytes: number, next: (i: number) => string) => {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i += 1) {
    const piece = next(i);
    parts.push(piece);
    length += piece.length;
  }
  return parts.join('').slice(0, bytes);
};
const WORDS = [
  'the',
  'pod',
  'restarted',
  'because',
  'its',
  'memory',
  'limit',
  'was',
  'exceeded',
  'node',
  'pressure',
];

const INPUTS: Record<string, (bytes: number) => string> = {
  'run of [': (n) => '['.repeat(n),
  '100 KB lines of =': (n) => fill(n, () => `${'='.repeat(100_000)}\n`),
  prose: (n) => fill(n, (i) => `${WORDS[random() % WORDS.length]}${i % 17 === 16 ? '.\n' : ' '}`),
  'pod logs': (n) =>
    fill(n, (i) => {
      const r = random();
      return `2026-11-22T02:00:${String(i % 60).padStart(2, '0')}Z pod/api-${(r % 9973).toString(36)} ERROR msg="dial tcp 10.${r % 255}.1.2:5432: connect: connection refused" attempt=${i}\n`;
    }),
};

function time<T>(fn: () => T): { ms: number; value: T } {
  const started = performance.now();
  const value = fn();
  return { ms: performance.now() - started, value };
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

function main() {
  const sizes = (process.env.BENCH_SIZES ?? '16KB,64KB,256KB,1MB,4MB').split(',').map(parseSize);
  direct('warm up the tables');
  const rows: string[] = [];
  for (const [name, make] of Object.entries(INPUTS)) {
    let last: { bytes: number; ms: number } | undefined;
    for (const bytes of sizes) {
      const text = make(bytes);
      const ours = time(() => countBounded(text, direct));
      // Quadratic growth from the previous size predicts whether the direct count fits under the cap.
      const predicted = last ? last.ms * (bytes / last.bytes) ** 2 : 0;
      const base = predicted <= CAP_MS ? time(() => direct(text)) : undefined;
      if (base) last = { bytes, ms: base.ms };
      const mb = bytes / 1e6;
      rows.push(
        [
          name,
          `${bytes / 1000} KB`,
          fmt(ours.ms),
          fmt(ours.ms / mb),
          base ? fmt(base.ms) : `skipped (predicted ${fmt(predicted / 1000)} s)`,
          base ? fmt(base.ms / mb) : '',
          base ? `${fmt(base.ms / ours.ms)}×` : '',
          base
            ? `${ours.value} vs ${base.value} (${ours.value >= base.value ? '+' : ''}${fmt(((ours.value - base.value) / base.value) * 100)}%)`
            : String(ours.value),
        ].join(' | '),
      );
    }
  }
  process.stdout.write(
    [
      `Token counting benchmark (node ${process.version}, ${os.cpus().length} CPUs, direct capped at ${CAP_MS} ms predicted)`,
      '',
      '| input | size | bounded ms | bounded ms/MB | direct ms | direct ms/MB | direct/bounded | tokens bounded vs direct |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows.map((r) => `| ${r} |`),
      '',
    ].join('\n'),
  );
}

main();

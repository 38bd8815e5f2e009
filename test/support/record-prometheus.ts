// Records an eval case's Prometheus answers from a real Prometheus (Debian's package):
//   npx tsx test/support/record-prometheus.ts examples/evals/<case> [--check]
// The case's cluster/prometheus-series.yaml holds the raw series (promtool's expanding notation, one
// value per interval, the last at `end`) and the promql calls to record. The series are backfilled
// into a fresh TSDB with `promtool tsdb create-blocks-from openmetrics`, Prometheus serves it, and
// each call is made as the run's broker makes it (the same parser, URL and client) at `end`; the
// answers are written to cluster/prometheus.yaml. With --check nothing is written: the command fails
// when the file differs from what the recording gives (what test/integration/eval/prometheus-cases
// runs).
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { splitCommandLine } from '../../src/kubectl/parse.js';
import { promGet } from '../../src/prometheus/client.js';
import { parsePromql } from '../../src/prometheus/command.js';
import { parsePromDuration } from '../../src/prometheus/duration.js';
import { upstreamRequest } from '../../src/prometheus/upstream.js';
import {
  fileRecording,
  PROMETHEUS_FILE,
  prometheusFileText,
  recordingOfExchange,
} from '../../src/eval/prometheus/recordings.js';
import { freePort } from './net.js';

export const SERIES_FILE = 'prometheus-series.yaml';

interface SeriesSpec {
  source: string;
  end: string;
  interval: string;
  series: { series: string; values: string }[];
  record: string[];
}

/** promtool's expanding notation: `a`, `a+bxn`, `a-bxn`, `axn`, `_`, `_xn`; undefined is a missing sample. */
export function expandValues(text: string): (number | undefined)[] {
  const out: (number | undefined)[] = [];
  for (const token of text.trim().split(/\s+/)) {
    const gap = /^_(?:x(\d+))?$/.exec(token);
    if (gap) {
      for (let i = 0; i < Number(gap[1] ?? 1); i++) out.push(undefined);
      continue;
    }
    const m = /^(-?[\d.e+]+?)(?:([+-])([\d.e+]+))?x(\d+)$/.exec(token);
    if (!m) {
      const v = Number(token);
      if (Number.isNaN(v)) throw new Error(`${token} is not in promtool's expanding notation`);
      out.push(v);
      continue;
    }
    const start = Number(m[1]);
    const step = m[2] ? Number(`${m[2]}${m[3]}`) : 0;
    for (let i = 0; i <= Number(m[4]); i++) out.push(Math.round((start + i * step) * 1e6) / 1e6);
  }
  return out;
}

/** The series as OpenMetrics text with a timestamp per sample, the last at `endS`. */
function openMetrics(spec: SeriesSpec, endS: number, intervalS: number): string {
  const families = new Map<string, string[]>();
  for (const { series, values } of spec.series) {
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(series)?.[0] ?? '';
    const samples = expandValues(values);
    const lines = families.get(name) ?? [];
    samples.forEach((v, i) => {
      if (v !== undefined) lines.push(`${series} ${v} ${endS - (samples.length - 1 - i) * intervalS}`);
    });
    families.set(name, lines);
  }
  const text = [...families.entries()].flatMap(([name, lines]) => [`# TYPE ${name} unknown`, ...lines]);
  return `${text.join('\n')}\n# EOF\n`;
}

const run = promisify(execFile);

/** Prometheus serving `tsdb` on a free loopback port, once it answers /-/ready (within 30 s). */
async function servePrometheus(binary: string, dir: string): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
      '--storage.tsdb.retention.time=100y',
      '--log.level=warn',
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  // Outside vitest (this is also a command): a plain poll with a deadline.
  while (
    !(await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`prometheus did not become ready on ${url} within 30000 ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

/** The case's prometheus.yaml text, recorded now from a real Prometheus. */
export async function recordCase(
  caseDir: string,
  binaries = { prometheus: 'prometheus', promtool: 'promtool' },
): Promise<string> {
  const spec = parse(await readFile(path.join(caseDir, 'cluster', SERIES_FILE), 'utf8')) as SeriesSpec;
  const endMs = Date.parse(spec.end);
  const intervalS = (parsePromDuration(spec.interval) ?? 30_000) / 1000;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tr-record-prom-'));
  try {
    await writeFile(path.join(dir, 'series.om'), openMetrics(spec, endMs / 1000, intervalS));
    await run(binaries.promtool, [
      'tsdb',
      'create-blocks-from',
      'openmetrics',
      path.join(dir, 'series.om'),
      path.join(dir, 'tsdb'),
    ]);
    await writeFile(path.join(dir, 'prometheus.yml'), 'global: {}\n');
    const prometheus = await servePrometheus(binaries.prometheus, dir);
    try {
      const endpoint = { cluster: 'record', url: new URL(prometheus.url), tls: {} };
      const recordings = [];
      for (const line of spec.record) {
        const words = splitCommandLine(line) ?? [];
        const parsed = parsePromql(words[0] === 'promql' ? words.slice(1) : words);
        if (!parsed.ok || 'help' in parsed) throw new Error(`record: ${line} is not a promql call`);
        const request = upstreamRequest(parsed.command, endMs, 30_000);
        const result = await promGet(endpoint, request, { timeoutMs: 30_000, maxBytes: 8 << 20 });
        if (!result.ok) throw new Error(`record: ${line}: ${result.message}`);
        const recording = recordingOfExchange({ ...request, answer: result.envelope });
        if (!recording)
          throw new Error(`record: ${line}: Prometheus answered ${result.body.toString('utf8')}`);
        recordings.push(fileRecording(recording));
      }
      return prometheusFileText({ source: spec.source, recordings });
    } finally {
      prometheus.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [caseDir, flag] = process.argv.slice(2);
  if (!caseDir) throw new Error('usage: record-prometheus.ts <case folder> [--check]');
  const text = await recordCase(path.resolve(caseDir));
  const file = path.join(path.resolve(caseDir), 'cluster', PROMETHEUS_FILE);
  if (flag === '--check') {
    const current = await readFile(file, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write(`${file} differs from what the series record; run without --check to write it\n`);
      process.exitCode = 1;
    }
  } else {
    await writeFile(file, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}

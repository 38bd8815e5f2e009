// What redacting a recorded cluster output costs (cluster-outputs.jsonl, reports, notifications): the
// real kubectl's output of ordinary pods (BENCH_REDACT_KIB, default 256 KiB, YAML, JSON and describe),
// of Secrets, and one agent stream-json line holding the YAML as a tool result; each against
// JSON-encoding the same text, which recording it costs anyway. A fresh Redactor per round (it
// remembers the texts it has seen); the fastest of BENCH_ROUNDS rounds (default 25), the round least
// disturbed by whatever else the machine runs. Run: npx tsx bench/redact.ts
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redactor } from '../src/log/redact.js';
import {
  clusterObjects,
  dbSecret,
  KUBECTL,
  podsForBytes,
  standInCluster,
} from '../test/support/kube-objects.js';
import { printTable } from './table.js';

const KIB = Number(process.env.BENCH_REDACT_KIB ?? 256);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);

function fastest(fn: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

try {
  execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
} catch {
  console.error(`bench/redact.ts needs the real kubectl (${KUBECTL}): run .ci/install-test-tools.sh`);
  process.exit(1);
}

const dir = await mkdtemp(path.join(tmpdir(), 'bench-redact-'));
const secrets = Array.from({ length: Math.ceil((KIB * 1024) / 1500) }, (_, i) => {
  const s = dbSecret() as { metadata: { name: string } };
  return { ...s, metadata: { ...s.metadata, name: `payments-db-${i}` } };
});
const cluster = await standInCluster(dir, { ...clusterObjects(podsForBytes(KIB * 1024)), secrets });
try {
  const texts: [string, string][] = [
    ['get pods -o yaml', await cluster.kubectl(['get', 'pods', '-o', 'yaml'])],
    ['get pods -o json', await cluster.kubectl(['get', 'pods', '-o', 'json'])],
    ['describe pods', await cluster.kubectl(['describe', 'pods'])],
    ['get secrets -o yaml', await cluster.kubectl(['get', 'secrets', '-o', 'yaml'])],
  ];
  const yaml = texts[0]?.[1] ?? '';
  const toolResult = JSON.stringify({
    type: 'user',
    message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: yaml }] },
  });
  texts.push(['stream-json line (pods YAML inside)', toolResult]);
  const rows = texts.map(([name, text]) => {
    const encode = fastest(() => JSON.stringify(text));
    const redact = fastest(() =>
      new Redactor({ ANTHROPIC_API_KEY: 'sk-ant-bench-configured-0001' }).redact(text),
    );
    return [
      `${name}, ${(text.length / 1024).toFixed(0)} KiB: JSON.stringify vs Redactor.redact (ms)`,
      `${encode.toFixed(2)} vs ${redact.toFixed(2)}`,
      `${(redact / encode).toFixed(1)}×`,
    ];
  });
  printTable(`Redacting recorded outputs (fastest of ${ROUNDS} rounds)`, rows);
} finally {
  await cluster.close();
  await rm(dir, { recursive: true, force: true });
}

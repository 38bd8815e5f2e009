import { readFileSync } from 'node:fs';
import path from 'node:path';
import { redactArgv } from '../../kubectl/flags.js';
import { parseKubectl } from '../../kubectl/parse.js';
import { classifyKubectl } from '../../kubectl/policy/classify.js';
import { answer } from './answer.js';
import { CLUSTER_FILE, FROZEN_CLUSTER_VERSION, type FrozenCluster } from './cluster.js';
import { appendCall, callsFile } from './log.js';
import type { ShimAnswer } from './output.js';

// The frozen-cluster `kubectl`: run by the generated `kubectl` wrapper in the shim folder
// (TRIAGE_KUBECTL_SHIM_DIR), answers one call from cluster.json and records it in the run bundle.
// Imports only node builtins and src/kubectl, so the compiled files can be copied next to it.

function loadCluster(dir: string): FrozenCluster | string {
  const file = path.join(dir, CLUSTER_FILE);
  try {
    const cluster = JSON.parse(readFileSync(file, 'utf8')) as FrozenCluster;
    if (cluster.version !== FROZEN_CLUSTER_VERSION) {
      return `${file} has version ${String(cluster.version)}, expected ${FROZEN_CLUSTER_VERSION}: rebuild the shim with this triage-runner`;
    }
    return cluster;
  } catch (err) {
    return `cannot read ${file}: ${(err as Error).message}`;
  }
}

export function main(argv: string[], env: Record<string, string | undefined>): number {
  const started = performance.now();
  const dir = path.resolve(env.TRIAGE_KUBECTL_SHIM_DIR ?? path.dirname(process.argv[1] ?? '.'));
  const cluster = loadCluster(dir);
  const cmd = classifyKubectl(argv);
  let result: ShimAnswer;
  if (typeof cluster === 'string') {
    result = {
      stdout: '',
      stderr: `error: frozen-cluster kubectl: ${cluster}\n`,
      exitCode: 1,
      answeredFrom: 'unsupported',
    };
  } else {
    try {
      result = answer(cmd, cluster);
    } catch (err) {
      // A bug in the shim must not look like a cluster answer.
      result = {
        stdout: '',
        stderr: `error: frozen-cluster kubectl failed on this command: ${(err as Error).stack ?? String(err)}\n`,
        exitCode: 1,
        answeredFrom: 'unsupported',
      };
    }
  }
  process.stdout.write(result.stdout);
  const logged = parseKubectl(redactArgv(argv));
  const file = callsFile(env, dir);
  const problem = appendCall(file, {
    at: new Date().toISOString(),
    stage: env.TRIAGE_STAGE === 'triage' ? 'triage' : 'agent',
    argv: redactArgv(argv),
    normalized: logged.normalized,
    category: cmd.category,
    exitCode: result.exitCode,
    answeredFrom: result.answeredFrom,
    ...(result.violation ? { violation: result.violation } : {}),
    durationMs: Math.round(performance.now() - started),
    stdoutBytes: Buffer.byteLength(result.stdout),
    stderrBytes: Buffer.byteLength(result.stderr),
  });
  process.stderr.write(result.stderr);
  if (problem)
    process.stderr.write(`warning: this kubectl call could not be recorded in ${file}: ${problem}\n`);
  return result.exitCode;
}

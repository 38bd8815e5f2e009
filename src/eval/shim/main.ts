import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { redactArgv } from '../../kubectl/flags.js';
import { parseKubectl } from '../../kubectl/parse.js';
import { classifyKubectl } from '../../kubectl/policy/classify.js';
import { answer } from './answer.js';
import { CLUSTER_FILE, FROZEN_CLUSTER_VERSION, OTHER_CLUSTERS_DIR, type FrozenCluster } from './cluster.js';
import { appendCall, callsFile, WRONG_CLUSTER } from './log.js';
import type { ShimAnswer } from './output.js';

// The frozen-cluster `kubectl`: run by the generated `kubectl` wrapper in the shim folder
// (TRIAGE_KUBECTL_SHIM_DIR), answers one call from cluster.json and records it in the run bundle.
// Imports only node builtins and src/kubectl, so the compiled files can be copied next to it.

/**
 * The context kubectl would use: --context, else the first current-context in the KUBECONFIG files (the
 * daemon lists its context file first). Read by line: the shim has no YAML parser.
 */
function contextInEffect(argv: string[], env: Record<string, string | undefined>): string | undefined {
  const flag = argv.findIndex((a) => a === '--context' || a.startsWith('--context='));
  if (flag >= 0) return argv[flag]?.includes('=') ? argv[flag]?.split('=')[1] : argv[flag + 1];
  for (const file of (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const m = /^current-context:[ \t]*("?)([^"\n]*)\1[ \t]*$/m.exec(text);
    if (m?.[2]) return m[2].trim();
  }
  return undefined;
}

/** Which frozen cluster answers: another of the case's when the context names it, else the incident's. */
function clusterFile(dir: string, context: string | undefined): { file: string; other?: string } {
  if (context && /^[\w.-]+$/.test(context)) {
    const other = path.join(dir, OTHER_CLUSTERS_DIR, `${context}.json`);
    if (existsSync(other)) return { file: other, other: context };
  }
  return { file: path.join(dir, CLUSTER_FILE) };
}

function loadCluster(file: string): FrozenCluster | string {
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
  const chosen = clusterFile(dir, contextInEffect(argv, env));
  const cluster = loadCluster(chosen.file);
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
      // No cluster answers; a call that breaks the read-only rule is still one.
      if (cluster.unreachable) {
        result = {
          stdout: '',
          stderr: `${cluster.unreachable}\n`,
          exitCode: 1,
          answeredFrom: 'unreachable',
          ...(result.violation ? { violation: result.violation } : {}),
        };
      }
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
    ...(result.violation
      ? { violation: result.violation }
      : chosen.other
        ? {
            violation: {
              category: WRONG_CLUSTER,
              reason: `answered by the case's frozen cluster ${chosen.other}, not the incident's`,
            },
          }
        : {}),
    ...(chosen.other ? { cluster: chosen.other } : {}),
    durationMs: Math.round(performance.now() - started),
    stdoutBytes: Buffer.byteLength(result.stdout),
    stderrBytes: Buffer.byteLength(result.stderr),
  });
  process.stderr.write(result.stderr);
  if (problem)
    process.stderr.write(`warning: this kubectl call could not be recorded in ${file}: ${problem}\n`);
  return result.exitCode;
}

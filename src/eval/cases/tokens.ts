import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from '../../shared/yaml.js';
import { z } from '../../shared/zod.js';
import { classifyKubectl } from '../../kubectl/policy/classify.js';
import { answer } from '../shim/answer.js';
import type { FrozenCluster } from '../shim/cluster.js';
import type { KubectlCallRecord } from '../shim/log.js';
import { CLUSTER_DIR } from './compile.js';
import { EvalUsageError } from './load.js';

// Planted tokens: unique strings a frozen cluster's recordings hold and nothing else the agent is given
// (not the incident, its permissions or the answer key), listed in `cluster/tokens.yaml`. Only a call
// to the frozen cluster can return one, so a report that quotes a token no call of its run returned
// got it some other way (the shim's own file, an edited call log) — what it quotes was not returned to
// it by kubectl. The list sits beside the recordings and the shim never reads it.

export const TOKENS_FILE = 'tokens.yaml';
/** Shorter strings could be guessed or occur by chance. */
export const MIN_TOKEN_CHARS = 16;

const tokensSchema = z.strictObject({
  tokens: z.array(
    z.strictObject({
      token: z.string().min(MIN_TOKEN_CHARS),
      /** The recording that holds it, relative to cluster/ (for people; the test checks it). */
      in: z.string().min(1),
    }),
  ),
});
export type PlantedToken = z.infer<typeof tokensSchema>['tokens'][number];

/** A case's planted tokens ([] when it has no tokens.yaml); a malformed file is a usage error. */
export async function readPlantedTokens(caseDir: string): Promise<PlantedToken[]> {
  const file = path.join(caseDir, CLUSTER_DIR, TOKENS_FILE);
  const info = await lstat(file).catch(() => undefined);
  if (!info) return [];
  if (!info.isFile() || info.size > 256 * 1024)
    throw new EvalUsageError(`${file} is not a regular file under 256 KiB`);
  const doc = parseDocument(await readFile(file, 'utf8'));
  const parsed = tokensSchema.safeParse(doc.errors.length > 0 ? undefined : doc.toJS());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new EvalUsageError(
      `${file} is not a token list ({tokens: [{token, in}]}, each token at least ${MIN_TOKEN_CHARS} characters): ${problems.join('; ')}`,
    );
  }
  return parsed.data.tokens;
}

/**
 * What the run's calls to the incident's frozen cluster returned: each recorded call answered again
 * (the frozen cluster answers the same call the same way), stdout and stderr.
 */
export function returnedText(calls: readonly KubectlCallRecord[], cluster: FrozenCluster): string {
  if (cluster.unreachable) return '';
  const seen = new Set<string>();
  const out: string[] = [];
  for (const call of calls) {
    if (call.cluster !== undefined || call.violation) continue;
    const key = call.argv.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    const answered = answer(classifyKubectl(call.argv), cluster);
    out.push(answered.stdout, answered.stderr);
  }
  return out.join('\n');
}

import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from '../../shared/yaml.js';
import { INCIDENT_FILE } from '../../workspace/layout.js';
import { CLUSTER_DIR } from './compile.js';
import { expectedSchema, type Expected } from './expected.js';

// Finding and reading eval cases: a case is a folder with incident.json, cluster/ and expected.yaml;
// a suite is a folder of cases. Problems are collected per file with their path.

export const EXPECTED_FILE = 'expected.yaml';
const MAX_EXPECTED_BYTES = 256 * 1024;

export interface EvalCase {
  /** The folder name, used in scorecards. */
  name: string;
  dir: string;
  expected: Expected;
}

/** A suite or case the user named that cannot be used: the CLI maps it to exit 2. */
export class EvalUsageError extends Error {
  override name = 'EvalUsageError';
}

const isFile = (p: string) =>
  lstat(p).then(
    (s) => s.isFile(),
    () => false,
  );

const isCase = async (dir: string) =>
  (await isFile(path.join(dir, EXPECTED_FILE))) && (await isFile(path.join(dir, INCIDENT_FILE)));

/** The case folders of a suite (sorted), or the one case the path names. */
export async function discoverCases(input: string): Promise<string[]> {
  const dir = path.resolve(input);
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory())
    throw new EvalUsageError(`${dir} is not a folder; give an eval case or a folder of cases`);
  if (await isCase(dir)) return [dir];
  const entries = await readdir(dir, { withFileTypes: true });
  const cases: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    if (await isCase(path.join(dir, e.name))) cases.push(path.join(dir, e.name));
  }
  if (cases.length === 0) {
    throw new EvalUsageError(
      `${dir} holds no eval case: a case is a folder with ${INCIDENT_FILE}, ${EXPECTED_FILE} and ${CLUSTER_DIR}/ (see examples/evals)`,
    );
  }
  return cases;
}

/** Reads and validates a case's expected.yaml; every problem is listed with its path. */
export async function loadCase(dir: string): Promise<EvalCase> {
  const file = path.join(dir, EXPECTED_FILE);
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile()) throw new EvalUsageError(`${file} is missing or not a regular file`);
  if (info.size > MAX_EXPECTED_BYTES) {
    throw new EvalUsageError(
      `${file} has ${info.size} bytes, more than the ${MAX_EXPECTED_BYTES} an answer key needs`,
    );
  }
  const doc = parseDocument(await readFile(file, 'utf8'));
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    throw new EvalUsageError(`${file} is not valid YAML: ${e?.message ?? 'parse error'}`);
  }
  const parsed = expectedSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new EvalUsageError(`${file} has ${problems.length} problem(s):\n${problems.join('\n')}`);
  }
  return { name: path.basename(dir), dir, expected: parsed.data };
}

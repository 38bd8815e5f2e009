import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { base64Forms } from '../../src/log/redact.js';

// Looks for known secret values in every file under a folder: the check behind "secrets never land in
// an audit file" in the tests (run bundles, replay and compare output). Findings name the secret, never
// its value.

export interface Finding {
  /** Path relative to the scanned folder. */
  file: string;
  /** The secret's name (the key of the `secrets` record). */
  secret: string;
  /** 1-based line of the first occurrence. */
  line: number;
  /** How it appeared: verbatim, JSON-escaped or base64-encoded. */
  form: 'raw' | 'json' | 'base64';
}

/** Every file (symlinks not followed) under `dir` that contains one of `secrets`' values. */
export async function scanForSecrets(dir: string, secrets: Record<string, string>): Promise<Finding[]> {
  const needles = secretForms(secrets);
  const findings: Finding[] = [];
  for (const file of await listFiles(dir)) {
    const bytes = await readFile(file);
    for (const needle of needles) {
      const at = bytes.indexOf(needle.bytes);
      if (at < 0) continue;
      findings.push({
        file: path.relative(dir, file),
        secret: needle.name,
        line: countNewlines(bytes, at) + 1,
        form: needle.form,
      });
    }
  }
  return findings;
}

/** Every regular file under `dir`, sorted, including dot-files; a missing folder has none. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (current: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(full);
      else if (!entry.isSymbolicLink() && (await lstat(full)).isFile()) out.push(full);
    }
  };
  await walk(dir);
  return out.sort();
}

function secretForms(
  secrets: Record<string, string>,
): { name: string; form: Finding['form']; bytes: Buffer }[] {
  const out: { name: string; form: Finding['form']; bytes: Buffer }[] = [];
  for (const [name, value] of Object.entries(secrets)) {
    if (!value) continue;
    out.push({ name, form: 'raw', bytes: Buffer.from(value) });
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) out.push({ name, form: 'json', bytes: Buffer.from(escaped) });
    // At each of the three byte alignments, so that a value inside a larger base64 blob is found too.
    for (const form of base64Forms(value)) out.push({ name, form: 'base64', bytes: Buffer.from(form) });
  }
  return out;
}

function countNewlines(bytes: Buffer, end: number): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0 && i < end; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

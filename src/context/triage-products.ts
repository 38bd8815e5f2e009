import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { RunBundle } from '../workspace/bundle.js';
import { RUN_FILES } from '../workspace/layout.js';
import { errorMessage } from '../util/errors.js';
import { readOwnFile } from '../util/safe-path.js';
import type { Logger } from '../log/logger.js';

// What the triage script leaves in its output folder besides its stdout: the k8s4agents script writes
// `triage-report.md`, `triage-summary.txt`, a few `*.txt` and `evidence/*.{txt,json}` there. The report
// joins the prompt's triage section; every product is listed by the path the agent reads it at. The
// top-level text files name the host folder the script was given, so they are rewritten to the agent's
// paths; evidence files are kubectl output and are left as they are.

/** The markdown report the script writes into its output folder. */
export const TRIAGE_REPORT_FILE = 'triage-report.md';
/** Products listed in the prompt at most; the rest are counted. */
export const MAX_LISTED_PRODUCTS = 40;
const MAX_SCANNED_ENTRIES = 2000;
const MAX_DEPTH = 3;
/** A top-level product larger than this is not rewritten (nor preloaded). */
const MAX_REWRITE_BYTES = 4 * 1024 * 1024;

export interface TriageProduct {
  /** Path relative to the output folder, `/`-separated. */
  rel: string;
  bytes: number;
}

export interface TriageProducts {
  /** Regular files the script wrote (not our own output.log), sorted by path. */
  files: TriageProduct[];
  /** The script's triage-report.md, with host paths rewritten, when it wrote one. */
  report?: string;
}

/** Regular files under `dir` (symlinks and special files are skipped, never followed), bounded. */
export async function listFiles(dir: string): Promise<TriageProduct[]> {
  const out: TriageProduct[] = [];
  let scanned = 0;
  const walk = async (abs: string, rel: string, depth: number): Promise<void> => {
    const entries = await readdir(abs, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (++scanned > MAX_SCANNED_ENTRIES) return;
      if (e.name.startsWith('.')) continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const child = path.join(abs, e.name);
      if (e.isDirectory() && depth < MAX_DEPTH) await walk(child, childRel, depth + 1);
      else if (e.isFile()) {
        const info = await lstat(child).catch(() => undefined);
        if (info?.isFile()) out.push({ rel: childRel, bytes: info.size });
      }
    }
  };
  await walk(dir, '', 0);
  return out;
}

/**
 * Lists the products in the bundle's triage folder, rewrites host paths in its top-level files
 * (`rewrite`; identity under the process engine) and reads triage-report.md (at most `reportCap` bytes).
 * Never throws: a product that cannot be read or rewritten is logged and left as it is.
 */
export async function collectTriageProducts(input: {
  bundle: RunBundle;
  rewrite: (text: string) => string;
  reportCap: number;
  log: Logger;
}): Promise<TriageProducts> {
  const { bundle, log } = input;
  const dir = bundle.path(RUN_FILES.triageDir);
  const ownLog = path.posix.basename(RUN_FILES.triageLog);
  const files = (await listFiles(dir)).filter((f) => f.rel !== ownLog);
  let report: string | undefined;
  for (const f of files) {
    if (f.rel.includes('/') || f.bytes > MAX_REWRITE_BYTES) continue;
    const name = path.posix.join(RUN_FILES.triageDir, f.rel);
    try {
      const read = await readOwnFile(bundle.path(name), MAX_REWRITE_BYTES);
      if (read.kind !== 'ok') continue;
      const text = input.rewrite(read.text);
      if (text !== read.text) {
        // Written through the bundle: redacted like every other file the run keeps.
        await bundle.writeText(name, text);
        f.bytes = Buffer.byteLength(bundle.redact(text));
      }
      if (f.rel === TRIAGE_REPORT_FILE) {
        const clean = bundle.redact(text);
        report = Buffer.byteLength(clean) > input.reportCap ? undefined : clean;
        if (report === undefined)
          log.warn(
            { bytes: f.bytes, cap: input.reportCap },
            'triage-report.md over the prompt cap; listed only',
          );
      }
    } catch (err) {
      log.warn({ file: name, err: errorMessage(err) }, 'triage product could not be read or rewritten');
    }
  }
  return { files, ...(report !== undefined ? { report } : {}) };
}

const size = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1048576).toFixed(1)} MiB`;

/** Our note listing the products by the agent's path (empty when there are none). */
export function renderProducts(files: readonly TriageProduct[], agentDir: string): string {
  if (files.length === 0) return '';
  const shown = files.slice(0, MAX_LISTED_PRODUCTS);
  const lines = [
    `[triage-runner: the triage script's files, readable at these paths (search them with grep -n / jq before re-collecting anything):`,
    ...shown.map((f) => `- ${path.posix.join(agentDir, f.rel)} (${size(f.bytes)})`),
  ];
  if (files.length > shown.length)
    lines.push(`- … and ${files.length - shown.length} more under ${agentDir}`);
  lines.push(']');
  return lines.join('\n');
}

/** A saved product larger than this is not copied into a run that reuses the saved triage. */
export const MAX_SAVED_PRODUCT_BYTES = 16 * 1024 * 1024;

/**
 * The products saved beside a triage output `logName` in `dir`, when `dir` is a triage output folder
 * (it holds triage-report.md or evidence/): an example's saved-triage/ or a run's triage/. Any other
 * folder (a file given to --reuse-triage from elsewhere) contributes nothing.
 */
export async function savedTriageFiles(dir: string, logName: string): Promise<TriageProduct[]> {
  const report = await lstat(path.join(dir, TRIAGE_REPORT_FILE)).catch(() => undefined);
  const evidence = await lstat(path.join(dir, 'evidence')).catch(() => undefined);
  if (!report?.isFile() && !evidence?.isDirectory()) return [];
  return (await listFiles(dir)).filter((f) => f.rel !== logName && f.bytes <= MAX_SAVED_PRODUCT_BYTES);
}

/**
 * Copies the products saved beside a reused triage output (`savedDir`: an example's saved-triage/ or
 * an earlier run's triage/, minus the output file itself) into the run's triage folder, so that the
 * files the reused text names exist for this run too. Returns the folder the script was given when it
 * wrote them, as the saved text names it (`<dir>/<product>`), to be rewritten to this run's folder.
 */
export async function adoptSavedProducts(input: {
  savedDir: string;
  outputFile: string;
  text: string;
  bundle: RunBundle;
  log: Logger;
}): Promise<{ originalDir?: string }> {
  const { bundle, log } = input;
  const files = await savedTriageFiles(input.savedDir, input.outputFile);
  for (const f of files) {
    try {
      const read = await readOwnFile(path.join(input.savedDir, f.rel), MAX_SAVED_PRODUCT_BYTES);
      if (read.kind === 'ok') await bundle.writeText(path.posix.join(RUN_FILES.triageDir, f.rel), read.text);
    } catch (err) {
      log.warn({ file: f.rel, err: errorMessage(err) }, 'saved triage product could not be copied');
    }
  }
  // Top-level products first: `Full report: <dir>/triage-report.md` names the folder most directly.
  const named = [...files].sort((a, b) => Number(a.rel.includes('/')) - Number(b.rel.includes('/')));
  for (const f of named) {
    const escaped = f.rel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`(?<![\\w./-])(/[^\\s'"\`<>()]*?)/${escaped}(?![\\w.-])`).exec(input.text);
    if (m?.[1]) return { originalDir: m[1] };
  }
  return {};
}

import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ReturnedRecord } from '../../../workspace/run-record.js';
import { writeReturnedFile } from '../../../workspace/returned.js';
import { errorMessage } from '../../../util/errors.js';
import {
  FrameDecoder,
  FrameError,
  MAX_HEADER_BYTES,
  isWithin,
  type EndRecord,
  type Skipped,
} from './protocol.js';
import type { FilesMount, RunFilesGrant } from './types.js';

// One upload of an agent pod: the files its agent wrote, each taken only when its path is strictly below
// one of the run's writable mounts, written where the agent would have written it (through the
// workspace's writer: only output/ and the run's agent-notes/, never through a link) and counted
// against what a run may return in all. A file refused is recorded with why; the others are taken.

/** A file at most this many records per upload (an agent writes a few). */
const MAX_RECORDS = 10_000;

export interface UploadResult {
  record: ReturnedRecord;
  taken: string[];
  refused: Skipped[];
}

interface Received {
  p: string;
  chunks: Buffer[];
}

/** The upload's files and end record; throws FrameError when it is malformed or over `maxBytes`. */
export function decodeUpload(body: Buffer, maxBytes: number): { files: Received[]; end: EndRecord } {
  let raw: Buffer;
  try {
    raw = gunzipSync(body, { maxOutputLength: maxBytes + MAX_RECORDS * MAX_HEADER_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new FrameError(`the upload unpacks to more than ${maxBytes} bytes`, true);
    throw new FrameError(`the upload is not gzip data (${errorMessage(err)})`);
  }
  const files: Received[] = [];
  let end: EndRecord | undefined;
  const decoder = new FrameDecoder(
    {
      record: (r) => {
        if (r.k === 'f') files.push({ p: r.p, chunks: [] });
      },
      data: (chunk) => files.at(-1)?.chunks.push(chunk),
      fileEnd: () => undefined,
      end: (e) => (end = e),
    },
    { maxBytes, maxRecords: MAX_RECORDS },
  );
  decoder.push(raw);
  decoder.finish();
  return { files, end: end as EndRecord };
}

/** The file's path relative to the workspace, through the writable mount it is strictly below. */
function workspacePath(p: string, writable: readonly FilesMount[], workspaceDir: string): string | undefined {
  const mount = writable
    .filter((m) => p !== m.target && isWithin(p, m.target))
    .sort((a, b) => b.target.length - a.target.length)[0];
  if (!mount) return undefined;
  const file = path.join(mount.source, ...p.slice(mount.target.length + 1).split('/'));
  const rel = path.relative(workspaceDir, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

/** Takes one decoded upload into the workspace; the run's record after it. */
export async function takeUpload(
  upload: { files: Received[]; end: EndRecord },
  grant: Pick<RunFilesGrant, 'runId' | 'workspaceDir' | 'mounts'>,
  before: ReturnedRecord,
  limits: { maxBytes: number; now: Date },
): Promise<UploadResult> {
  const record: ReturnedRecord = { ...before, files: { ...before.files }, refused: [...before.refused] };
  const writable = grant.mounts.filter((m) => !m.readOnly);
  const at = limits.now.toISOString();
  const taken: string[] = [];
  const refused: Skipped[] = [];
  for (const file of upload.files) {
    const data = Buffer.concat(file.chunks);
    const rel = workspacePath(file.p, writable, grant.workspaceDir);
    if (!rel) {
      refused.push({ p: file.p, why: 'not below a folder the agent writes (output/, agent-notes/)' });
      continue;
    }
    const total = Object.entries(record.files).reduce((sum, [k, v]) => sum + (k === rel ? 0 : v.bytes), 0);
    if (total + data.length > limits.maxBytes) {
      refused.push({ p: rel, why: `the run's returned files would pass ${limits.maxBytes} bytes` });
      continue;
    }
    try {
      await writeReturnedFile(grant.workspaceDir, grant.runId, rel, data);
    } catch (err) {
      refused.push({ p: rel, why: errorMessage(err) });
      continue;
    }
    record.files[rel] = { bytes: data.length, at };
    taken.push(rel);
  }
  const left = (upload.end.skipped ?? []).map((s) => ({
    p: workspacePath(s.p, writable, grant.workspaceDir) ?? s.p,
    why: `left in the pod: ${s.why}`,
  }));
  for (const r of [...refused, ...left]) {
    // One line per path: the latest reason.
    record.refused = record.refused.filter((x) => x.path !== r.p);
    if (!taken.includes(r.p)) record.refused.push({ path: r.p, why: r.why });
  }
  record.refused = record.refused.filter((x) => !taken.includes(x.path));
  record.uploads += 1;
  record.lastAt = at;
  if (upload.end.final) record.final = true;
  return { record, taken, refused: [...refused, ...left] };
}

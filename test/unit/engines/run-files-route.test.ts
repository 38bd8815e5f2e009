// The daemon's run-files route on a real loopback port: what a pod's token opens (its own run only,
// until the run ends or its time is up), how big an upload may be, and which paths it may write.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunFilesRoute } from '../../../src/engines/kubernetes/files/route.js';
import {
  INPUTS_PATH,
  OUTPUTS_PATH,
  headerOf,
  type FileSetRecord,
} from '../../../src/engines/kubernetes/files/protocol.js';
import type { RunFilesGrant } from '../../../src/engines/kubernetes/files/types.js';
import { tokenDigest } from '../../../src/kubectl/broker/tokens.js';
import type { ReturnedRecord } from '../../../src/workspace/run-record.js';

const RUN = 'r1';
const TOKEN = 'token-of-run-r1-0123456789abcdefghij';
const OTHER = 'token-of-run-r2-0123456789abcdefghij';

let dir: string;
let server: Server;
let base: string;
let clock: number;
let records: ReturnedRecord[];
const warnings: object[] = [];

const route = () =>
  createRunFilesRoute({
    limits: { maxInputBytes: 4096, maxOutputBytes: 1024 },
    log: { warn: (o) => void warnings.push(o) },
    now: () => clock,
  });
let files: ReturnType<typeof route>;

function grant(workspaceDir: string, runId = RUN): RunFilesGrant {
  const notes = path.join(workspaceDir, '.triage', 'runs', runId, 'agent-notes');
  return {
    runId,
    workspaceDir,
    mounts: [
      { source: workspaceDir, target: '/workspace', readOnly: true, except: ['.triage'] },
      { source: path.join(workspaceDir, 'output'), target: '/workspace/output', readOnly: false },
      { source: notes, target: `/workspace/.triage/runs/${runId}/agent-notes`, readOnly: false },
    ],
    stdin: 'the prompt',
    serveInputs: true,
    onReturned: async (record) => void records.push(record),
  };
}

/** An upload as sync.ts builds it: each file's header and bytes, the end record, gzip'd. */
function upload(entries: [string, string][], final = false): Buffer {
  const parts: Buffer[] = [];
  let bytes = 0;
  for (const [p, text] of entries) {
    const data = Buffer.from(text);
    parts.push(headerOf({ k: 'f', p, n: data.length } as FileSetRecord), data);
    bytes += data.length;
  }
  parts.push(headerOf({ k: 'end', files: entries.length, bytes, ...(final ? { final } : {}) }));
  return gzipSync(Buffer.concat(parts));
}

async function post(body: Buffer, token = TOKEN) {
  const res = await fetch(`${base}${OUTPUTS_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body,
  });
  return { status: res.status, text: await res.text() };
}

async function get(token = TOKEN) {
  const res = await fetch(`${base}${INPUTS_PATH}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'run-files-route-'));
  await mkdir(path.join(dir, 'output'));
  await mkdir(path.join(dir, '.triage', 'runs', RUN, 'agent-notes'), { recursive: true });
  await writeFile(path.join(dir, 'incident.json'), '{"incidentId":"inc-1"}');
  await writeFile(path.join(dir, '.triage', 'audit-secret'), 'the daemon keeps this');
  clock = 1_000_000;
  records = [];
  warnings.length = 0;
  files = route();
  server = createServer((req, res) => files.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('run files route: the token', () => {
  it("sends the run's files to its token and nothing to another, an expired or a revoked one", async () => {
    const access = files.open(tokenDigest(TOKEN), grant(dir), clock + 60_000);
    const ok = await get();
    expect(ok.status).toBe(200);
    const stream = gunzipSync(ok.body).toString();
    expect(stream).toContain('"p":"/workspace/incident.json"');
    expect(stream).toContain('the prompt');
    // The daemon's own records under .triage/ are never sent.
    expect(stream).not.toContain('the daemon keeps this');

    for (const bad of [OTHER, '']) {
      const refused = await get(bad);
      expect(refused.status).toBe(401);
      expect(refused.body.toString()).not.toContain('incident');
    }
    clock += 60_000;
    expect((await get()).status).toBe(401);
    clock -= 60_000;
    access.revoke();
    expect((await get()).status).toBe(401);
    expect(await post(upload([['/workspace/output/investigation.md', '# r']]))).toMatchObject({
      status: 401,
    });
    expect(await readFile(path.join(dir, 'output', 'investigation.md')).catch(() => 'none')).toBe('none');
  });

  it('takes no upload once the run is being collected, and says what came', async () => {
    const access = files.open(tokenDigest(TOKEN), grant(dir), clock + 60_000);
    expect((await post(upload([['/workspace/output/investigation.md', '# report']], true))).status).toBe(200);
    const record = await access.close();
    expect(record).toMatchObject({ uploads: 1, final: true });
    expect(Object.keys(record.files)).toEqual(['output/investigation.md']);
    const late = await post(upload([['/workspace/output/investigation.md', '# overwritten']]));
    expect(late.status).toBe(409);
    expect(await readFile(path.join(dir, 'output', 'investigation.md'), 'utf8')).toBe('# report');
  });
});

describe('run files route: what an upload may hold', () => {
  it('takes files below the writable folders and refuses every other path, recording why', async () => {
    files.open(tokenDigest(TOKEN), grant(dir), clock + 60_000);
    const res = await post(
      upload([
        ['/workspace/output/investigation.md', '# report'],
        [`/workspace/.triage/runs/${RUN}/agent-notes/n.md`, 'a note'],
        ['/workspace/incident.json', 'rewritten'],
        ['/workspace/.triage/runs/other/agent-notes/n.md', 'another run'],
        ['/etc/passwd', 'x'],
      ]),
    );
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.text) as { taken: string[]; refused: { p: string }[] };
    expect(answer.taken).toEqual(['output/investigation.md', `.triage/runs/${RUN}/agent-notes/n.md`]);
    expect(answer.refused.map((r) => r.p)).toEqual([
      '/workspace/incident.json',
      '/workspace/.triage/runs/other/agent-notes/n.md',
      '/etc/passwd',
    ]);
    expect(await readFile(path.join(dir, 'incident.json'), 'utf8')).toBe('{"incidentId":"inc-1"}');
    expect(records.at(-1)?.refused).toHaveLength(3);
  });

  it('refuses a path that climbs out, and a body over the bound, with a 4xx and nothing written', async () => {
    files.open(tokenDigest(TOKEN), grant(dir), clock + 60_000);
    const climbing = gzipSync(
      Buffer.concat([
        headerOf({ k: 'f', p: '/workspace/output/../../etc/x', n: 1 }),
        Buffer.from('x'),
        headerOf({ k: 'end', files: 1, bytes: 1 }),
      ]),
    );
    const climb = await post(climbing);
    expect(climb.status).toBe(400);
    expect(climb.text).toMatch(/climbs out/);
    const big = await post(upload([['/workspace/output/big.md', 'x'.repeat(2048)]]));
    expect(big.status).toBe(413);
    const notGzip = await post(Buffer.from('plain text'));
    expect(notGzip.status).toBe(400);
    expect(records).toEqual([]);
  });

  it('counts what a run returns in all against the bound: a file that would pass it is refused, the others kept', async () => {
    files.open(tokenDigest(TOKEN), grant(dir), clock + 60_000);
    expect((await post(upload([['/workspace/output/a.md', 'a'.repeat(800)]]))).status).toBe(200);
    const second = await post(upload([['/workspace/output/b.md', 'b'.repeat(400)]]));
    expect(JSON.parse(second.text)).toMatchObject({ taken: [], refused: [{ p: 'output/b.md' }] });
    expect(await readFile(path.join(dir, 'output', 'a.md'), 'utf8')).toHaveLength(800);
  });
});

import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { startHttpServer } from '../../../src/server/http.js';
import type { HttpServer } from '../../../src/server/types.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import type { IncidentDetail } from '../../../src/status/detail.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import type { ListPage } from '../../../src/status/types.js';
import { evidenceOf } from '../../support/evidence.js';
import { tempRoot } from '../../support/incidents.js';
import { incidentIn, writeRun } from '../../support/status-root.js';

// The evidence check's claims through the status API: a listing carries every incident's verdict, the
// counts ("N of M claims supported"), the headline and the reason, without the claims themselves; the
// detail of one incident carries each claim with its status, source and why.

const EVIDENCE: Evidence = evidenceOf({
  verdict: 'partial',
  facts: 1,
  verified: 1,
  unverified: ['FACT-1 unsupported: it cites `kubectl logs api -n shop`, which never ran'],
  headline: 'api exits on a bad HTTP_PORT',
  claims: [
    {
      text: 'api exits on a bad HTTP_PORT',
      kind: 'headline',
      status: 'unsupported',
      source: 'FACT-1',
      why: 'it rests on FACT-1, which does not hold',
      chain: true,
    },
    {
      text: 'the log says FATAL',
      kind: 'fact',
      id: 'FACT-1',
      status: 'unsupported',
      source: 'kubectl logs api -n shop',
      why: 'it cites `kubectl logs api -n shop`, which never ran',
      chain: true,
    },
  ],
  claimsSupported: 0,
  claimsTotal: 2,
  reason: 'the headline is unsupported: it rests on FACT-1, which does not hold',
  checks: ['deterministic'],
});

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-evidence-api-'));
});
afterEach(async () => {
  await server?.close();
  index?.close();
  await cleanup();
});

describe('the claims in the status API', () => {
  it('lists the counts, headline and reason of every incident, and gives the claims in the detail', async () => {
    const dir = await incidentIn(root, 'claims', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
      { type: 'Claimed', runId: 'run-claims', holder: 'test' },
      { type: 'Finished', runId: 'run-claims', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    await writeRun(dir, 'run-claims', { answer: 'bad port', evidence: EVIDENCE }, '# r\n');
    index = new IncidentIndex({ root });
    await index.load();
    server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      readiness: async () => ({ ok: true, checks: [] }),
      metrics: { render: async () => '', contentType: 'text/plain' },
      routes: [statusApiRoutes({ index })],
    });
    const base = `http://127.0.0.1:${server.port}`;
    const list = (await (await fetch(`${base}/v1/incidents`)).json()) as ListPage;
    const { claims: _claims, ...brief } = EVIDENCE;
    expect(list.incidents[0]?.evidence).toEqual(brief);
    const detail = (await (
      await fetch(`${base}/v1/incidents/${path.basename(dir)}`)
    ).json()) as IncidentDetail;
    expect(detail.evidence).toEqual(EVIDENCE);
    expect(detail.result?.evidence?.claims?.[1]).toMatchObject({ id: 'FACT-1', status: 'unsupported' });
  });
});

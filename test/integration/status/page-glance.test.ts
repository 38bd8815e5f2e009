import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { feedbackRoutes } from '../../../src/server/routes/feedback.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import { PAGE_CSP, statusPageRoutes } from '../../../src/server/routes/status-page.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { tempRoot } from '../../support/incidents.js';
import { incidentIn, rootWithEveryState, storeFor, writeRun } from '../../support/status-root.js';

// The status page over real sockets: what the list and an incident say at a glance (what broke,
// where, how bad, the evidence verdict, the answer), the sign-in page, the duplicate link, and the
// feedback form's POST, which a session cookie may make only from the page's own origin.

const TOKEN = 'glance-token-5c1e9a';

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-glance-'));
});
afterEach(async () => {
  await server?.close();
  index?.close();
  server = index = undefined;
  await cleanup();
});

async function serve(token?: string): Promise<string> {
  index = new IncidentIndex({ root });
  await index.load();
  const i = index;
  server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    ...(token ? { token } : {}),
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: [
      statusApiRoutes({ index: i }),
      statusPageRoutes({ index: i }),
      feedbackRoutes({ root, audit: new AuditLog(), onRecorded: (f) => void i.refresh(f) }),
    ],
  });
  return `http://127.0.0.1:${server.port}`;
}

const ALERT_FOLDER = '20261126T101500Z-KubePodCrashLooping-prod-eu-1-payments-payments-api-7c9d-3f9a1c2b';
const ALERT_ID = `inc-${ALERT_FOLDER}`;

/** An alert incident (a long folder name, a summary) that succeeded with a grounded report. */
async function alertIncident(): Promise<string> {
  const dir = await incidentIn(
    root,
    ALERT_FOLDER,
    (s, i) => [
      { type: 'Validated', incidentId: i, sha256: s },
      { type: 'Claimed', runId: 'run-a', holder: 'test' },
      { type: 'Launched', runId: 'run-a', engine: 'process', id: '1' },
      { type: 'Finished', runId: 'run-a', outcome: { status: 'succeeded', exitCode: 0 } },
    ],
    storeFor(),
    {
      cluster: 'prod-eu-1',
      namespace: 'payments',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'payments-api-7c9d', namespace: 'payments' },
      faultType: 'CrashLoop',
      severity: 'critical',
      context: { summary: 'Pod payments/payments-api-7c9d is crash looping' },
    },
  );
  await writeRun(dir, 'run-a', {
    answer: 'Hypothesis: bad DATABASE_URL; confidence high; first action: roll back',
    evidence: {
      verdict: 'grounded',
      facts: 2,
      verified: 2,
      unverified: [],
      citedNotRun: [],
      excerptsNotFound: [],
      gaps: [],
    },
  });
  return dir;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('status page at a glance', () => {
  it('lists what broke, where, how bad, the evidence verdict and the answer; the view carries the same', async () => {
    await alertIncident();
    const base = await serve();
    const html = await (await fetch(`${base}/`)).text();
    const row = html.slice(
      html.indexOf(`data-folder="${ALERT_FOLDER}"`),
      html.indexOf('</tr>', html.indexOf(ALERT_FOLDER)),
    );
    expect(row).toContain('>Pod payments/payments-api-7c9d is crash looping</a>');
    for (const text of [
      'prod-eu-1',
      'payments',
      'Pod/payments-api-7c9d',
      'CrashLoop',
      'critical',
      'grounded',
      'bad DATABASE_URL',
    ])
      expect(row, text).toContain(text);
    // The long folder name is the link target, not shown as the title (nor twice).
    expect(row.split(ALERT_FOLDER).length - 1).toBe(2); // data-folder and href only
    const view = (await (await fetch(`${base}/v1/incidents/${ALERT_FOLDER}`)).json()) as Record<
      string,
      unknown
    >;
    expect(view).toMatchObject({
      evidence: { verdict: 'grounded' },
      subject: {
        title: 'Pod payments/payments-api-7c9d is crash looping',
        cluster: 'prod-eu-1',
        namespace: 'payments',
        resource: { kind: 'Pod', name: 'payments-api-7c9d' },
        faultType: 'CrashLoop',
        severity: 'critical',
      },
      duplicateOf: null,
    });
  });

  it('says the reason of a failed incident once, and tells its audit trail as a story', async () => {
    await rootWithEveryState(root);
    const base = await serve();
    const html = await (await fetch(`${base}/incidents/failed`)).text();
    expect(html.split('the agent timed out after 15m').length - 1).toBe(1);
    const chapters = [...html.matchAll(/data-chapter="([a-z]+)"/g)].map((m) => m[1]);
    expect(chapters).toEqual(['detected', 'queued', 'agent', 'answer']);
  });

  it("lists, under an incident's summary, every citation that did not hold and every gap (escaped); a grounded one has no such list", async () => {
    await alertIncident();
    await incidentIn(root, 'shaky', (s, i) => [
      { type: 'Validated', incidentId: i, sha256: s },
      { type: 'Claimed', runId: 'run-s', holder: 'test' },
      { type: 'Finished', runId: 'run-s', outcome: { status: 'succeeded', exitCode: 0 } },
    ]);
    await writeRun(path.join(root, 'shaky'), 'run-s', {
      answer: 'it was DNS',
      evidence: {
        verdict: 'partial',
        facts: 1,
        verified: 1,
        unverified: [],
        citedNotRun: ['kubectl logs <web-1> -n shop (FACT-1)'],
        excerptsNotFound: [],
        gaps: ['refused (exclude "k8s-change"): kubectl delete pods/web-1 --namespace=shop'],
      },
    });
    const base = await serve();
    const page = await (await fetch(`${base}/incidents/shaky`)).text();
    expect(page).toContain('What the evidence check could not verify');
    expect(page).toContain(
      '<li>cited, but no recorded call ran it as written: kubectl logs &lt;web-1&gt; -n shop (FACT-1)</li>',
    );
    expect(page).toContain(
      '<li>gap in a call the report does not cite: refused (exclude &quot;k8s-change&quot;): kubectl delete pods/web-1',
    );
    const grounded = await (await fetch(`${base}/incidents/${ALERT_FOLDER}`)).text();
    expect(grounded).not.toContain('What the evidence check could not verify');
  });

  it('links "duplicate of <id>" to that incident', async () => {
    await alertIncident();
    await incidentIn(root, 'dup', (s, i) => [
      {
        type: 'Duplicate',
        incidentId: i,
        sha256: s,
        duplicateOf: ALERT_ID,
        reason: `duplicate of ${ALERT_ID} (same cluster, resource and faultType 3 s earlier)`,
      },
    ]);
    const base = await serve();
    const list = await (await fetch(`${base}/`)).text();
    expect(list).toContain(`duplicate of <a class="duplicate" href="/by-id/${ALERT_ID}">${ALERT_ID}</a>`);
    const page = await (await fetch(`${base}/incidents/dup`)).text();
    expect(page).toContain(`href="/by-id/${ALERT_ID}"`);
    const go = await fetch(`${base}/by-id/${ALERT_ID}`, { redirect: 'manual' });
    expect(go.status).toBe(303);
    expect(go.headers.get('location')).toBe(`/incidents/${ALERT_FOLDER}`);
    expect((await fetch(`${base}/by-id/inc-nothing`, { redirect: 'manual' })).status).toBe(404);
  });

  it('without a token, / shows a page that says how to open it, not a JSON 401', async () => {
    const base = await serve(TOKEN);
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    const text = await res.text();
    expect(text).toContain('This status page needs its token');
    expect(text).toContain('?token=&lt;HTTP_TOKEN&gt;');
    expect(await (await fetch(`${base}/?token=wrong`)).text()).toContain(
      'That token does not open this page',
    );
    // The API still answers JSON.
    expect((await fetch(`${base}/v1/incidents`)).headers.get('content-type')).toMatch(/json/);
  });
});

describe('feedback from the page', () => {
  it('records a form post once, on the cookie only when the browser proves it came from the page', async () => {
    const dir = await alertIncident();
    const base = await serve(TOKEN);
    const exchange = await fetch(`${base}/?token=${TOKEN}`, { redirect: 'manual' });
    const cookie = (exchange.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const url = `${base}/incidents/${ALERT_FOLDER}/feedback`;
    const body = form({ verdict: 'wrong', cause: 'a full disk on the node', by: 'ana' });
    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    const host = new URL(base).host;
    // A cookie alone proves nothing; nor does a browser's own navigation (Sec-Fetch-Site: none).
    expect((await post({ cookie })).status).toBe(401);
    expect((await post({ cookie, 'sec-fetch-site': 'none' })).status).toBe(401);
    expect((await post({ cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'same-origin' })).status).toBe(401);
    await expect(readFile(path.join(dir, '.triage', 'feedback.json'))).rejects.toThrow();

    const ok = await post({ cookie, 'sec-fetch-site': 'same-origin', origin: `http://${host}` });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/incidents/${ALERT_FOLDER}#feedback`);
    const saved = JSON.parse(await readFile(path.join(dir, '.triage', 'feedback.json'), 'utf8')) as unknown;
    expect(saved).toMatchObject({
      verdict: 'wrong',
      cause: 'a full disk on the node',
      by: 'ana',
      source: 'page',
    });
    // An Origin equal to the Host is proof too; the same verdict again changes nothing.
    expect((await post({ cookie, origin: `http://${host}` })).status).toBe(303);
    const audit = await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8');
    expect(audit.match(/"type":"feedback_recorded"/g)).toHaveLength(1);

    const bad = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${TOKEN}` },
      body: form({ verdict: 'maybe' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Feedback not recorded');

    await index?.refresh(ALERT_FOLDER);
    const page = await (await fetch(`${base}/incidents/${ALERT_FOLDER}`, { headers: { cookie } })).text();
    expect(page).toMatch(/id="feedback-current"[\s\S]*v-wrong[\s\S]*a full disk on the node[\s\S]*by ana/);
    const list = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    expect(list).toMatch(/id="accuracy"[\s\S]*<b class="rate">0%<\/b>\s+over 1 rated of 1\s+answers/);
    expect(list).toMatch(/<b class="confident-wrong bad">1<\/b>\s+confidently\s+wrong/);
  });
});

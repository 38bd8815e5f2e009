import { appendFile, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createParser } from 'eventsource-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { INCIDENT_STATES } from '../../../src/workspace/state.js';
import { silentLogger } from '../../../src/log/logger.js';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer } from '../../../src/server/types.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import { PAGE_CSP, statusPageRoutes } from '../../../src/server/routes/status-page.js';
import type { IncidentDetail } from '../../../src/status/detail.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import type { IncidentView, ListPage } from '../../../src/status/types.js';
import { dropByRename, incidentJson, tempRoot, waitFor } from '../../support/incidents.js';
import { POLICY, REPORT, rootWithEveryState, writeRun } from '../../support/status-root.js';

// The status API over real sockets: listing from the index (filter, pages), one incident read from
// its workspace, the report, the event stream, and the token as a browser and a script send it.

const TOKEN = 'api-token-7e1f0b2c';

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-api-'));
});
afterEach(async () => {
  await server?.close();
  index?.close();
  server = undefined;
  index = undefined;
  await cleanup();
});

/** The audit events `rootWithEveryState` gives its succeeded incident, in order. */
const EVERY_STATE_SUCCEEDED_EVENTS = ['validated', 'queued', 'claimed', 'launched', 'outcome'];

async function serve(options: { token?: string } = {}): Promise<string> {
  index = new IncidentIndex({ root });
  await index.load();
  server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    ...(options.token ? { token: options.token } : {}),
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: [statusApiRoutes({ index }), statusPageRoutes({ index })],
  });
  return `http://127.0.0.1:${server.port}`;
}

const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;

describe('status API', () => {
  it('lists incidents newest first with totals, filtered by state, page by page', async () => {
    const dirs = await rootWithEveryState(root);
    const base = await serve();
    const all = await json<ListPage & { root: string }>(await fetch(`${base}/v1/incidents`));
    const newestFirst = [...all.incidents].sort(
      (a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || (a.folder < b.folder ? -1 : 1),
    );
    expect(all.incidents.map((v) => v.folder)).toEqual(newestFirst.map((v) => v.folder));
    expect(new Set(all.incidents.map((v) => v.state))).toEqual(new Set(INCIDENT_STATES));
    expect(all.totals).toEqual(Object.fromEntries(INCIDENT_STATES.map((s) => [s, 1])));
    expect(all.matched).toBe(9);
    expect(all.root).toBe(root);
    const failed = await json<ListPage>(await fetch(`${base}/v1/incidents?state=failed`));
    expect(failed.incidents.map((v) => v.folder)).toEqual(['failed']);
    expect(failed.incidents[0]?.reason).toContain('timed out');
    const seen: string[] = [];
    let url = `${base}/v1/incidents?limit=4`;
    for (;;) {
      const page = await json<ListPage>(await fetch(url));
      seen.push(...page.incidents.map((v) => v.folder));
      if (!page.nextCursor) break;
      url = `${base}/v1/incidents?limit=4&cursor=${page.nextCursor}`;
    }
    expect(seen).toEqual(all.incidents.map((v) => v.folder));
    const offset = await json<ListPage>(await fetch(`${base}/v1/incidents?offset=7&limit=5`));
    expect(offset.incidents.map((v) => v.folder)).toEqual(seen.slice(7));
    expect(Object.keys(dirs)).toHaveLength(9);
  });

  it('finds an incident whose folder name is as long as a file name may be', async () => {
    const name = `${'long-folder-name-'.repeat(14)}x`.slice(0, 240);
    await dropByRename(root, name, incidentJson());
    await new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy: POLICY }).apply(
      path.join(root, name),
      { type: 'Validated', incidentId: 'long', sha256: 'x' },
    );
    const base = await serve();
    const res = await fetch(`${base}/v1/incidents/${encodeURIComponent(name)}`);
    expect(res.status).toBe(200);
    expect((await json<IncidentDetail>(res)).folder).toBe(name);
  });

  it('answers 400 with what is expected for a bad state, limit or cursor', async () => {
    const base = await serve();
    const bad = async (query: string) => {
      const res = await fetch(`${base}/v1/incidents?${query}`);
      expect(res.status, query).toBe(400);
      return (await json<{ message: string }>(res)).message;
    };
    expect(await bad('state=done')).toBe(
      'state "done" is not an incident state: use one of queued, preparing, running, succeeded, failed, rejected, deferred, interrupted, resolved',
    );
    expect(await bad('limit=0')).toBe('limit "0" is not a whole number from 1 to 10000');
    expect(await bad('cursor=xyz')).toContain('is not one this server gave');
  });

  it('gives one incident with its runs, result, context token table and audit events', async () => {
    const dirs = await rootWithEveryState(root);
    const runDir = path.join(dirs.succeeded, '.triage', 'runs', 'run-succeeded');
    await writeFile(
      path.join(runDir, 'context.json'),
      JSON.stringify({
        estimator: 'o200k',
        budget: { warn: 8000, truncate: 10000 },
        totalTokens: 4200,
        sections: [
          { tag: 'incident', tokens: 300, originalTokens: 300, truncated: false },
          { tag: 'initial_triage_report', tokens: 3900, originalTokens: 12000, truncated: true },
        ],
        skills: [],
      }),
    );
    const base = await serve();
    const d = await json<IncidentDetail>(await fetch(`${base}/v1/incidents/succeeded`));
    expect(d).toMatchObject({
      folder: 'succeeded',
      state: 'succeeded',
      runs: [{ id: 'run-succeeded', status: 'succeeded' }],
      result: { agent: 'claude', durationMs: 134_000, costUsd: 0.4213 },
      context: {
        runId: 'run-succeeded',
        totalTokens: 4200,
        sections: [
          { tag: 'incident' },
          { tag: 'initial_triage_report', truncated: true, originalTokens: 12000 },
        ],
      },
    });
    expect(d.audit.events.map((e) => e.type)).toEqual(EVERY_STATE_SUCCEEDED_EVENTS);
    expect(d.audit.omitted).toBe(0);
    const missing = await fetch(`${base}/v1/incidents/absent`);
    expect(missing.status).toBe(404);
    expect((await json<{ message: string }>(missing)).message).toMatch(
      /^no incident folder or incidentId "absent" under /,
    );
  });

  it('counts audit lines without a type and a time as unreadable, and the incident page still renders', async () => {
    const dirs = await rootWithEveryState(root);
    await appendFile(
      path.join(dirs.succeeded, '.triage', 'audit.jsonl'),
      `${JSON.stringify({ type: 'launched' })}\n${JSON.stringify({ type: 'finished', ts: 5 })}\nnull\n`,
    );
    const base = await serve();
    const d = await json<IncidentDetail>(await fetch(`${base}/v1/incidents/succeeded`));
    expect(d.audit.events.map((e) => e.type)).toEqual(EVERY_STATE_SUCCEEDED_EVENTS);
    expect(d.audit.problem).toBe('3 line(s) of audit.jsonl are not events; run `triage-runner audit verify`');
    const page = await fetch(`${base}/incidents/succeeded`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('3 line(s) of audit.jsonl are not events');
  });

  it("counts the latest run's kubectl and promql calls on the incident page", async () => {
    const dirs = await rootWithEveryState(root);
    await writeRun(dirs.succeeded, 'run-succeeded', {
      kubectl: {
        guard: 'broker',
        calls: 5,
        refused: 1,
        log: 'cluster-calls.jsonl',
        prometheus: { endpoint: 'configured', calls: 3, refused: 0 },
      },
    });
    await writeRun(dirs.failed, 'run-failed', {
      kubectl: {
        guard: 'broker',
        calls: 2,
        refused: 0,
        prometheus: { endpoint: 'none', calls: 1, refused: 1 },
      },
    });
    const base = await serve();
    const page = await (await fetch(`${base}/incidents/succeeded`)).text();
    expect(page).toContain('<dt>Cluster calls</dt><dd id="calls">kubectl 5 (1 refused) · promql 3</dd>');
    const failed = await (await fetch(`${base}/incidents/failed`)).text();
    expect(failed).toContain('<dd id="calls">kubectl 2 · promql not configured</dd>');
  });

  it("shows the latest run's model calls on the incident page: the first call, tokens by kind and the cache's share", async () => {
    await rootWithEveryState(root);
    const base = await serve();
    const d = await json<IncidentDetail>(await fetch(`${base}/v1/incidents/succeeded`));
    expect(d.measures).toMatchObject({
      firstCallInputTokens: 9640,
      cacheReadShare: 0.68,
      model: 'claude-sonnet-5-5',
    });
    const page = await (await fetch(`${base}/incidents/succeeded`)).text();
    expect(page).toContain('<h2>Model calls</h2>');
    expect(page).toContain('<dd id="model">claude-sonnet-5-5</dd>');
    expect(page).toContain('<dd id="first-call-input">9.6k (9640)</dd>');
    expect(page).toContain('<dd id="first-token-ms">3.3s</dd>');
    expect(page).toContain('<dd id="cache-read">12k (12240), 68% of the input</dd>');
    expect(page).toContain('<dd id="cache-write">5.8k (5760)</dd>');
    const running = await (await fetch(`${base}/incidents/running`)).text();
    expect(running).toContain('No model call went through the gateway in the latest run.');
  });

  it('serves the report as markdown, and 404 with the reason when there is none', async () => {
    await rootWithEveryState(root);
    const base = await serve();
    const report = await fetch(`${base}/v1/incidents/succeeded/report`);
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(report.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(await report.text()).toBe(REPORT);
    const none = await fetch(`${base}/v1/incidents/failed/report`);
    expect(none.status).toBe(404);
    expect(await json(none)).toEqual({
      error: 'no_report',
      message: `no report at ${path.join(root, 'failed', 'output', 'investigation.md')}: the agent timed out after 15m (agent.timeout)`,
    });
  });

  it('never reads through a symbolic link: a linked report or .triage folder is refused, not followed', async () => {
    const dirs = await rootWithEveryState(root);
    const secret = path.join(root, '..', `${path.basename(root)}-secret.md`);
    await writeFile(secret, 'TOP SECRET host file');
    const report = path.join(dirs.failed, 'output', 'investigation.md');
    await mkdir(path.dirname(report), { recursive: true });
    await symlink(secret, report);
    // A folder whose .triage points at another incident's: its state is not read through the link.
    await mkdir(path.join(root, 'linked'));
    await writeFile(path.join(root, 'linked', 'incident.json'), JSON.stringify(incidentJson()));
    await symlink(path.join(dirs.succeeded, '.triage'), path.join(root, 'linked', '.triage'));
    try {
      const base = await serve();
      const res = await fetch(`${base}/v1/incidents/failed/report`);
      expect(res.status).toBe(404);
      const body = await res.text();
      expect(body).toContain('is a symbolic link, which is never followed');
      expect(body).not.toContain('TOP SECRET');
      expect((await fetch(`${base}/v1/incidents/linked`)).status).toBe(404);
      const listed = await json<ListPage>(await fetch(`${base}/v1/incidents`));
      expect(listed.incidents.map((v) => v.folder)).not.toContain('linked');
    } finally {
      await rm(secret, { force: true });
    }
  });

  it('streams index changes as server-sent events', async () => {
    const base = await serve();
    const store = new IncidentStore({
      audit: new AuditLog(),
      log: silentLogger(),
      policy: POLICY,
      onChange: (change) => index?.apply(change),
    });
    const abort = new AbortController();
    const res = await fetch(`${base}/v1/events`, { signal: abort.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events: { event?: string; data: string }[] = [];
    const parser = createParser({ onEvent: (e) => void events.push(e) });
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk));
      } catch {
        // aborted at the end of the test
      }
    })();
    await waitFor('the hello event', () => (events.some((e) => e.event === 'hello') ? true : undefined));
    const dir = await dropByRename(root, 'live-one', incidentJson({ incidentId: 'live-1' }));
    await store.apply(dir, { type: 'Validated', incidentId: 'live-1', sha256: 'x' });
    const upsert = await waitFor('an incident event for live-one', () =>
      events.find((e) => e.event === 'incident' && e.data.includes('"live-one"')),
    );
    const data = JSON.parse(upsert.data) as { view: IncidentView; totals: Record<string, number> };
    expect(data.view).toMatchObject({ folder: 'live-one', incidentId: 'live-1', state: 'queued' });
    expect(data.totals.queued).toBe(1);
    abort.abort();
    await reading;
  });

  it('with a token: /v1 needs it; a browser exchanges ?token= once for a cookie that reads but cannot retry', async () => {
    await rootWithEveryState(root);
    const base = await serve({ token: TOKEN });
    const denied = await fetch(`${base}/v1/incidents`);
    expect(denied.status).toBe(401);
    expect((await json<{ message: string }>(denied)).message).toContain(
      'open this address once with ?token=<HTTP_TOKEN> added',
    );
    expect((await fetch(`${base}/`)).status).toBe(401);
    expect(
      (await fetch(`${base}/v1/incidents`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
    const exchange = await fetch(`${base}/?state=failed&token=${TOKEN}`, { redirect: 'manual' });
    expect(exchange.status).toBe(303);
    expect(exchange.headers.get('location')).toBe('/?state=failed');
    const cookie = (exchange.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^triage_session=/);
    expect(cookie).not.toContain(TOKEN);
    expect((await fetch(`${base}/`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${base}/v1/incidents/succeeded`, { headers: { cookie } })).status).toBe(200);
    expect(
      (await fetch(`${base}/v1/incidents/failed/retry`, { method: 'POST', headers: { cookie } })).status,
    ).toBe(401);
    expect((await fetch(`${base}/?token=wrong`, { redirect: 'manual' })).status).toBe(401);
    // The script and stylesheet carry nothing secret and load before the exchange.
    expect((await fetch(`${base}/assets/status.js`)).status).toBe(200);
  });

  it('serves pages under a Content-Security-Policy that forbids inline script and other origins', async () => {
    await rootWithEveryState(root);
    const base = await serve();
    for (const page of ['/', '/incidents/succeeded']) {
      const res = await fetch(`${base}${page}`);
      expect(res.status, page).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const text = await res.text();
      expect(text.match(/<script[^>]*>/g)).toEqual(['<script type="module" src="/assets/status.js">']);
      expect(text).not.toMatch(/\son[a-z]+=|style=/i);
    }
    const js = await fetch(`${base}/assets/status.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${base}/assets/__proto__`)).status).toBe(404);
    expect((await fetch(`${base}/incidents/.triage`)).status).toBe(400);
  });
});

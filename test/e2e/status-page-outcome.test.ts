import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '../../src/server/http.js';
import { statusApiRoutes } from '../../src/server/routes/status.js';
import { statusPageRoutes } from '../../src/server/routes/status-page.js';
import type { HttpServer } from '../../src/server/types.js';
import { IncidentIndex } from '../../src/status/incident-index.js';
import type { RunResult } from '../../src/workspace/run-record.js';
import { openChromium, type OpenBrowser } from '../support/chromium.js';
import { evidenceOf } from '../support/evidence.js';
import { tempRoot } from '../support/incidents.js';
import { incidentIn, succeededRun, writeResolvedAlerts, writeRun } from '../support/status-root.js';

// What the status page's badge says of an answer, in a real browser (Debian's Chromium through
// playwright-core): green and "grounded" only when the evidence check found the answer held by the
// cluster; a run with no cluster access and an ungrounded one are never green nor "succeeded", in the
// rows the server renders and in those status.js builds live. The list also marks an answered
// incident whose alerts resolved afterwards.

// The page's globals, as far as the functions evaluated in the browser use them (no DOM lib here).
interface PageElement {
  textContent: string | null;
  querySelector(selector: string): PageElement | null;
}
declare const document: Pick<PageElement, 'querySelector'>;
declare function getComputedStyle(el: PageElement): { backgroundColor: string };

/** status.css's green (#15803d): only a grounded answer wears it. */
const GREEN = 'rgb(21, 128, 61)';

const evidence = (over: Partial<Parameters<typeof evidenceOf>[0]>) =>
  evidenceOf({ verdict: 'ungrounded', facts: 1, ...over });

/** Answered runs, each with what its evidence check and access check found. */
const RUNS: Record<string, Partial<RunResult>> = {
  grounded: { evidence: evidence({ verdict: 'grounded', verified: 2, clusterRead: true }) },
  unreachable: {
    evidence: evidence({ gaps: ['no cluster read succeeded during the run'], clusterRead: false }),
    cluster: { name: 'prod-eu-1', reachable: false, detail: 'connection refused' },
  },
  ungrounded: { evidence: evidence({ clusterRead: true }) },
  contradicted: {
    evidence: evidence({
      clusterRead: true,
      claims: [
        {
          text: 'OOMKilled',
          kind: 'headline',
          status: 'contradicted',
          source: 'kubectl describe pod web-1',
          why: 'reason: the report says OOMKilled; the describe says Error',
        },
      ],
    }),
  },
};
const SHOWN: Record<string, string> = {
  grounded: 'grounded',
  unreachable: 'no cluster access',
  ungrounded: 'not verified',
  contradicted: 'contradicted',
};

let root: string;
let cleanup: () => Promise<void>;
let server: HttpServer | undefined;
let index: IncidentIndex | undefined;
let browser: OpenBrowser | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-outcome-'));
});
afterEach(async () => {
  await browser?.close();
  await server?.close();
  index?.close();
  browser = server = index = undefined;
  await cleanup();
});

async function answered(name: string): Promise<string> {
  const dir = await incidentIn(root, name, succeededRun(`run-${name}`));
  await writeRun(dir, `run-${name}`, { answer: `answer of ${name}`, ...RUNS[name] });
  return dir;
}

async function serve(): Promise<string> {
  index = new IncidentIndex({ root });
  await index.load();
  const i = index;
  server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: [statusApiRoutes({ index: i }), statusPageRoutes({ index: i })],
  });
  return `http://127.0.0.1:${server.port}`;
}

/** The badge of a row: its text and its background colour as the browser paints it. */
const badge = (page: Page, folder: string) =>
  page.evaluate((f) => {
    const el = document.querySelector(`tr[data-folder="${f}"] .badge`);
    return el ? { text: el.textContent, background: getComputedStyle(el).backgroundColor } : null;
  }, folder);

describe('status page badge in Chromium', () => {
  it('is green and "grounded" only for a grounded answer; no cluster access and ungrounded answers are neither green nor "succeeded", served or live', async () => {
    await answered('grounded');
    await answered('unreachable');
    const base = await serve();
    browser = await openChromium();
    const { page } = browser;
    await page.goto(`${base}/`);
    await page.waitForFunction(() => document.querySelector('#live')?.textContent === 'live');

    // Rendered by the server.
    for (const name of ['grounded', 'unreachable']) {
      const seen = await badge(page, name);
      expect(seen?.text, name).toBe(SHOWN[name]);
      if (name === 'grounded') expect(seen?.background).toBe(GREEN);
      else expect(seen?.background, name).not.toBe(GREEN);
    }
    // Built by status.js from the live event stream.
    for (const name of ['ungrounded', 'contradicted']) {
      await answered(name);
      await index!.refresh(name);
      await page.waitForSelector(`tr[data-folder="${name}"] .badge`, { timeout: 15_000 });
      const seen = await badge(page, name);
      expect(seen?.text, name).toBe(SHOWN[name]);
      expect(seen?.background, name).not.toBe(GREEN);
    }
    const list = (await page.textContent('#incidents')) ?? '';
    expect(list).not.toContain('succeeded');
    // The totals count answers, not successes.
    expect(await page.textContent('[data-total="succeeded"]')).toMatch(/^answered\s+4$/);

    // An answered incident whose alerts resolved afterwards is marked so in the list, live.
    const at = '2026-03-01T10:30:00.000Z';
    await writeResolvedAlerts(path.join(root, 'grounded'), at);

    await index!.refresh('grounded');
    await page.waitForFunction(
      () => document.querySelector('tr[data-folder="grounded"] .resolved-mark')?.textContent === 'resolved',
      undefined,
      { timeout: 15_000 },
    );
    // And by the server after a reload.
    await page.reload();
    expect(await page.textContent('tr[data-folder="grounded"] .resolved-mark')).toBe('resolved');
    expect(await page.$('tr[data-folder="unreachable"] .resolved-mark')).toBeNull();
  });
});

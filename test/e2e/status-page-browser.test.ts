import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunExecutor } from '../../src/run/types.js';
import { dropByRename, incidentJson, tempRoot } from '../support/incidents.js';
import { openChromium, type OpenBrowser } from '../support/chromium.js';
import { REPO_ROOT } from '../support/runs.js';
import { startStatusDaemon, type StatusDaemon } from '../support/status-daemon.js';
import { writeRun } from '../support/status-root.js';

// The status page in a real browser (Debian's Chromium driven by playwright-core): a dropped incident
// appears in the list and its state changes there without a reload, the report renders, and script in
// the report (which derives from untrusted cluster data) does not run. The server has a bearer token,
// so the page is opened the way a person opens it: once with ?token=, then on the session cookie.

// The page's globals, as far as the functions evaluated in the browser use them (no DOM lib here).
interface PageElement {
  textContent: string | null;
  attributes: Iterable<{ name: string }>;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement> & { length: number };
}
declare const document: Pick<PageElement, 'querySelector' | 'querySelectorAll'> & {
  getElementById(id: string): PageElement | null;
};
declare const window: Record<string, unknown>;

const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');
const TOKEN = 'browser-token-41d7a9';

/** Each would set window.__xss (or open a dialog) if the report's text reached the page as markup. */
const XSS_REPORT = `# Findings <script>window.__xss = 'script'; alert('script')</script>

The pod restarts. <img src="x" onerror="window.__xss = 'onerror'; alert('onerror')">

<svg onload="window.__xss = 'svg'"></svg>

[open the runbook](javascript:window.__xss='link';alert('link'))

| pod | restarts |
|---|---|
| payments-api-7c9d | 14 |
`;
const ANSWER = `Hypothesis: bad DATABASE_URL <img src=x onerror="window.__xss='answer'">; confidence high`;

/** An agent that runs until the test lets it finish, then leaves a hostile report and its result. */
function gatedExecutor(): { executor: RunExecutor; finish: () => void } {
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => (finish = resolve));
  const executor: RunExecutor = {
    async run(request) {
      await request.onStage?.({ type: 'launched', engine: 'process', id: 'browser-agent' });
      await request.onStage?.({
        type: 'progress',
        progress: {
          turns: 2,
          tokens: { input: 3000, output: 400 },
          lastTool: 'kubectl',
          elapsedMs: 5000,
          updatedAt: new Date().toISOString(),
        },
      });
      await Promise.race([gate, new Promise((r) => request.signal.addEventListener('abort', r))]);
      if (request.signal.aborted) return { status: 'interrupted', reason: 'stopped' };
      await writeRun(
        request.workspace.dir,
        request.runId,
        {
          answer: ANSWER,
          costUsd: 0.12,
          evidence: {
            verdict: 'partial',
            facts: 3,
            verified: 1,
            unverified: [],
            citedNotRun: ['kubectl logs payments-api-7c9d'],
            excerptsNotFound: [],
            gaps: [],
          },
        },
        XSS_REPORT,
      );
      return { status: 'succeeded', exitCode: 0 };
    },
    adopt: async () => 'gone',
    readiness: async () => ({ ok: true, checks: [] }),
  };
  return { executor, finish };
}

let root: string;
let cleanup: () => Promise<void>;
let daemon: StatusDaemon | undefined;
let opened: OpenBrowser | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-page-'));
});
afterEach(async () => {
  await opened?.close();
  await daemon?.stop();
  opened = daemon = undefined;
  await cleanup();
});

async function browser(): Promise<Page> {
  opened = await openChromium();
  return opened.page;
}

/** An alert's incident: a long generated folder name, a summary to title it by. */
const FOLDER = '20261126T101500Z-KubePodCrashLooping-prod-eu-1-payments-payments-api-7c9d-3f9a1c2b';
const ALERT = {
  incidentId: 'inc-browser-1',
  cluster: 'prod-eu-1',
  namespace: 'payments',
  resource: { apiVersion: 'v1', kind: 'Pod', name: 'payments-api-7c9d', namespace: 'payments' },
  faultType: 'CrashLoop',
  severity: 'critical',
  context: { summary: 'Pod payments/payments-api-7c9d is crash looping' },
};
/** What a responder must see of the incident without scrolling sideways. */
const AT_A_GLANCE = [
  'prod-eu-1',
  'payments',
  'Pod/payments-api-7c9d',
  'critical',
  'partly verified',
  'partial',
];

/** The page scrolls sideways when the document is wider than the window. */
const sideways = (page: Page) =>
  page.evaluate(() => {
    const el = (document as unknown as { documentElement: { scrollWidth: number; clientWidth: number } })
      .documentElement;
    return { scrollWidth: el.scrollWidth, clientWidth: el.clientWidth };
  });

/** Each text is on the page and shown (not hidden, inside the viewport's width). */
async function expectVisible(page: Page, scope: string, texts: readonly string[]): Promise<void> {
  for (const text of texts) {
    const loc = page.locator(scope).getByText(text, { exact: true }).first();
    expect(await loc.isVisible(), `${text} visible in ${scope}`).toBe(true);
    const box = await loc.boundingBox();
    const width = page.viewportSize()?.width ?? 0;
    expect(box && box.x >= 0 && box.x + box.width <= width + 1, `${text} within ${width} px`).toBe(true);
  }
}

const badgeOf = (page: Page, folder: string) =>
  page.evaluate((f) => document.querySelector(`tr[data-folder="${f}"] .badge`)?.textContent ?? null, folder);

async function waitForBadge(page: Page, folder: string, state: string): Promise<void> {
  await page.waitForFunction(
    ([f, s]) => document.querySelector(`tr[data-folder="${f}"] .badge`)?.textContent === s,
    [folder, state] as const,
    { timeout: 15_000 },
  );
}

describe('status page in Chromium', () => {
  it('shows a dropped incident live with what, where and how bad at 1280 and 390 px, renders the report inert, and records feedback from its form', async () => {
    const { executor, finish } = gatedExecutor();
    daemon = await startStatusDaemon({ root, executor, token: TOKEN });
    const page = await browser();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // A Content-Security-Policy violation or a script error shows here; a request that failed too
    // (the event stream is cut by leaving the list page, which is expected).
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (err) => void errors.push(err.message));
    page.on(
      'requestfailed',
      (r) => void (r.url().endsWith('/v1/events') || errors.push(`failed: ${r.url()}`)),
    );

    // Without the token, a page that says how to open it (not a JSON 401).
    await page.goto(`${daemon.base}/`);
    expect(await page.textContent('h2')).toBe('This status page needs its token');
    expect(errors).toEqual([
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);
    errors.length = 0;
    // Opened once with the token: exchanged for a cookie, the address no longer carries it.
    await page.goto(`${daemon.base}/?token=${TOKEN}`);
    expect(page.url()).toBe(`${daemon.base}/`);
    await page.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
    await page.evaluate(() => (window.__samePage = true));

    await dropByRename(root, FOLDER, incidentJson(ALERT));
    await page.waitForSelector(`tr[data-folder="${FOLDER}"]`, { timeout: 15_000 });
    await waitForBadge(page, FOLDER, 'running');
    finish();
    // An answer's badge says what it amounts to (its report is partly verified), never "succeeded".
    await waitForBadge(page, FOLDER, 'partly verified');
    const row = await page.evaluate((f) => {
      const tr = document.querySelector(`tr[data-folder="${f}"]`);
      return {
        title: tr?.querySelector('a.title')?.textContent,
        answer: tr?.querySelector('.answer')?.textContent,
        answerImages: tr?.querySelectorAll('.answer img').length,
        total: document.querySelector('[data-total="succeeded"] b')?.textContent,
        samePage: window.__samePage,
      };
    }, FOLDER);
    expect(row).toEqual({
      title: ALERT.context.summary,
      answer: ANSWER,
      answerImages: 0,
      total: '1',
      samePage: true,
    });
    await mkdir(ARTIFACTS, { recursive: true });
    const shots: string[] = [];
    const shoot = async (name: string) => {
      const file = path.join(ARTIFACTS, name);
      await page.screenshot({ path: file, fullPage: true });
      shots.push(file);
    };
    // The live row (built by status.js) and the server's row say the same at a glance, wide and narrow.
    for (const reload of [false, true]) {
      if (reload) await page.reload();
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 });
        await expectVisible(page, `tr[data-folder="${FOLDER}"]`, [...AT_A_GLANCE, ANSWER]);
        const { scrollWidth, clientWidth } = await sideways(page);
        expect(scrollWidth, `list at ${width} px${reload ? ' (served)' : ' (live)'}`).toBeLessThanOrEqual(
          clientWidth,
        );
        if (reload) await shoot(width === 390 ? 'status-page-390.png' : 'status-page.png');
      }
    }

    await page.setViewportSize({ width: 1280, height: 844 });
    await page.click(`tr[data-folder="${FOLDER}"] a.title`);
    await page.waitForSelector('#report');
    const report = await page.evaluate(() => {
      const article = document.getElementById('report');
      return {
        heading: article?.querySelector('h1')?.textContent,
        table: article?.querySelectorAll('table td').length,
        scripts: article?.querySelectorAll('script, img, svg, iframe').length,
        links: [...(article?.querySelectorAll('a') ?? [])].map((a) => a.getAttribute('href')),
        handlers: [...(article?.querySelectorAll('*') ?? [])].filter((e) =>
          [...e.attributes].some((a) => a.name.startsWith('on')),
        ).length,
        title: document.getElementById('title')?.textContent,
        chapters: [...document.querySelectorAll('[data-chapter]')].map((c) => c.getAttribute('data-chapter')),
        events: [...document.querySelectorAll('.chapter code')].map((c) => c.textContent),
      };
    });
    expect(report).toMatchObject({
      heading: "Findings <script>window.__xss = 'script'; alert('script')</script>",
      table: 2,
      scripts: 0,
      links: [],
      handlers: 0,
      title: ALERT.context.summary,
    });
    // The story in order (this stand-in agent has no triage stage to tell).
    expect(report.chapters).toEqual(['detected', 'queued', 'agent', 'answer']);
    expect(report.events).toEqual(
      expect.arrayContaining(['validated', 'queued', 'claimed', 'launched', 'outcome']),
    );
    expect(await page.textContent('#report')).toContain(
      `<img src="x" onerror="window.__xss = 'onerror'; alert('onerror')">`,
    );
    // Give anything that could fire (an image error, a handler) the time to do so.
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => window.__xss ?? null)).toBeNull();
    expect(dialogs).toEqual([]);
    expect(await badgeOf(page, FOLDER)).toBeNull();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      await expectVisible(page, '.summary', [...AT_A_GLANCE, ANSWER]);
      const { scrollWidth, clientWidth } = await sideways(page);
      expect(scrollWidth, `incident page at ${width} px`).toBeLessThanOrEqual(clientWidth);
      await shoot(width === 390 ? 'status-incident-390.png' : 'status-incident.png');
    }

    // Feedback through the page's form (a plain POST on the session cookie), recorded once.
    await page.check('input[name="verdict"][value="wrong"]');
    await page.fill('input[name="cause"]', 'a full disk on the node');
    await page.fill('input[name="by"]', 'ana');
    await page.click('form.feedback button[type="submit"]');
    await page.waitForSelector('#feedback-current .verdict');
    expect(page.url()).toBe(`${daemon.base}/incidents/${FOLDER}#feedback`);
    expect(await page.textContent('#feedback-current')).toMatch(
      /wrong\s+· cause: a full disk on the node\s+· by ana/,
    );
    await shoot('status-incident-feedback-390.png');
    const dir = path.join(root, FOLDER, '.triage');
    expect(JSON.parse(await readFile(path.join(dir, 'feedback.json'), 'utf8'))).toMatchObject({
      verdict: 'wrong',
      cause: 'a full disk on the node',
      by: 'ana',
      source: 'page',
    });
    const audit = await readFile(path.join(dir, 'audit.jsonl'), 'utf8');
    expect(audit.match(/"type":"feedback_recorded"/g)).toHaveLength(1);
    // The list shows accuracy at a glance: that confident answer was wrong.
    await page.goto(`${daemon.base}/`);
    expect((await page.textContent('#accuracy'))?.replace(/\s+/g, ' ')).toContain(
      'Accuracy 0% over 1 rated of 1 answers (0 correct, 0 partly, 1 wrong) · 1 confidently wrong',
    );
    expect(errors).toEqual([]);
    await writeFile(
      path.join(ARTIFACTS, 'README.txt'),
      'Screenshots kept by test/e2e/status-page-browser.test.ts (1280 px and 390 px wide)\n',
    );
    console.log(`status page screenshots: ${shots.join(' ')}`);
  });
});

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunExecutor } from '../../src/daemon/types.js';
import { dropByRename, incidentJson, tempRoot } from '../support/incidents.js';
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

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
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
      await writeRun(request.workspace.dir, request.runId, { answer: ANSWER, costUsd: 0.12 }, XSS_REPORT);
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
let context: BrowserContext | undefined;
let profile: string | undefined;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-page-'));
});
afterEach(async () => {
  await context?.close();
  await daemon?.stop();
  if (profile) await rm(profile, { recursive: true, force: true });
  context = daemon = profile = undefined;
  await cleanup();
});

async function browser(): Promise<Page> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with bash .ci/install-test-tools.sh (or set CHROMIUM_PATH)`,
    );
  profile = await mkdtemp(path.join(tmpdir(), 'triage-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return context.pages()[0] ?? context.newPage();
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
  it('shows a dropped incident live, follows its state without a reload, and renders the report inert', async () => {
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

    // Opened once with the token: exchanged for a cookie, the address no longer carries it.
    await page.goto(`${daemon.base}/?token=${TOKEN}`);
    expect(page.url()).toBe(`${daemon.base}/`);
    await page.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
    await page.evaluate(() => (window.__samePage = true));

    await dropByRename(root, 'payments-crashloop', incidentJson({ incidentId: 'inc-browser-1' }));
    await page.waitForSelector('tr[data-folder="payments-crashloop"]', { timeout: 15_000 });
    await waitForBadge(page, 'payments-crashloop', 'running');
    finish();
    await waitForBadge(page, 'payments-crashloop', 'succeeded');
    const row = await page.evaluate(() => {
      const tr = document.querySelector('tr[data-folder="payments-crashloop"]');
      return {
        answer: tr?.querySelector('.answer')?.textContent,
        answerImages: tr?.querySelectorAll('.answer img').length,
        total: document.querySelector('[data-total="succeeded"] b')?.textContent,
        samePage: window.__samePage,
      };
    });
    expect(row).toEqual({ answer: ANSWER, answerImages: 0, total: '1', samePage: true });
    await mkdir(ARTIFACTS, { recursive: true });
    const listShot = path.join(ARTIFACTS, 'status-page.png');
    await page.screenshot({ path: listShot, fullPage: true });

    await page.click('tr[data-folder="payments-crashloop"] a');
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
        timeline: [...document.querySelectorAll('table.timeline code')].map((c) => c.textContent),
      };
    });
    expect(report).toMatchObject({
      heading: "Findings <script>window.__xss = 'script'; alert('script')</script>",
      table: 2,
      scripts: 0,
      links: [],
      handlers: 0,
    });
    expect(report.timeline).toEqual(
      expect.arrayContaining(['validated', 'queued', 'claimed', 'launched', 'outcome']),
    );
    expect(await page.textContent('#report')).toContain(
      `<img src="x" onerror="window.__xss = 'onerror'; alert('onerror')">`,
    );
    // Give anything that could fire (an image error, a handler) the time to do so.
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => window.__xss ?? null)).toBeNull();
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(await badgeOf(page, 'payments-crashloop')).toBeNull();
    const incidentShot = path.join(ARTIFACTS, 'status-incident.png');
    await page.screenshot({ path: incidentShot, fullPage: true });
    await writeFile(
      path.join(ARTIFACTS, 'README.txt'),
      'Screenshots kept by test/e2e/status-page-browser.test.ts\n',
    );
    console.log(`status page screenshots: ${listShot} ${incidentShot}`);
  });
});

/**
 * The browser test: headless Chromium (Debian's `chromium`, driven by playwright-core)
 * opens /graphiql on a real server, runs a query and a jobProgress subscription over
 * graphql-ws, and sees the job's events in the result pane. Every request the page
 * makes must stay on 127.0.0.1 (the page is self-contained: no CDN). A screenshot
 * goes to test-output/graphiql-subscription.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import type { JobEngine } from '../../src/engine/engine';
import { JobKind } from '../../src/job-kinds';
import { testKindRegistrations } from '../support/test-kinds';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { startTestApiServer, TEST_JWT, type TestApiServer } from './support/api-server';
import { CHROMIUM_ARGS, CHROMIUM_PATH, requireChromium } from './support/browser';

const OUTPUT_DIR = path.resolve(__dirname, '../../test-output');
const SCREENSHOT = path.join(OUTPUT_DIR, 'graphiql-subscription.png');

describe.runIf(requireChromium('test/api/browser.test.ts'))('GraphiQL in headless Chromium', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine;
  let server: TestApiServer;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const offsite: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ctx = await createTestDb('api_browser');
    engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
    await engine.start();
    // The development page pre-fills this token in the headers and the socket's connection_init.
    const devToken = await new Authenticator({ ...TEST_JWT }).sign({ sub: 'dev-admin', roles: [ApiRole.ADMIN] }, '1h');
    server = await startTestApiServer({ engine, devAdminToken: devToken });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 20_000 });
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    // Anything not on this machine is recorded and refused: the page must work offline.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      requests.push(url);
      if (isLocal(url)) return route.continue();
      offsite.push(url);
      return route.abort();
    });
    page = await context.newPage();
    page.on('websocket', (socket) => requests.push(socket.url()));
    page.on('pageerror', (error) => pageErrors.push(String(error)));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.stop(2_000);
    await ctx?.close();
  });

  it('runs a query and a jobProgress subscription, offline, and shows the events', async () => {
    // --- a query, run with the execute button -----------------------------------
    const query = 'query Health {\n  messagingHealth {\n    status\n    transport { name }\n  }\n}\n';
    await page.goto(`${server.url}/graphiql?query=${encodeURIComponent(query)}`, { waitUntil: 'load', timeout: 20_000 });
    await page.locator('.graphiql-execute-button').waitFor({ state: 'visible', timeout: 20_000 });
    await expect.poll(() => editorText(page, '.graphiql-query-editor'), { timeout: 15_000 }).toContain('messagingHealth');
    await runOperation(page, 'Health');
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toMatch(/"status":\s*"[A-Z_]+"/);
    const health = JSON.parse(await responseText(page));
    expect(health).toEqual({ data: { messagingHealth: { status: expect.any(String), transport: { name: 'in-memory' } } } });

    // --- a subscription for a job this test starts ------------------------------
    // The job starts now, before the page has subscribed (typing, parsing, the socket's
    // start: seconds on a busy machine): it runs long enough, 9 steps × 700 ms, that the
    // page still sees several of its events whenever the subscription starts.
    const { job } = await engine.enqueue({ kind: JobKind.AUTOMATIC_SCHEDULE, input: { steps: 9, stepMs: 700 }, requestedBy: 'browser-test' });
    const subscription = `subscription Watch {\n  jobProgress(jobId: "${job.id}") {\n    sequence\n    reason\n    status\n    currentStep\n    progress\n    message\n  }\n}\n`;
    await replaceQuery(page, subscription);
    await expect.poll(() => editorText(page, '.graphiql-query-editor'), { timeout: 10_000 }).toContain(job.id);
    await runOperation(page, 'Watch');

    // GraphiQL shows the latest payload of a subscription: sample the pane as events arrive.
    const seen: { sequence: number; status: string; reason: string; currentStep: string | null }[] = [];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const text = await responseText(page);
      try {
        const event = (JSON.parse(text) as { data?: { jobProgress?: (typeof seen)[number] } }).data?.jobProgress;
        if (event && seen.at(-1)?.sequence !== event.sequence) seen.push(event);
        if (event?.status === 'SUCCEEDED') break;
      } catch {
        // empty or partial pane
      }
      await page.waitForTimeout(40);
    }
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });

    const statuses = seen.map((e) => e.status);
    expect(statuses.at(-1), `events seen in the page: ${JSON.stringify(seen)}`).toBe('SUCCEEDED');
    expect(statuses).toContain('RUNNING');
    // Several distinct events arrived, in sequence order, with the steps in between.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.sequence).toBeGreaterThan(seen[i - 1]!.sequence);
    expect(seen.some((e) => e.currentStep && /^step \d$/.test(e.currentStep))).toBe(true);
    expect((await waitForJob(engine, job.id)).status).toBe('SUCCEEDED');
    // The subscription completed: the execute button is a "run" button again, not "stop".
    await expect.poll(() => page.locator('.graphiql-execute-button').getAttribute('aria-label'), { timeout: 5_000 }).toMatch(/execute|run/i);

    // --- offline: the page and everything it loaded came from this server --------
    expect(offsite).toEqual([]);
    expect(requests.some((url) => url.startsWith(`${server.wsUrl}`))).toBe(true);
    expect(requests.every(isLocal), requests.filter((u) => !isLocal(u)).join('\n')).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(fs.statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });
});

function isLocal(url: string): boolean {
  if (/^(data|blob|about):/.test(url)) return true;
  try {
    return new URL(url).hostname === '127.0.0.1';
  } catch {
    return false;
  }
}

/** The text of a Monaco editor inside `container` (its model, not the virtualised DOM). */
async function editorText(page: Page, container: string): Promise<string> {
  return page.evaluate((selector) => {
    const root = document.querySelector(selector);
    if (!root) return '';
    const lines = [...root.querySelectorAll('.view-lines .view-line')] as HTMLElement[];
    return lines
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((line) => line.innerText.replace(/\u00a0/g, ' '))
      .join('\n');
  }, container);
}

const responseText = (page: Page) => editorText(page, '.graphiql-response');

/**
 * Clicks "execute" once GraphiQL has parsed the editor's operation (the active tab takes
 * its name; it parses after a short debounce, and an early click sends the old name).
 */
async function runOperation(page: Page, operationName: string): Promise<void> {
  await expect.poll(() => page.locator('.graphiql-tab-active .graphiql-tab-button').first().innerText(), { timeout: 10_000 }).toBe(operationName);
  await page.waitForTimeout(300);
  await page.locator('.graphiql-execute-button').click();
}

/** Select everything in the query editor and paste the new text over it (as a user would). */
async function replaceQuery(page: Page, text: string): Promise<void> {
  await page.locator('.graphiql-query-editor .view-lines').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  // A paste event (typing would auto-close brackets and indent).
  await page.locator('.graphiql-query-editor textarea').evaluate((textarea, value) => {
    const data = new DataTransfer();
    data.setData('text/plain', value);
    textarea.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

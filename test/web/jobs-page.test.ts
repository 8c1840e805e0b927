/**
 * The web page's jobs views in headless Chromium (Debian's, driven by playwright-core)
 * against a real API server (the service's own mount over an engine with the real
 * AUTOMATIC_SCHEDULE and SCHEDULE_PUBLISH kinds, the demo term loaded), serving the page
 * from a `vite build` of the current sources (`buildWebBundle`). One server and one browser for the whole file.
 *
 * Proves: the development sign-in on loopback and signing in by pasting a token; a
 * schedule of the demo term watched live (the progress bar moves, the job ends
 * SUCCEEDED, no reload) with its timeline, log, chart and result; cancelling a running
 * job; the Chinese page with translated steps; a viewer is offered no cancel/retry;
 * nothing leaves 127.0.0.1; no serious or critical axe-core violation; usable at 1280
 * px and at phone width. Screenshots go to test-output/web-*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/api/auth/authenticator';
import { ApiRole } from '../../src/api/auth/viewer';
import type { JobEngine } from '../../src/engine/engine';
import { startAutomaticSchedule } from '../../src/scheduling/automatic-schedule';
import { loadDemoData } from '../../src/scheduling/demo-data';
import { SchedulePlan } from '../../src/scheduling/entities';
import { JobStatus } from '../../src/engine/types';
import { startTestApiServer, TEST_JWT, type TestApiServer } from '../api/support/api-server';
import { CHROMIUM_ARGS, CHROMIUM_PATH, requireChromium } from '../api/support/browser';
import { createTestDb, waitForJob } from '../support/engine-harness';
import { schedulingEngine } from '../scheduling/scheduling-harness';
import { buildWebBundle, isLocal } from './support/web-bundle';

const OUTPUT_DIR = path.resolve(__dirname, '../../test-output');
/** expect.poll with a bound that covers two browser files sharing two busy cores (its default is 1 s). */
const poll = <T>(fn: () => T | Promise<T>, options: { timeout?: number } = {}) => expect.poll(fn, { timeout: 15_000, ...options });
const shot = (name: string) => path.join(OUTPUT_DIR, `web-${name}.png`);

describe.runIf(requireChromium('test/web/jobs-page.test.ts'))('the web page: jobs', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine;
  let server: TestApiServer;
  let bundle: { dir: string; output: string };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let planId: string;
  const requests: string[] = [];
  const offsite: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [bundle, ctx] = await Promise.all([buildWebBundle(), createTestDb('web_jobs')]);
    await loadDemoData(ctx.db.orm.em.fork());
    planId = (await ctx.db.orm.em.fork().findOneOrFail(SchedulePlan, { name: 'Demo draft' })).id;
    engine = schedulingEngine(ctx.db);
    await engine.start();
    // What the service does on the development default: an admin token, handed to a browser on this machine.
    const devToken = await new Authenticator({ ...TEST_JWT }).sign({ sub: 'dev-admin', roles: [ApiRole.ADMIN] }, '1h');
    server = await startTestApiServer({ engine, devAdminToken: devToken, services: { orm: ctx.db.orm }, settings: { webRoot: bundle.dir } });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--lang=en-US', '--accept-lang=en-US'], timeout: 20_000 });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
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
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.stop(2_000);
    await ctx?.close();
  });

  const startSchedule = async (timeLimitSeconds: number) =>
    (await startAutomaticSchedule({ em: ctx.db.orm.em.fork(), engine }, { planId, timeLimitSeconds, seed: 3 }, 'scheduler-1')).id;

  const latest = async (status: JobStatus) => (await engine.listJobs({ first: 1, statuses: [status] })).jobs[0]!.job;

  it('builds a bundle and prints its size, first load included', () => {
    expect(bundle.output).toMatch(/first load\s+[\d.]+ kB\s+[\d.]+ kB gzip/);
    expect(bundle.output).toMatch(/all files\s+[\d.]+ kB\s+[\d.]+ kB gzip/);
  });

  it('signs in by itself with the development token on loopback, in the browser language', async () => {
    await page.goto(`${server.url}/`, { waitUntil: 'load' });
    await page.waitForURL(/\/jobs$/);
    await poll(() => page.getByTestId('who').innerText()).toContain('dev-admin');
    await poll(() => page.locator('h1').innerText()).toBe('Jobs');
    // The page's own requests carried the token: the list loaded (empty) without an error.
    await page.getByText('No jobs match.').waitFor();
    expect(await page.locator('.error').count()).toBe(0);
  });

  it('shows a schedule of the demo term live: the progress bar moves and the job ends SUCCEEDED without a reload', async () => {
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.getByText('Live', { exact: true }).waitFor();
    const jobId = await startSchedule(6);
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await row.waitFor({ timeout: 15_000 });
    const seen = new Set<number>();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const value = Number(await row.getByRole('progressbar').getAttribute('aria-valuenow'));
      seen.add(value);
      const moving = [...seen].filter((v) => v > 0 && v < 100).length >= 2;
      if (moving && (await row.getByTestId('penalty').innerText()) !== '—') break;
      await page.waitForTimeout(50);
    }
    await page.screenshot({ path: shot('jobs-1280') });

    // The job's page, reached by the row's link (the page's router, not a load).
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`/jobs/${jobId}$`));
    await page.getByTestId('penalty-chart').waitFor({ timeout: 15_000 });
    await poll(() => page.getByTestId('log').locator('li').count()).toBeGreaterThan(0);
    await page.screenshot({ path: shot('job-running-1280') });
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('SUCCEEDED');
    await page.getByTestId('job-result').waitFor();
    expect(await page.getByTestId('job-result').innerText()).toMatch(/Penalty\s+\d+/);
    // Why the solver stopped, in words (not its code).
    expect(await page.locator('[data-result="stopReason"]').innerText()).toMatch(/^(the time limit was reached|the move budget was spent|no better result exists \(penalty 0\)|it was stopped)$/);
    expect(await page.getByTestId('timeline').locator('li[data-state="done"]').count()).toBe(5);
    expect(await page.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');
    await page.screenshot({ path: shot('job-succeeded-1280') });

    await page.goBack();
    await poll(() => row.getAttribute('data-status'), { timeout: 10_000 }).toBe('SUCCEEDED');
    const values = [...seen].sort((a, b) => a - b);
    expect(values.filter((v) => v > 0 && v < 100).length, `progress values seen: ${values}`).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect((await waitForJob(engine, jobId)).status).toBe('SUCCEEDED');
  });

  it('cancels a running job from its page, retries it and cancels it again', async () => {
    const jobId = await startSchedule(60);
    await page.goto(`${server.url}/jobs/${jobId}`);
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('RUNNING');
    await page.getByTestId('cancel').click();
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('CANCELLED');
    // Cancelled: no cancel any more, a retry instead (an admin may).
    await page.getByTestId('retry').waitFor();
    expect(await page.getByTestId('cancel').count()).toBe(0);
    expect((await engine.getJob(jobId))!.status).toBe('CANCELLED');
    // Retried: it runs again on the same page (a new attempt), and can be cancelled again.
    await page.getByTestId('retry').click();
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('RUNNING');
    expect((await engine.getJob(jobId))!.attempts).toBeGreaterThanOrEqual(1);
    await page.getByTestId('cancel').click();
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('CANCELLED');
  });

  it('switches to Chinese: labels, statuses and steps translated, and the choice kept', async () => {
    const succeeded = await latest(JobStatus.SUCCEEDED);
    await page.goto(`${server.url}/jobs/${succeeded.id}`);
    await page.getByTestId('timeline').waitFor();
    await page.getByTestId('language').selectOption('zh-CN');
    await poll(() => page.getByTestId('job-status').innerText()).toBe('已完成');
    const timeline = await page.getByTestId('timeline').innerText();
    for (const step of ['加载学期数据', '构建排课模型', '构造初始课表', '优化课表', '保存排课方案']) expect(timeline).toContain(step);
    // A message the page has no translation of comes from the server, asked for in Chinese.
    await poll(() => page.getByTestId('job-message').innerText()).toMatch(/[\u4e00-\u9fff]/);
    expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await poll(() => page.locator('[data-result="stopReason"]').innerText()).toMatch(/^[\u4e00-\u9fff（）0 ]+$/);
    // The tab's title too, without another navigation.
    await poll(() => page.title()).toMatch(/[\u4e00-\u9fff]/);
    await page.screenshot({ path: shot('job-zh-1280') });
    await page.reload();
    await poll(() => page.locator('nav').innerText()).toContain('作业');
    await page.getByTestId('language').selectOption('en');
  });

  it('signs in with a pasted token; a viewer is offered no cancel or retry', async () => {
    const running = await startSchedule(60);
    const cancelled = await latest(JobStatus.CANCELLED);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Bearer token').fill('not a token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('not a JWT');
    await page.getByLabel('Bearer token').fill(server.tokens.readAllViewer);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByTestId('who').innerText()).toContain('viewer-3');
    expect(await page.getByTestId('who').getAttribute('data-can-operate')).toBe('false');

    await page.goto(`${server.url}/jobs/${running}`);
    await poll(() => page.getByTestId('job-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('RUNNING');
    expect(await page.getByRole('button').allInnerTexts()).toEqual(['Sign out']);
    await page.goto(`${server.url}/jobs/${cancelled.id}`);
    await poll(() => page.getByTestId('job-status').getAttribute('data-status')).toBe('CANCELLED');
    expect(await page.getByTestId('retry').count()).toBe(0);
    expect(await page.getByTestId('cancel').count()).toBe(0);
    await engine.cancel(running);
    await waitForJob(engine, running);
  });

  it('filters the list by status and by kind', async () => {
    await page.goto(`${server.url}/jobs`);
    await page.locator('tr[data-job-id]').first().waitFor();
    await page.getByTestId('filter-status').selectOption('CANCELLED');
    await poll(async () => [...new Set(await page.locator('tr[data-job-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))))]).toEqual(['CANCELLED']);
    // A listed job retried meanwhile is CANCELLED no more: it leaves the list.
    const listed = (await page.locator('tr[data-job-id]').first().getAttribute('data-job-id'))!;
    await engine.retry(listed);
    await poll(() => page.locator(`tr[data-job-id="${listed}"]`).count()).toBe(0);
    await engine.cancel(listed);
    await waitForJob(engine, listed);
    await page.getByTestId('filter-status').selectOption('');
    await page.getByTestId('filter-kind').selectOption('SCHEDULE_PUBLISH');
    await page.getByText('No jobs match.').waitFor();
    await page.getByTestId('filter-kind').selectOption('AUTOMATIC_SCHEDULE');
    await poll(() => page.locator('tr[data-job-id]').count()).toBeGreaterThanOrEqual(3);
    await page.getByTestId('filter-kind').selectOption('');
  });

  it('has no serious or critical accessibility violation (list and job page, English and Chinese)', async () => {
    const check = async (where: string) => {
      const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    };
    const succeeded = await latest(JobStatus.SUCCEEDED);
    await page.goto(`${server.url}/jobs`);
    await page.locator('tr[data-job-id]').first().waitFor();
    await check('jobs (en)');
    await page.goto(`${server.url}/jobs/${succeeded.id}`);
    await page.getByTestId('job-result').waitFor();
    await check('job (en)');
    await page.getByTestId('language').selectOption('zh-CN');
    await check('job (zh-CN)');
    await page.goto(`${server.url}/sign-in`);
    await check('sign-in (zh-CN)');
    await page.getByTestId('language').selectOption('en');
  });

  it('is usable at phone width: no sideways scrolling, every row readable', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${server.url}/jobs`);
    await phone.locator('tr[data-job-id]').first().waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Each cell names its column (the table becomes cards).
    expect(await phone.locator('tr[data-job-id] td').first().evaluate((td) => getComputedStyle(td, '::before').content)).not.toBe('none');
    await phone.screenshot({ path: shot('jobs-phone'), fullPage: true });
    await phone.locator('tr[data-job-id] a').first().click();
    await phone.getByTestId('timeline').waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: shot('job-phone'), fullPage: true });
    await phone.close();
  });

  it('a job page whose first read failed reads again by itself, and then shows the job without the error', async () => {
    // A running job: no end comes to make the page read it again; only the page itself can.
    const running = await startSchedule(60);
    let failed = 0;
    await page.route('**/graphql', (route) => {
      if (failed === 0 && (route.request().postData() ?? '').includes('JobDetail')) {
        failed++;
        return route.abort('connectionreset');
      }
      return route.fallback();
    });
    try {
      await page.goto(`${server.url}/jobs/${running}`);
      await page.getByRole('alert').waitFor();
      await poll(() => page.getByTestId('job-status').getAttribute('data-status')).toBe('RUNNING');
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(failed).toBe(1);
    } finally {
      await page.unroute('**/graphql');
      await engine.cancel(running);
      await waitForJob(engine, running);
    }
  });

  it('signs out when its token expires on an open page (the server closes the socket, 4403) rather than show rows that no longer move', async () => {
    const brief = await server.authenticator.sign({ sub: 'viewer-brief', roles: ['viewer'], scope: 'jobs:read-all' }, '5s');
    if (await page.getByRole('button', { name: 'Sign out' }).count()) {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in/);
    } else await page.goto(`${server.url}/sign-in`);
    await page.getByLabel('Bearer token').fill(brief);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByTestId('who').innerText()).toContain('viewer-brief');
    await page.goto(`${server.url}/jobs`);
    await page.locator('tr[data-job-id]').first().waitFor();
    // No navigation, no request: only the socket's close says the token is done.
    await poll(() => page.getByText('Your session has ended').count(), { timeout: 20_000 }).toBe(1);
    await page.waitForURL(/\/sign-in/);
  });

  it('made no request off this machine and threw no page error', () => {
    expect(offsite).toEqual([]);
    expect(requests.some((url) => url.startsWith(server.wsUrl))).toBe(true);
    expect(requests.every(isLocal)).toBe(true);
    expect(pageErrors).toEqual([]);
    for (const name of ['jobs-1280', 'job-running-1280', 'job-zh-1280', 'jobs-phone']) expect(fs.statSync(shot(name)).size).toBeGreaterThan(10_000);
  });
});

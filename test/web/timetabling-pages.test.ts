/**
 * The web page's Timetabling and Make-up exams views in headless Chromium (Debian's,
 * driven by playwright-core) against a real API server (the service's mount over an
 * engine with the real AUTOMATIC_SCHEDULE, SCHEDULE_PUBLISH and MAKEUP_EXAM_AUTO kinds,
 * the demo term loaded), serving the page from a fresh `vite build`. One server and one
 * browser for the whole file; the data the views show is set up through the services
 * and checked against the public GraphQL API.
 *
 * Proves: the demo term's plan grid shows a lecture where the plan's assignments say it
 * is, locks it, and highlights a clash; the evaluation's breakdown is the API's;
 * publishing from the page puts the published timetable on screen; a .ctt file chosen
 * from disk is imported (and a malformed one refused with its line); a make-up
 * session's arrangement shows by exam, room and student; a viewer is offered no
 * start, publish, lock, copy or import; no serious or critical axe-core violation; usable
 * at 1280 px and at phone width; nothing leaves 127.0.0.1. Screenshots go to
 * test-output/web-tt-*.png.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { makeupExamArrangementRegistration } from '../../src/exams/makeup-exam-arrangement';
import { DEMO_TERM_CODE, loadDemoData } from '../../src/scheduling/demo-data';
import { SchedulePlan } from '../../src/scheduling/entities';
import {
  MakeupExamExamsDocument,
  MakeupExamRoomsDocument,
  MakeupExamSittingsDocument,
  MakeupExamStartArrangementDocument,
  MakeupExamStudentTimetableDocument,
  TimetablingCreatePlanDocument,
  TimetablingPlanAssignmentsDocument,
  TimetablingPlanEvaluationDocument,
  TimetablingPublishedDocument,
  TimetablingStartScheduleDocument,
  TimetablingTermCoursesDocument,
  TimetablingTermCurriculaDocument,
  TimetablingTermPlansDocument,
  TimetablingTermRoomsDocument,
  TimetablingTermsDocument,
  type TypedDocumentString,
} from '../../src/web/api/generated/graphql';
import { readAllPages, readCurricula } from '../../src/web/views/timetabling/read-pages';
import { startTestApiServer, type TestApiServer } from '../api/support/api-server';
import { CHROMIUM_ARGS, CHROMIUM_PATH, requireChromium } from '../api/support/browser';
import { createTermSession } from '../exams/exam-session-fixture';
import { createTestDb, waitForJob } from '../support/engine-harness';
import { schedulingEngine } from '../scheduling/scheduling-harness';
import { buildWebBundle, isLocal } from './support/web-bundle';

const OUTPUT_DIR = path.resolve(__dirname, '../../test-output');
const shot = (name: string) => path.join(OUTPUT_DIR, `web-tt-${name}.png`);
// Polls wait for the page to read the API and render: generous, as CI runs two browser files on two cores.

/** A tiny ITC-2007 instance: two courses of two teachers in one class group, one room, a 2 × 2 week. */
const TINY_CTT = `Name: WebTiny
Courses: 2
Rooms: 1
Days: 2
Periods_per_day: 2
Curricula: 1
Constraints: 1

COURSES:
c1 t1 2 1 10
c2 t2 1 1 10

ROOMS:
r1 20

CURRICULA:
q1 2 c1 c2

UNAVAILABILITY_CONSTRAINTS:
c1 0 0

END.
`;

describe.runIf(requireChromium('test/web/timetabling-pages.test.ts'))('the web page: timetabling and make-up exams', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine;
  let server: TestApiServer;
  let bundle: { dir: string; output: string };
  let browser: Browser;
  let scheduler: BrowserContext;
  let page: Page;
  let tmp: string;
  let termId: string;
  let planId: string;
  let sessionId: string;
  const requests: string[] = [];
  const offsite: string[] = [];
  const pageErrors: string[] = [];

  /** A typed operation of the page, posted over HTTP as the page does. */
  async function api<R, V>(document: TypedDocumentString<R, V> | string, variables: V, token = server.tokens.scheduler): Promise<R> {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: document.toString(), variables }),
    });
    const body = (await response.json()) as { data?: R; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(`GraphQL: ${body.errors.map((e) => e.message).join('; ')}`);
    return body.data!;
  }

  async function signedInContext(token: string, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    // The page keeps its token in sessionStorage: put it there before any script runs.
    await context.addInitScript((value) => {
      try {
        sessionStorage.setItem('jiaowu.token', value);
      } catch {
        // a frame without storage (about:blank, axe's frames): nothing to sign in
      }
    }, token);
    await context.route('**/*', (route) => {
      const url = route.request().url();
      requests.push(url);
      if (isLocal(url)) return route.continue();
      offsite.push(url);
      return route.abort();
    });
    context.on('page', (p) => {
      p.on('websocket', (socket) => requests.push(socket.url()));
      p.on('pageerror', (error) => pageErrors.push(String(error)));
    });
    return context;
  }

  async function axe(on: Page, where: string): Promise<void> {
    const result = await new AxeBuilder({ page: on }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  }

  const noSidewaysScroll = (on: Page) => on.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  /** Elements reaching past the viewport's right edge, but for the week grid's own scrolling frame. */
  const tooWide = (on: Page) =>
    on.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !el.closest('.week-wrap'))
        .map((el) => `${el.tagName.toLowerCase()}[data-testid=${el.getAttribute('data-testid')}] right ${Math.round(el.getBoundingClientRect().right)}`)
        .slice(0, 8),
    );

  const allAssignments = async (id: string) => (await api(TimetablingPlanAssignmentsDocument, { planId: id, first: 300, after: null })).schedulePlan!.assignments;

  beforeAll(async () => {
    [bundle, ctx] = await Promise.all([buildWebBundle(), createTestDb('web_tt')]);
    await loadDemoData(ctx.db.orm.em.fork());
    const demo = await ctx.db.orm.em.fork().findOneOrFail(SchedulePlan, { name: 'Demo draft' }, { populate: ['term'] });
    planId = demo.id;
    termId = demo.term.id;
    engine = schedulingEngine(ctx.db, { extra: [makeupExamArrangementRegistration({ consumers: 1 })] });
    await engine.start();
    server = await startTestApiServer({ engine, services: { orm: ctx.db.orm }, settings: { webRoot: bundle.dir } });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--lang=en-US', '--accept-lang=en-US'], timeout: 20_000 });

    // The demo plan scheduled, and a make-up session arranged, through the public API.
    const scheduled = (await api(TimetablingStartScheduleDocument, { planId, timeLimitSeconds: 4, seed: 5 })).startAutomaticSchedule;
    const session = await createTermSession(() => ctx.db.orm.em.fork(), 'WEB-MAKEUP', 3);
    sessionId = session.id;
    const arranged = (await api(MakeupExamStartArrangementDocument, { sessionId, timeLimitSeconds: 10, seed: 1, maxIterations: 3_000 })).startMakeupExamArrangement;
    expect((await waitForJob(engine, scheduled.id, undefined, 60_000)).status).toBe('SUCCEEDED');
    expect((await waitForJob(engine, arranged.id, undefined, 60_000)).status).toBe('SUCCEEDED');

    scheduler = await signedInContext(server.tokens.scheduler);
    page = await scheduler.newPage();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-web-tt-'));
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.stop(2_000);
    await ctx?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("lists the terms and the demo term's plans, and opens the plan", async () => {
    await page.goto(`${server.url}/timetabling`);
    const row = page.locator(`tr[data-term-code="${DEMO_TERM_CODE}"]`);
    await row.waitFor();
    expect(await row.innerText()).toContain('5 days × 6 periods');
    await row.getByRole('link').first().click();
    await page.waitForURL(new RegExp(`/timetabling/terms/${termId}$`));
    const plan = page.locator(`tr[data-plan-id="${planId}"]`);
    await plan.waitFor();
    expect(await plan.innerText()).toContain('Draft');
    await plan.getByRole('link').click();
    await page.waitForURL(new RegExp(`/timetabling/plans/${planId}$`));
    await page.getByTestId('week-grid').waitFor();
  });

  it('shows a lecture in the grid where the plan says it is, by teacher, class group and room, and locks it', async () => {
    const assignments = await allAssignments(planId);
    const courses = (await api(TimetablingTermCoursesDocument, { termId, first: 450, after: null })).term!.courses;
    const target = assignments.find((a) => a.day > 0 && a.period > 0) ?? assignments[0]!;
    const course = courses.find((c) => c.id === target.course.id)!;
    await page.goto(`${server.url}/timetabling/plans/${planId}`);
    await page.getByTestId('week-grid').waitFor();

    const lectureAt = (on: Page) => on.locator(`td[data-day="${target.day}"][data-period="${target.period}"] [data-assignment-id="${target.id}"]`);
    // By teacher: the course's teacher's week holds it at its day and period, and every lecture of theirs.
    await page.getByTestId('grid-axis').selectOption('teacher');
    await page.getByTestId('grid-resource').selectOption(course.teacher.id);
    await lectureAt(page).waitFor();
    expect(await lectureAt(page).innerText()).toContain(course.code);
    const teachersCourses = new Set(courses.filter((c) => c.teacher.id === course.teacher.id).map((c) => c.id));
    const theirs = assignments.filter((a) => teachersCourses.has(a.course.id));
    expect(await page.getByTestId('lecture').count()).toBe(theirs.length);
    for (const a of theirs) expect(await page.locator(`td[data-day="${a.day}"][data-period="${a.period}"] [data-assignment-id="${a.id}"]`).count()).toBe(1);

    // By class group: every curriculum taking the course holds it at its day and period.
    const curricula = await readCurricula(
      async (first, after, courses) => (await api(TimetablingTermCurriculaDocument, { termId, first, after, courses })).term!.curricula,
      async () => {
        throw new Error('no demo curriculum has 30 courses');
      },
    );
    const taking = curricula.filter((c) => c.courseIds.includes(course.id));
    expect(taking.length).toBeGreaterThan(0);
    await page.getByTestId('grid-axis').selectOption('curriculum');
    for (const curriculum of taking) {
      await page.getByTestId('grid-resource').selectOption(curriculum.id);
      await lectureAt(page).waitFor();
      const members = new Set(curriculum.courseIds);
      expect(await page.getByTestId('lecture').count()).toBe(assignments.filter((a) => members.has(a.course.id)).length);
    }

    // By room: the same lecture in its room's week.
    await page.getByTestId('grid-axis').selectOption('room');
    await page.getByTestId('grid-resource').selectOption(target.room.id);
    await lectureAt(page).waitFor();
    expect(await page.getByTestId('lecture').count()).toBe(assignments.filter((a) => a.room.id === target.room.id).length);

    // Lock it from the grid: the API says it is locked, the grid marks it.
    expect(target.locked).toBe(false);
    await lectureAt(page).getByTestId('lock-toggle').click();
    await expect.poll(() => lectureAt(page).getAttribute('data-locked'), { timeout: 15_000 }).toBe('true');
    await lectureAt(page).getByTestId('locked-mark').waitFor();
    expect((await allAssignments(planId)).find((a) => a.id === target.id)!.locked).toBe(true);
    expect(await lectureAt(page).getByTestId('lock-toggle').getAttribute('aria-pressed')).toBe('true');
    await page.screenshot({ path: shot('plan-1280'), fullPage: true });

    // The evaluation is the API's, constraint by constraint.
    const { evaluation } = (await api(TimetablingPlanEvaluationDocument, { planId, conflicts: 10 })).schedulePlan!;
    await page.getByTestId('penalty').waitFor();
    expect(Number(await page.getByTestId('penalty').innerText())).toBe(evaluation.penalty);
    expect(Number(await page.getByTestId('hard-violations').innerText())).toBe(evaluation.hardViolations);
    for (const [key, value] of Object.entries(evaluation.breakdown)) {
      if (key === '__typename') continue;
      expect(await page.locator(`[data-constraint="${key}"] td`).last().innerText(), key).toBe(String(value));
    }
  });

  it('highlights a clash: two courses of one teacher placed at one slot', async () => {
    const courses = (await api(TimetablingTermCoursesDocument, { termId, first: 450, after: null })).term!.courses;
    const byTeacher = new Map<string, typeof courses>();
    for (const c of courses) byTeacher.set(c.teacher.id, [...(byTeacher.get(c.teacher.id) ?? []), c]);
    const [first, second] = [...byTeacher.values()].find((list) => list.length >= 2)!;
    const rooms = (await api(TimetablingTermRoomsDocument, { termId, first: 500, after: null })).term!.rooms;
    const clash = (await api(TimetablingCreatePlanDocument, { termId, name: 'Clash by hand' })).createSchedulePlan;
    const place = `mutation Place($input: PlaceLectureInput!) { placeLecture(input: $input) { id } }`;
    const a = await api<{ placeLecture: { id: string } }, unknown>(place, { input: { planId: clash.id, courseId: first!.id, lectureIndex: 0, day: 1, period: 2, roomId: rooms[0]!.id } });
    const b = await api<{ placeLecture: { id: string } }, unknown>(place, { input: { planId: clash.id, courseId: second!.id, lectureIndex: 0, day: 1, period: 2, roomId: rooms[1]!.id } });

    await page.goto(`${server.url}/timetabling/plans/${clash.id}`);
    await page.getByTestId('grid-axis').selectOption('teacher');
    await page.getByTestId('grid-resource').selectOption(first!.teacher.id);
    const cell = page.locator('td[data-day="1"][data-period="2"]');
    await expect.poll(() => cell.getByTestId('lecture').count(), { timeout: 15_000 }).toBe(2);
    for (const id of [a.placeLecture.id, b.placeLecture.id]) {
      const lecture = cell.locator(`[data-assignment-id="${id}"]`);
      expect(await lecture.getAttribute('data-conflict')).toBe('true');
      expect(await lecture.getAttribute('data-locked')).toBe('true');
      expect(await lecture.locator('[data-conflict-kind="teacher"]').innerText()).toContain('Teacher clash');
    }
    expect(await page.getByTestId('grid-summary').innerText()).toBe('2 lectures, 2 locked, 2 in conflict');
    // The clash in words, in the page's language, with a way to the room's week of either lecture.
    const teacherCode = (await page.getByTestId('grid-resource').locator('option:checked').innerText()).split(' ')[0]!;
    const clashLine = page.getByTestId('clashes').locator('li[data-conflict-kind="teacher"]');
    expect(await clashLine.innerText()).toContain(`Tuesday, Period 3: teacher ${teacherCode} has ${[first!.code, second!.code].sort().join(', ')}`);
    await page.getByTestId('grid-axis').selectOption('room');
    await page.getByTestId('grid-resource').selectOption(rooms[1]!.id);
    await page.getByTestId('clashes').locator('li[data-conflict-kind="teacher"]').getByRole('button').click();
    await expect.poll(() => page.getByTestId('grid-axis').inputValue(), { timeout: 15_000 }).toBe('teacher');
    await expect.poll(() => page.getByTestId('grid-resource').inputValue(), { timeout: 15_000 }).toBe(first!.teacher.id);
    await expect.poll(() => page.getByTestId('feasible').innerText(), { timeout: 15_000 }).toContain('Not feasible');
    expect(await page.getByTestId('conflict-lines').innerText()).toMatch(/T\d+/);
    await page.screenshot({ path: shot('clash-1280'), fullPage: true });
  });

  it('publishes the plan from the page and shows the published timetable', async () => {
    await page.goto(`${server.url}/timetabling/plans/${planId}`);
    await page.getByTestId('publish-plan').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByTestId('publish-plan').click();
    const started = page.getByTestId('job-started');
    await started.waitFor();
    const jobId = (await started.getAttribute('data-job-id'))!;
    expect(await started.getByRole('link').getAttribute('href')).toBe(`/jobs/${jobId}`);
    expect((await waitForJob(engine, jobId, undefined, 60_000)).status).toBe('SUCCEEDED');
    // Followed live on the plan's page: the job's status, then the plan read again, no reload.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await expect.poll(() => started.getAttribute('data-status'), { timeout: 15_000 }).toBe('SUCCEEDED');
    await expect.poll(() => page.getByTestId('plan-status').getAttribute('data-plan-status'), { timeout: 15_000 }).toBe('PUBLISHED');
    await page.getByTestId('in-force').waitFor();
    expect(await page.getByTestId('publish-plan').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    await page.goto(`${server.url}/timetabling/terms/${termId}`);
    await expect.poll(() => page.locator(`tr[data-plan-id="${planId}"] [data-plan-status]`).getAttribute('data-plan-status'), { timeout: 15_000 }).toBe('PUBLISHED');
    await page.getByTestId('published-link').click();
    await page.waitForURL(/\/published$/);
    expect(await page.getByTestId('published-plan').innerText()).toContain('Demo draft');

    // A teacher's published week is what the API's published timetable says, lecture by lecture.
    const assignments = await allAssignments(planId);
    const courses = (await api(TimetablingTermCoursesDocument, { termId, first: 450, after: null })).term!.courses;
    const teacherId = courses.find((c) => c.id === assignments[0]!.course.id)!.teacher.id;
    await page.getByTestId('published-resource').selectOption(teacherId);
    const published = (await api(TimetablingPublishedDocument, { termId, teacherId, first: 500, after: null }, server.tokens.viewer)).publishedTimetable;
    expect(published.length).toBeGreaterThan(0);
    await expect.poll(async () => [await page.getByTestId('published-entry').count(), await page.locator(`[data-testid="published-entry"][data-teacher="${published[0]!.teacherCode}"]`).count()], { timeout: 15_000 }).toEqual([published.length, published.length]);
    for (const entry of published) {
      const cell = page.locator(`td[data-day="${entry.day}"][data-period="${entry.period}"]`);
      expect(await cell.locator(`[data-course="${entry.courseCode}"][data-room="${entry.roomCode}"]`).count()).toBeGreaterThan(0);
    }
    // By room, another axis of the same timetable.
    await page.getByTestId('published-axis').selectOption('room');
    await page.getByTestId('published-resource').selectOption(published[0]!.roomId);
    const inRoom = (await api(TimetablingPublishedDocument, { termId, roomId: published[0]!.roomId, first: 500, after: null })).publishedTimetable;
    // Every entry shown is the room's (the teacher's week before may have had as many).
    await expect.poll(async () => [await page.getByTestId('published-entry').count(), await page.locator(`[data-testid="published-entry"][data-room="${published[0]!.roomCode}"]`).count()], { timeout: 15_000 }).toEqual([inRoom.length, inRoom.length]);
    for (const entry of inRoom) expect(await page.locator(`td[data-day="${entry.day}"][data-period="${entry.period}"] [data-course="${entry.courseCode}"]`).count()).toBe(1);
    // By class group: the first curriculum code of the first entry.
    await page.getByTestId('published-axis').selectOption('curriculum');
    const curriculum = (await readAllPages(async (first, after) => (await api(TimetablingTermCurriculaDocument, { termId, first, after, courses: 1 })).term!.curricula, 400)).find(
      (c) => c.code === published[0]!.curriculumCodes[0],
    )!;
    await page.getByTestId('published-resource').selectOption(curriculum.id);
    const ofCurriculum = (await api(TimetablingPublishedDocument, { termId, curriculumId: curriculum.id, first: 500, after: null })).publishedTimetable;
    await expect.poll(async () => [await page.getByTestId('published-entry').count(), await page.locator(`[data-testid="published-entry"][data-curricula~="${curriculum.code}"]`).count()], { timeout: 15_000 }).toEqual([ofCurriculum.length, ofCurriculum.length]);
    expect(await page.locator(`td[data-day="${published[0]!.day}"][data-period="${published[0]!.period}"] [data-course="${published[0]!.courseCode}"]`).count()).toBe(1);
    await page.screenshot({ path: shot('published-1280'), fullPage: true });

    // Another choice whose read fails: the error, and none of the class group's lectures under the new caption.
    await page.getByTestId('published-axis').selectOption('teacher');
    await expect.poll(() => page.getByTestId('published-entry').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    const shown = await page.getByTestId('published-resource').inputValue();
    const otherTeacher = courses.map((c) => c.teacher.id).find((id) => id !== shown);
    await page.route('**/graphql', (route) =>
      (route.request().postData() ?? '').includes('TimetablingPublished') ? route.abort('connectionreset') : route.fallback(),
    );
    try {
      await page.getByTestId('published-resource').selectOption(otherTeacher!);
      await page.getByRole('alert').waitFor();
      expect(await page.getByTestId('published-entry').count()).toBe(0);
      expect(await page.getByTestId('published-count').innerText()).toMatch(/\b0\b/);
    } finally {
      await page.unroute('**/graphql');
    }
  });

  it('imports a .ctt file chosen from disk (a malformed one refused by its line), and makes a plan of it', async () => {
    const good = path.join(tmp, 'web-tiny.ctt');
    const bad = path.join(tmp, 'broken.ctt');
    fs.writeFileSync(good, TINY_CTT);
    fs.writeFileSync(bad, TINY_CTT.replace('c2 t2 1 1 10', 'c2 t2 one 1 10'));
    await page.goto(`${server.url}/timetabling`);

    await page.getByTestId('ctt-file').setInputFiles(bad);
    await page.getByTestId('ctt-submit').click();
    await page.getByTestId('ctt-error').waitFor();
    expect(await page.getByTestId('ctt-error').innerText()).toMatch(/line 11/);

    await page.getByTestId('ctt-file').setInputFiles(good);
    await page.getByTestId('ctt-term-code').fill('WEB-TINY');
    await page.getByTestId('ctt-submit').click();
    await page.getByTestId('ctt-done').waitFor();
    const terms = (await api(TimetablingTermsDocument, { first: 400, after: null })).terms;
    const imported = terms.find((t) => t.code === 'WEB-TINY')!;
    expect(imported).toMatchObject({ name: 'WebTiny', daysPerWeek: 2, periodsPerDay: 2 });
    expect(terms.filter((t) => t.name === 'WebTiny')).toHaveLength(1);
    // The list shows the new term without a reload.
    await page.locator('tr[data-term-code="WEB-TINY"]').waitFor();
    await page.getByTestId('ctt-done').getByRole('link').click();
    await page.waitForURL(new RegExp(`/timetabling/terms/${imported.id}$`));
    // No plan published yet; a plan made here opens as an empty draft of the 2 × 2 week.
    await page.getByTestId('published-link').click();
    await page.getByTestId('published-none').waitFor();
    await page.goBack();
    await page.getByTestId('new-plan-name').fill('Tiny draft');
    await page.getByTestId('new-plan').getByRole('button').click();
    await page.waitForURL(/\/timetabling\/plans\/[^/]+$/);
    await expect.poll(() => page.getByTestId('plan-status').getAttribute('data-plan-status'), { timeout: 15_000 }).toBe('DRAFT');
    expect(await page.getByTestId('week-grid').locator('tbody tr').count()).toBe(2);
    expect(await page.getByTestId('week-grid').locator('thead th').count()).toBe(3);
    expect(await page.getByTestId('lecture').count()).toBe(0);
    const plans = (await api(TimetablingTermPlansDocument, { termId: imported.id, first: 10, after: null })).term!.plans;
    expect(plans.map((p) => [p.name, p.status])).toEqual([['Tiny draft', 'DRAFT']]);
    expect(page.url()).toContain(plans[0]!.id);
  });

  it("shows a make-up session's arrangement by exam, room and student", async () => {
    const sittings = (await api(MakeupExamSittingsDocument, { sessionId, first: 190, after: null })).makeupExamSession!.sittings;
    const exams = (await api(MakeupExamExamsDocument, { sessionId, first: 450, after: null })).makeupExamSession!.exams;
    const rooms = (await api(MakeupExamRoomsDocument, { sessionId, first: 500, after: null })).makeupExamSession!.rooms;
    expect(sittings.length).toBeGreaterThan(0);
    const sitting = sittings[0]!;
    const exam = exams.find((e) => e.id === sitting.exam.id)!;
    const room = rooms.find((r) => r.id === sitting.room!.id)!;

    await page.goto(`${server.url}/makeup-exams`);
    const row = page.locator('tr[data-session-code="WEB-MAKEUP"]');
    await row.waitFor();
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`/makeup-exams/${sessionId}$`));
    await expect.poll(() => page.getByTestId('sitting').count(), { timeout: 15_000 }).toBe(sittings.length);
    expect(await page.locator(`[data-testid="sitting"][data-exam="${exam.code}"][data-room="${room.code}"]`).count()).toBeGreaterThan(0);
    expect(await page.getByTestId('exam-evaluation').innerText()).toContain('Feasible');

    await page.getByTestId('arrangement-axis').selectOption('exam');
    await page.getByTestId('arrangement-choice').selectOption(exam.id);
    const ofExam = sittings.filter((s) => s.exam.id === exam.id).length;
    // Every row shown is the exam's (the view before showed the exam's sittings among the rest).
    await expect.poll(async () => [await page.getByTestId('sitting').count(), await page.locator(`[data-testid="sitting"][data-exam="${exam.code}"]`).count()], { timeout: 15_000 }).toEqual([ofExam, ofExam]);

    await page.getByTestId('arrangement-axis').selectOption('room');
    await page.getByTestId('arrangement-choice').selectOption(room.id);
    const inRoom = sittings.filter((s) => s.room?.id === room.id).length;
    await expect.poll(async () => [await page.getByTestId('sitting').count(), await page.locator(`[data-testid="sitting"][data-room="${room.code}"]`).count()], { timeout: 15_000 }).toEqual([inRoom, inRoom]);
    // Another room whose read fails: the error, and none of the first room's sittings under it.
    const otherRoom = await page.getByTestId('arrangement-choice').evaluate((select: HTMLSelectElement, shown) => [...select.options].map((o) => o.value).find((v) => v !== shown)!, room.id);
    await page.route('**/graphql', (route) => ((route.request().postData() ?? '').includes('MakeupExamSittings') ? route.abort('connectionreset') : route.fallback()));
    try {
      await page.getByTestId('arrangement-choice').selectOption(otherRoom);
      await page.getByRole('alert').waitFor();
      expect(await page.getByTestId('sitting').count()).toBe(0);
    } finally {
      await page.unroute('**/graphql');
    }
    await page.getByTestId('arrangement-choice').selectOption(room.id);
    await expect.poll(() => page.getByTestId('sitting').count(), { timeout: 15_000 }).toBe(inRoom);

    // A student who failed the exam's course sits it: their own timetable lists it.
    const enrolments = await api<{ makeupExamSession: { exams: { enrolments: { studentCode: string; score: number | null }[] }[] } }, unknown>(
      `query Failed($id: ID!, $after: ID) { makeupExamSession(id: $id) { exams(first: 1, after: $after) { enrolments(first: 200) { studentCode score } } } }`,
      { id: sessionId, after: exams[exams.indexOf(exam) - 1]?.id ?? null },
    );
    const student = enrolments.makeupExamSession.exams[0]!.enrolments.find((e) => e.score !== null && e.score < 60)!.studentCode;
    const own = (await api(MakeupExamStudentTimetableDocument, { sessionId, studentCode: student, first: 200, after: null })).makeupExamSession!.studentTimetable;
    await page.getByTestId('arrangement-axis').selectOption('student');
    await page.getByTestId('student-code').fill(` ${student} `);
    await page.getByTestId('student-show').click();
    await expect.poll(() => page.getByTestId('sitting').count(), { timeout: 15_000 }).toBe(own.length);
    expect(await page.locator(`[data-testid="sitting"][data-exam="${exam.code}"]`).count()).toBe(1);
    await page.screenshot({ path: shot('makeup-1280'), fullPage: true });

    // Arranged again from the page (another seed, a move budget): followed live, then the evaluation is the new arrangement's.
    const form = page.getByTestId('arrange-form');
    await form.getByLabel('Time limit').fill('10');
    await form.getByLabel('Random seed').fill('2');
    await form.getByLabel('Move budget').fill('2000');
    await page.getByTestId('start-arrangement').click();
    const started = page.getByTestId('job-started');
    await started.waitFor();
    const jobId = (await started.getAttribute('data-job-id'))!;
    await expect.poll(() => started.getAttribute('data-status'), { timeout: 60_000 }).toBe('SUCCEEDED');
    await expect.poll(() => page.getByTestId('exam-evaluation').innerText(), { timeout: 15_000 }).toContain(`Saved by job ${jobId} (seed 2)`);
    await page.getByTestId('sitting').first().waitFor();

    // And once more from the same form: the panel follows the new job, not the finished one.
    await form.getByLabel('Random seed').fill('3');
    await page.getByTestId('start-arrangement').click();
    await expect.poll(() => started.getAttribute('data-job-id'), { timeout: 15_000 }).not.toBe(jobId);
    const again = (await started.getAttribute('data-job-id'))!;
    await expect.poll(() => started.getAttribute('data-status'), { timeout: 60_000 }).toBe('SUCCEEDED');
    await expect.poll(() => page.getByTestId('exam-evaluation').innerText(), { timeout: 15_000 }).toContain(`Saved by job ${again} (seed 3)`);
  });

  it('offers a viewer no start, publish, lock, copy or import', async () => {
    const viewer = await signedInContext(server.tokens.viewer);
    const v = await viewer.newPage();
    await v.goto(`${server.url}/timetabling`);
    await v.locator(`tr[data-term-code="${DEMO_TERM_CODE}"]`).waitFor();
    expect(await v.getByTestId('ctt-import').count()).toBe(0);
    await v.goto(`${server.url}/timetabling/terms/${termId}`);
    await v.getByTestId('plans').waitFor();
    expect(await v.getByTestId('new-plan').count()).toBe(0);
    // The published plan: its grid, with its lectures, and nothing to press.
    await v.goto(`${server.url}/timetabling/plans/${planId}`);
    await v.getByTestId('lecture').first().waitFor();
    await v.getByTestId('penalty').waitFor();
    for (const id of ['schedule-form', 'copy-form', 'publish-form', 'lock-toggle', 'start-schedule', 'publish-plan']) expect(await v.getByTestId(id).count(), id).toBe(0);
    expect(await v.getByRole('button').allInnerTexts()).toEqual(['Sign out']);
    // A draft too: no lock buttons even where an editor would have them.
    const draft = (await api(TimetablingCreatePlanDocument, { termId, name: 'Viewer draft' })).createSchedulePlan;
    await v.goto(`${server.url}/timetabling/plans/${draft.id}`);
    await v.getByTestId('plan-grid').waitFor();
    await v.getByTestId('penalty').waitFor();
    expect(await v.getByRole('button').allInnerTexts()).toEqual(['Sign out']);
    await v.goto(`${server.url}/makeup-exams/${sessionId}`);
    await v.getByTestId('sitting').first().waitFor();
    expect(await v.getByTestId('arrange-form').count()).toBe(0);
    expect(await v.getByRole('button').allInnerTexts()).toEqual(['Sign out']);
    await v.screenshot({ path: shot('viewer-makeup-1280'), fullPage: true });
    await viewer.close();
  });

  it('has no serious or critical accessibility violation on these pages, in English and Chinese', async () => {
    const visits: [string, string][] = [
      ['terms', `/timetabling`],
      ['term', `/timetabling/terms/${termId}`],
      ['plan', `/timetabling/plans/${planId}`],
      ['published', `/timetabling/terms/${termId}/published`],
      ['sessions', `/makeup-exams`],
      ['session', `/makeup-exams/${sessionId}`],
    ];
    const ready: Record<string, string> = { terms: 'terms', term: 'plans', plan: 'penalty', published: 'published-entry', sessions: 'sessions', session: 'sitting' };
    for (const [name, url] of visits) {
      await page.goto(`${server.url}${url}`);
      await page.getByTestId(ready[name]!).first().waitFor();
      await axe(page, `${name} (en)`);
    }
    await page.getByTestId('language').selectOption('zh-CN');
    await expect.poll(() => page.getByTestId('arrangement').locator('h2').innerText(), { timeout: 15_000 }).toBe('补考安排');
    await axe(page, 'session (zh-CN)');
    await page.goto(`${server.url}/timetabling/plans/${planId}`);
    await page.getByTestId('penalty').waitFor();
    expect(await page.getByTestId('plan-grid').locator('h2').innerText()).toBe('周课表');
    expect(await page.getByTestId('plan-status').innerText()).toBe('已发布');
    expect(await page.getByTestId('week-grid').locator('thead').innerText()).toContain('星期一');
    await axe(page, 'plan (zh-CN)');
    await page.screenshot({ path: shot('plan-zh-1280'), fullPage: true });
    await page.getByTestId('language').selectOption('en');
  });

  it('is usable at phone width: the page does not scroll sideways; the week scrolls inside its frame', async () => {
    const phone = await scheduler.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${server.url}/timetabling/plans/${planId}`);
    await phone.getByTestId('lecture').first().waitFor();
    expect(await tooWide(phone)).toEqual([]);
    expect(await noSidewaysScroll(phone)).toBeLessThanOrEqual(0);
    const frame = phone.getByRole('region').first();
    expect(await frame.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    // The frame takes keyboard focus, so arrow keys scroll it.
    await frame.focus();
    await phone.keyboard.press('ArrowRight');
    await expect.poll(() => frame.evaluate((el) => el.scrollLeft), { timeout: 15_000 }).toBeGreaterThan(0);
    await phone.screenshot({ path: shot('plan-phone'), fullPage: true });
    await phone.goto(`${server.url}/makeup-exams/${sessionId}`);
    await phone.getByTestId('sitting').first().waitFor();
    expect(await tooWide(phone)).toEqual([]);
    expect(await noSidewaysScroll(phone)).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: shot('makeup-phone'), fullPage: true });
    await phone.close();
  });

  it('made no request off this machine and threw no page error', () => {
    expect(offsite).toEqual([]);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every(isLocal)).toBe(true);
    expect(pageErrors).toEqual([]);
    for (const name of ['plan-1280', 'clash-1280', 'published-1280', 'makeup-1280', 'plan-zh-1280', 'plan-phone']) expect(fs.statSync(shot(name)).size).toBeGreaterThan(10_000);
  });
});

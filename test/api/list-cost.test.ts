import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Course, Room } from '../../src/academic/entities';
import type { JobEngine } from '../../src/engine/engine';
import { placeLecture, planReadRows } from '../../src/scheduling/plan-service';
import { createTestDb } from '../support/engine-harness';
import { em, schedulingEngine, smallTerm } from '../scheduling/scheduling-harness';
import {
  PlanEvaluationDocument,
  PlanLecturesDocument,
  PlanSolutionTextDocument,
  TermCoursesDocument,
  type PlanLecturesQuery,
  type TermCoursesQuery,
} from './generated/graphql';
import { gql, startTestApiServer, type TestApiServer } from './support/api-server';

const PRODUCTION = { production: true, introspection: false, graphiql: false } as const;
const LECTURES = 12;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let termId: string;
let planId: string;

beforeAll(async () => {
  ctx = await createTestDb('api_list_cost');
  engine = schedulingEngine(ctx.db);
  const { term, plan } = await smallTerm(ctx.db, 'PAGES-1', 5);
  termId = term.id;
  planId = plan.id;
  const courses = await em(ctx.db).find(Course, { term: term.id }, { orderBy: { code: 'asc' }, limit: LECTURES });
  const [room] = await em(ctx.db).find(Room, { term: term.id }, { orderBy: { code: 'asc' }, limit: 1 });
  for (const [i, course] of courses.entries()) {
    await placeLecture(em(ctx.db), { planId, courseId: course.id, lectureIndex: 0, day: i % 5, period: Math.floor(i / 5), roomId: room!.id });
  }
  server = await startTestApiServer({ engine, settings: PRODUCTION, services: { orm: ctx.db.orm } });
});
afterAll(async () => {
  await server?.close();
  await ctx?.close();
});

async function post(target: TestApiServer, query: string, token = target.tokens.viewer) {
  const response = await fetch(`${target.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] } };
}

describe('lists are read a page at a time', () => {
  it('a page holds at most `first` rows; `after` (the last id) continues; the pages make the whole list once, in order', async () => {
    const seen: { id: string; code: string }[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const { body } = await gql(server, TermCoursesDocument, { termId, first: 5, after }, server.tokens.viewer);
      expect(body.errors).toBeUndefined();
      const page: NonNullable<TermCoursesQuery['term']>['courses'] = body.data!.term!.courses;
      expect(page.length).toBeLessThanOrEqual(5);
      seen.push(...page);
      if (page.length < 5) break;
      after = page.at(-1)!.id;
    }
    const all = await em(ctx.db).find(Course, { term: termId }, { orderBy: { code: 'asc' } });
    expect(seen.map((c) => c.code)).toEqual(all.map((c) => c.code));

    const lectures: string[] = [];
    let next: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const { body } = await gql(server, PlanLecturesDocument, { planId, first: 4, after: next }, server.tokens.viewer);
      const page: NonNullable<PlanLecturesQuery['schedulePlan']>['assignments'] = body.data!.schedulePlan!.assignments;
      lectures.push(...page.map((a) => `${a.day}/${a.period}`));
      if (page.length < 4) break;
      next = page.at(-1)!.id;
    }
    expect(lectures).toHaveLength(LECTURES);
    expect(new Set(lectures).size).toBe(LECTURES);
    const slot = (lecture: string) => lecture.split('/').map(Number) as [number, number];
    expect(lectures).toEqual([...lectures].sort((a, b) => slot(a)[0] - slot(b)[0] || slot(a)[1] - slot(b)[1]));
  });

  it('refuses a page beyond the maximum, and an `after` that is no row of the list, naming the argument', async () => {
    const tooBig = await gql(server, TermCoursesDocument, { termId, first: 501, after: null }, server.tokens.viewer);
    expect(tooBig.body.errors![0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/first/) });
    const unknown = await gql(server, TermCoursesDocument, { termId, first: 5, after: '00000000-0000-4000-8000-000000000000' }, server.tokens.viewer);
    expect(unknown.body.errors![0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/^after: no course with id/) });
    const malformed = await gql(server, TermCoursesDocument, { termId, first: 5, after: 'c0001' }, server.tokens.viewer);
    expect(malformed.body.errors![0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/after/) });
  });
});

describe('the cost of a query is what its lists can return', () => {
  it('ten aliases of the terms with all their courses and teachers cost their pages, and are refused', async () => {
    const aliases = [...Array(10)].map((_, i) => `t${i}: terms { courses { code teacher { code } } teachers { code } }`).join(' ');
    const { status, body } = await post(server, `{ ${aliases} }`);
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', maxComplexity: 1000 });
    // 10 × 20 terms × (1 + 20 courses × 2 + 20 teachers).
    expect(body.errors![0]!.extensions.complexity).toBe(10 * 20 * (1 + 20 * 2 + 20));
  });

  it("every plan's evaluation and solution text cost at least their fixed part each: the plans of every term are refused", async () => {
    const { status, body } = await post(server, '{ terms { plans { evaluation { penalty } solutionText } } }');
    expect(status).toBe(400);
    expect(body.errors![0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors![0]!.extensions.complexity).toBeGreaterThan(1000);
  });

  it("evaluation and solutionText charge the rows they read when they run, within what the query's cost left", async () => {
    const rows = await planReadRows(em(ctx.db), planId);
    const charge = Math.ceil(rows / 10);
    expect(charge).toBeGreaterThan(2);
    // schedulePlan (1) + evaluation (10) + conflicts (1): 12 before the run-time charge.
    const staticCost = 12;
    const exact = await startTestApiServer({ engine, settings: { ...PRODUCTION, maxComplexity: staticCost + charge }, services: { orm: ctx.db.orm } });
    const short = await startTestApiServer({ engine, settings: { ...PRODUCTION, maxComplexity: staticCost + charge - 1 }, services: { orm: ctx.db.orm } });
    try {
      const fits = await gql(exact, PlanEvaluationDocument, { planId }, exact.tokens.viewer);
      expect(fits.body.errors).toBeUndefined();
      expect(fits.body.data!.schedulePlan!.evaluation.conflicts.length).toBeLessThanOrEqual(2);
      const refused = await gql(short, PlanEvaluationDocument, { planId }, short.tokens.viewer);
      expect(refused.body.errors![0]).toMatchObject({
        path: ['schedulePlan', 'evaluation'],
        extensions: { code: 'QUERY_TOO_COMPLEX', cost: charge, remaining: charge - 1 },
      });
      expect(refused.body.errors![0]!.message).toMatch(new RegExp(`^The evaluation of plan ${planId} \\(${rows} rows to read\\)`));
      const text = await gql(short, PlanSolutionTextDocument, { planId }, short.tokens.viewer);
      expect(text.body.errors).toBeUndefined();
      expect(text.body.data!.schedulePlan!.solutionText.trim().split('\n')).toHaveLength(LECTURES);
    } finally {
      await exact.close();
      await short.close();
    }
  });
});

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { graphql, parse, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Course, Room } from '../../src/academic/entities';
import { ApiRole } from '../../src/api/auth/viewer';
import { buildApiSchema } from '../../src/api/graphql/build-schema';
import { createContext } from '../../src/api/graphql/context';
import { JobEventHub } from '../../src/api/graphql/job-event-hub';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { startAutomaticSchedule } from '../../src/scheduling/automatic-schedule';
import { placeLecture } from '../../src/scheduling/plan-service';
import { createTestDb } from '../support/engine-harness';
import { collect, startTestApiServer, wsClient } from '../api/support/api-server';
import { em, schedulingEngine, smallTerm } from './scheduling-harness';

// Every nested list and reference of the academic and scheduling types, several levels deep.
const EVERYTHING = `{
  terms {
    code
    teachers { code }
    rooms { code }
    courses { code teacher { code } }
    curricula { code courses { code teacher { code } } }
    unavailability { day period course { code } teacher { code } }
    plans { name term { code } assignments { day period course { code teacher { code } } room { code } } }
    publishedPlan { id }
  }
}`;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let schema: GraphQLSchema;

beforeAll(async () => {
  ctx = await createTestDb('sched_batching');
  engine = schedulingEngine(ctx.db);
  schema = await buildApiSchema();
});
afterAll(async () => {
  await ctx.close();
});

const JOBS_WITH_PLANS = `{ jobs(first: 50) { edges { node { id ... on AutomaticScheduleJob { plan { name term { code } } } } } } }`;

/** Runs one document as a viewer and counts the SQL statements it issued. */
async function countQueries(source: string) {
  let statements = 0;
  const knex = ctx.db.orm.em.getConnection().getKnex();
  const onQuery = () => statements++;
  knex.on('query', onQuery);
  try {
    const contextValue = createContext(
      { engine, hub: new JobEventHub(engine), logger: silentLogger, services: { orm: ctx.db.orm } },
      { subject: 'viewer-1', roles: new Set([ApiRole.VIEWER]), grants: new Set(), expiresAt: null },
    );
    const result = await graphql({ schema, source, contextValue });
    expect(result.errors).toBeUndefined();
    return { statements, data: result.data as { terms: Array<Record<string, any>> } };
  } finally {
    knex.off('query', onQuery);
  }
}

/** A generated term whose draft plan has a few lectures placed, and a second plan. */
async function termWithPlans(code: string, seed: number) {
  const { term, plan } = await smallTerm(ctx.db, code, seed);
  const courses = await em(ctx.db).find(Course, { term: term.id }, { orderBy: { code: 'asc' }, limit: 3 });
  const [room] = await em(ctx.db).find(Room, { term: term.id }, { orderBy: { code: 'asc' }, limit: 1 });
  for (const [i, course] of courses.entries()) {
    await placeLecture(em(ctx.db), { planId: plan.id, courseId: course.id, lectureIndex: 0, day: i, period: 0, roomId: room!.id });
  }
  // Not started: the job stays QUEUED, which is all the jobs query needs.
  await startAutomaticSchedule({ em: em(ctx.db), engine }, { planId: plan.id, timeLimitSeconds: 5 }, 'viewer-1');
  return { term, plan };
}

describe('nested academic and scheduling fields are batched', () => {
  it('issues the same number of statements for one term as for three: no query per row', async () => {
    await termWithPlans('BATCH-1', 3);
    const one = await countQueries(EVERYTHING);
    expect(one.data.terms).toHaveLength(1);
    const [t] = one.data.terms;
    // The data is all there (a batched loader must not drop or mix rows).
    expect(t!.courses.length).toBe(16);
    expect(t!.courses.every((c: any) => typeof c.teacher.code === 'string')).toBe(true);
    expect(t!.curricula.every((c: any) => c.courses.length > 0)).toBe(true);
    expect(t!.plans[0].assignments).toHaveLength(3);
    expect(t!.plans[0].term.code).toBe('BATCH-1');

    await termWithPlans('BATCH-2', 4);
    await termWithPlans('BATCH-3', 5);
    const three = await countQueries(EVERYTHING);
    expect(three.data.terms.map((x) => x.code)).toEqual(['BATCH-1', 'BATCH-2', 'BATCH-3']);
    for (const term of three.data.terms) {
      // Each term got its own rows back, not another term's.
      expect(term.plans[0].term.code).toBe(term.code);
      expect(term.plans[0].assignments).toHaveLength(3);
      expect(new Set(term.courses.map((c: any) => c.code)).size).toBe(16);
    }
    // One statement per list field (terms, teachers, rooms, courses, curricula,
    // unavailability, plans, published plan, assignments: 9) plus at most one per level of
    // the references the lists did not bring along: courses at levels 3 (curricula,
    // unavailability) and 4 (assignments), teachers at 3, 4 and 5, rooms at 4 — 6; whether
    // each is needed depends on which list answered first, so it varies with timing.
    // However many terms, plans, courses or lectures. Without batching: 25 and 61.
    expect(one.statements).toBeLessThanOrEqual(15);
    expect(three.statements).toBeLessThanOrEqual(15);
  });

  it("reads each job's plan in one statement for the whole page", async () => {
    const page = await countQueries(JOBS_WITH_PLANS);
    const nodes = (page.data as unknown as { jobs: { edges: Array<{ node: any }> } }).jobs.edges.map((e) => e.node);
    expect(nodes.map((n) => n.plan.term.code).sort()).toEqual(['BATCH-1', 'BATCH-2', 'BATCH-3']);
    // The plans, then their terms: two ORM statements for three jobs, not two per job. (The
    // page itself is the engine's, read through its own pool.)
    expect(page.statements).toBe(2);
  });
});

describe('a subscription reads the database afresh for each event', () => {
  it("shows the job's plan as it is when the event goes out, not as the first event found it", async () => {
    const { plan } = await smallTerm(ctx.db, 'FRESH-1', 9);
    const job = await startAutomaticSchedule({ em: em(ctx.db), engine }, { planId: plan.id, timeLimitSeconds: 5 }, 'viewer-1');
    // The real socket server (graphql-ws), not started as a worker: the job stays QUEUED until the cancel ends it.
    const server = await startTestApiServer({ engine, services: { orm: ctx.db.orm } });
    const client = wsClient(server, server.tokens.admin);
    try {
      const events = collect(
        client,
        parse(`subscription($id: ID!) { jobProgress(jobId: $id) { reason job { ... on AutomaticScheduleJob { plan { name } } } } }`) as TypedDocumentNode<
          { jobProgress: { reason: string; job: { plan: { name: string } } } },
          { id: string }
        >,
        { id: job.id },
      );
      const [first] = await events.first(1);
      expect(first!.errors).toBeUndefined();
      expect(first!.data!.jobProgress.job.plan.name).toBe('Draft timetable');
      // Renamed between two events of the same subscription (well within a second).
      await ctx.db.pool.query('UPDATE schedule_plans SET name = $1 WHERE id = $2', ['Renamed', plan.id]);
      await engine.cancel(job.id);
      await events.done;
      const last = events.results.at(-1)!;
      expect(last.data!.jobProgress.reason).toBe('CANCELLED');
      expect(last.data!.jobProgress.job.plan.name).toBe('Renamed');
    } finally {
      await client.dispose();
      await server.close();
    }
  });
});

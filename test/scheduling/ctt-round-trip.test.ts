import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCurriculumTimetabling } from '../../src/scheduling/ctt-import';
import type { JobEngine } from '../../src/engine/engine';
import { JobStatus } from '../../src/engine/types';
import { startAutomaticSchedule, type AutomaticScheduleResult } from '../../src/scheduling/automatic-schedule';
import { parseCtt, parseSolution } from '../../src/scheduling/ctt/ctt-format';
import { evaluateTimetable } from '../../src/scheduling/ctt/evaluator';
import { compileModel } from '../../src/scheduling/ctt/model';
import { createSchedulePlan, evaluateSchedulePlan, solutionText } from '../../src/scheduling/plan-service';
import { createTestDb, waitForJob } from '../support/engine-harness';
import { em, schedulingEngine } from './scheduling-harness';

// Read from the shared datasets at run time; never copied into the repository.
const COMP01 = join(__dirname, '../../../shared/datasets/itc2007-ctt/comp01.ctt');

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;

beforeAll(async () => {
  ctx = await createTestDb('sched_roundtrip');
  engine = schedulingEngine(ctx.db);
  await engine.start();
});
afterAll(async () => {
  await engine.stop(2_000);
  await ctx.close();
});

describe('ITC-2007 import / export round trip', () => {
  it('imports comp01, schedules it, exports solution text that checks against the original file', async () => {
    const text = readFileSync(COMP01, 'utf8');
    const term = await importCurriculumTimetabling(em(ctx.db), text, 'comp01');
    const plan = await createSchedulePlan(em(ctx.db), { termId: term.id, name: 'comp01 run' });
    expect(await solutionText(em(ctx.db), plan.id)).toBe('');

    const job = await startAutomaticSchedule({ em: em(ctx.db), engine }, { planId: plan.id, timeLimitSeconds: 3, seed: 1 });
    const done = await waitForJob(engine, job.id, undefined, 30_000);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    const result = done.result as AutomaticScheduleResult;
    expect(result.hardViolations).toBe(0);

    const exported = await solutionText(em(ctx.db), plan.id);
    const lines = exported.trim().split('\n');
    expect(lines).toHaveLength(160); // comp01 has 160 lectures
    expect(lines[0]).toMatch(/^c\d{4} r\S+ \d \d$/);

    // Checked against the original file, not our database.
    const instance = compileModel(parseCtt(text));
    const evaluation = evaluateTimetable(instance, parseSolution(exported, instance));
    expect(evaluation.hard.total).toBe(0);
    expect(evaluation.repeatedEntries).toBe(0);
    expect(evaluation.soft.total).toBe(result.penalty);
    const ours = await evaluateSchedulePlan(em(ctx.db), plan.id);
    expect(ours.penalty).toBe(evaluation.soft.total);
    expect(ours.breakdown).toMatchObject({
      roomCapacity: evaluation.soft.roomCapacity,
      minWorkingDays: evaluation.soft.minWorkingDays,
      curriculumCompactness: evaluation.soft.curriculumCompactness,
      roomStability: evaluation.soft.roomStability,
    });
  });
});

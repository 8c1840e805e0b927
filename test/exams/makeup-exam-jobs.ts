/**
 * The MAKEUP_EXAM_AUTO job tests' shared set-up: a test database of their own, an engine
 * running only that kind (stopped after each test), and the reads they check with.
 * Call at a test file's top level: it installs the file's hooks.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { findArrangement } from '../../src/exams/arrangement-service';
import { MakeupExamSitting } from '../../src/exams/entities';
import { makeupExamArrangementRegistration, startMakeupExamArrangement, type MakeupExamArrangementOptions } from '../../src/exams/makeup-exam-arrangement';
import { buildEngine, createTestDb } from '../support/engine-harness';

export interface ExamEngineSettings {
  attemptLimit?: number;
  consumers?: number;
  /** false: built but not started (the test starts it). Default true. */
  started?: boolean;
}

export function makeupExamJobs(database: string) {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  let engine: JobEngine | undefined;
  beforeAll(async () => {
    ctx = await createTestDb(database);
  });
  afterEach(async () => {
    await engine?.stop(2_000);
    engine = undefined;
  });
  afterAll(async () => {
    await ctx.close();
  });

  const em = () => ctx.db.orm.em.fork();
  const jobs = {
    em,
    get db() {
      return ctx.db;
    },
    /** The engine of the running test (made by `examEngine`). */
    get engine(): JobEngine {
      if (!engine) throw new Error('no engine: call examEngine() first');
      return engine;
    },
    async examEngine(options: MakeupExamArrangementOptions = {}, settings: ExamEngineSettings = {}): Promise<JobEngine> {
      const { attemptLimit = 3, consumers = 2, started = true } = settings;
      engine = buildEngine({ db: ctx.db, registrations: [makeupExamArrangementRegistration({ consumers }, options)], settings: { attemptLimit } });
      if (started) await engine.start();
      return engine;
    },
    start: (input: { sessionId: string; timeLimitSeconds?: number; seed?: number; maxIterations?: number }) =>
      startMakeupExamArrangement({ em: em(), engine: jobs.engine }, input, 'tester'),
    /** The saved arrangement's sittings, one line each, sorted: equal lines, equal arrangements. */
    async sittingsOf(sessionId: string): Promise<string[]> {
      const arrangement = await findArrangement(em(), sessionId);
      if (!arrangement) return [];
      const rows = await em().find(MakeupExamSitting, { arrangement }, { populate: ['exam', 'period', 'room', 'invigilator'] });
      return rows.map((s) => `${s.exam.code}@${s.period.position}:${s.room?.code ?? '-'}x${s.seats}/${s.invigilator?.id ?? '-'}`).sort();
    },
  };
  return jobs;
}

import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { emSql, poolSql, type Sql } from './db/sql';
import { badInput, conflict } from './errors';
import { getActiveJobByExclusiveKey, getJobByIdempotencyKey } from './queries/get-job';
import { insertJob, type InsertJobArgs } from './queries/insert-job';
import { toSnapshot, type JobRow } from './queries/job-row';
import type { KindRegistry } from './registry';
import type { JobSnapshot } from './types';

export interface EnqueueRequest {
  kind: string;
  input: unknown;
  requestedBy?: string | null;
  /** The same key for the same kind returns the job it first created. */
  idempotencyKey?: string | null;
  /** One active job per key (e.g. `schedule-plan:<id>`); a second start is a CONFLICT. */
  exclusiveKey?: string | null;
}

export interface EnqueueResult {
  job: JobSnapshot;
  /** False when an idempotency key returned an existing job. */
  created: boolean;
}

const MAX_KEY_LENGTH = 200;

/**
 * Writes a job and its outbox row by one statement, returning no row when the job's
 * idempotency key or active exclusive key is taken (`insertJob`, or the engine's batch
 * of `insertJobs`).
 */
export type InsertJobWrite = (args: InsertJobArgs) => Promise<JobRow | undefined>;

/**
 * Writes the job and its outbox row with `insert` (by default `insertJob` with `sql`,
 * which may run in the caller's transaction). Nothing is published here: the outbox
 * publisher sends the message once the write has committed. The insert goes first and a
 * taken key is looked up only when it wrote nothing — one round trip in the common case.
 * A taken key never raises a unique violation, so a caller's transaction stays usable.
 */
export async function enqueueWith(
  sql: Sql,
  registry: KindRegistry,
  request: EnqueueRequest,
  insert: InsertJobWrite = (args) => insertJob(sql, args),
): Promise<EnqueueResult> {
  const registration = registry.get(request.kind);
  if (!registration) throw badInput(`Unknown job kind "${request.kind}"`, { kind: request.kind });
  for (const [name, value] of [
    ['idempotencyKey', request.idempotencyKey],
    ['exclusiveKey', request.exclusiveKey],
  ] as const) {
    if (value != null && (value.length === 0 || value.length > MAX_KEY_LENGTH)) {
      throw badInput(`${name} must be 1–${MAX_KEY_LENGTH} characters`, { [name]: value });
    }
  }
  const input = registration.validateInput ? registration.validateInput(request.input) : request.input;

  if (request.idempotencyKey) {
    const existing = await getJobByIdempotencyKey(sql, request.kind, request.idempotencyKey);
    if (existing) return sameRequestOrConflict(toSnapshot(existing), input);
  }
  const args: InsertJobArgs = {
    jobId: randomUUID(),
    outboxId: randomUUID(),
    kind: request.kind,
    input,
    requestedBy: request.requestedBy ?? null,
    idempotencyKey: request.idempotencyKey ?? null,
    exclusiveKey: request.exclusiveKey ?? null,
  };
  const row = await insert(args);
  if (row) return { job: toSnapshot(row), created: true };
  // Nothing written: a key is taken. The idempotency key's job (another request's, that
  // won a race) is the answer; otherwise the exclusive key's active job refuses it.
  if (request.idempotencyKey) {
    const existing = await getJobByIdempotencyKey(sql, request.kind, request.idempotencyKey);
    if (existing) return sameRequestOrConflict(toSnapshot(existing), input);
  }
  if (request.exclusiveKey) {
    const active = await getActiveJobByExclusiveKey(sql, request.exclusiveKey);
    throw exclusiveConflict(request.exclusiveKey, active?.id ?? null, active?.status ?? null);
  }
  throw new Error(`job ${args.jobId} was not written and no key of it is taken`);
}

function sameRequestOrConflict(job: JobSnapshot, input: unknown): EnqueueResult {
  if (canonicalJson(job.input) !== canonicalJson(input)) {
    throw conflict(`This idempotency key was already used for job ${job.id} with different input`, { jobId: job.id });
  }
  return { job, created: false };
}

function exclusiveConflict(key: string, jobId: string | null, status: string | null) {
  return conflict(
    jobId
      ? `Job ${jobId} (${status}) is already active for ${key}; wait for it to finish or cancel it`
      : `Another job became active for ${key} at the same moment; wait for it to finish or cancel it`,
    { exclusiveKey: key, activeJobId: jobId },
  );
}

/** Enqueue in the caller's MikroORM transaction (`em` inside `em.transactional`). */
export const enqueueInEm = (em: EntityManager, registry: KindRegistry, request: EnqueueRequest) =>
  enqueueWith(emSql(em), registry, request);

/** Enqueue with statements that each commit on their own (see `enqueueWith`; the engine's own enqueue batches them). */
export const enqueueInPool = (pool: Pool, registry: KindRegistry, request: EnqueueRequest, insert?: InsertJobWrite) =>
  enqueueWith(poolSql(pool), registry, request, insert);

/** JSON with object keys sorted, so that jsonb's key order does not matter in comparisons. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

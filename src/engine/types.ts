/**
 * The engine's vocabulary. The engine is generic over job kinds: a kind is a plain
 * string registered by a domain module, never an enum the engine switches over.
 */

declare const jobIdBrand: unique symbol;
declare const outboxIdBrand: unique symbol;

/** A job's id (uuid). Distinct from an outbox message id, though both are uuids. */
export type JobId = string & { readonly [jobIdBrand]: true };
/** An outbox message's id (uuid): one delivery mechanism record for a job. */
export type OutboxId = string & { readonly [outboxIdBrand]: true };

export const asJobId = (id: string): JobId => id as JobId;
export const asOutboxId = (id: string): OutboxId => id as OutboxId;

export enum JobStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
  CANCELLED = 'CANCELLED',
}

export const TERMINAL_STATUSES: readonly JobStatus[] = [JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED];
export const isTerminal = (status: JobStatus): boolean => TERMINAL_STATUSES.includes(status);

export enum OutboxState {
  PENDING = 'PENDING',
  PUBLISHING = 'PUBLISHING',
  PUBLISHED = 'PUBLISHED',
  PROCESSING = 'PROCESSING',
  COMPLETED = 'COMPLETED',
}

/**
 * An outbox row's `stage`, computed by PostgreSQL from its state: what the partial
 * indexes read (entities/outbox-message.entity.ts). The two states between the publisher
 * and a claim share one, so the broker's confirm moves no index entry.
 */
export enum OutboxStage {
  PENDING = 'PENDING',
  /** PUBLISHING or PUBLISHED: handed to the broker. */
  SENT = 'SENT',
  PROCESSING = 'PROCESSING',
  COMPLETED = 'COMPLETED',
}

/** Why an event was emitted: lets a UI tell a heartbeat from a real change. */
export enum JobEventReason {
  /** Not a change: the job's current state, sent first to a new watcher. */
  SNAPSHOT = 'SNAPSHOT',
  ENQUEUED = 'ENQUEUED',
  STARTED = 'STARTED',
  STEP = 'STEP',
  PROGRESS = 'PROGRESS',
  HEARTBEAT = 'HEARTBEAT',
  RETRY_SCHEDULED = 'RETRY_SCHEDULED',
  CANCEL_REQUESTED = 'CANCEL_REQUESTED',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
  CANCELLED = 'CANCELLED',
  RETRIED = 'RETRIED',
}

/**
 * A sentence a job shows, with the stable code and named parameters it was made from, so
 * a UI (or the API, per request) can say it in another language. The engine stores and
 * forwards all three without reading them; a plain string is a sentence with no code.
 */
export interface JobText {
  code: string | null;
  params: Readonly<Record<string, unknown>> | null;
  /** The sentence in the default language (English). */
  text: string;
}

export const asJobText = (value: string | JobText): JobText => (typeof value === 'string' ? { code: null, params: null, text: value } : value);

/** Everything a watcher may see of a job; every event carries one whole. */
export interface JobSnapshot {
  id: JobId;
  kind: string;
  status: JobStatus;
  currentStep: string | null;
  /** The step's stable code (null for a step named without one). */
  currentStepCode: string | null;
  progress: number;
  message: string | null;
  messageCode: string | null;
  messageParams: Readonly<Record<string, unknown>> | null;
  sequence: number;
  attempts: number;
  errorMessage: string | null;
  errorCode: string | null;
  errorParams: Readonly<Record<string, unknown>> | null;
  requestedBy: string | null;
  exclusiveKey: string | null;
  input: unknown;
  result: unknown;
  cancelRequested: boolean;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

export interface JobEvent {
  jobId: JobId;
  kind: string;
  status: JobStatus;
  currentStep: string | null;
  currentStepCode: string | null;
  progress: number;
  message: string | null;
  messageCode: string | null;
  messageParams: Readonly<Record<string, unknown>> | null;
  sequence: number;
  reason: JobEventReason;
  occurredAt: Date;
  job: JobSnapshot;
}

export function eventOf(job: JobSnapshot, reason: JobEventReason, occurredAt = new Date()): JobEvent {
  return {
    jobId: job.id,
    kind: job.kind,
    status: job.status,
    currentStep: job.currentStep,
    currentStepCode: job.currentStepCode,
    progress: job.progress,
    message: job.message,
    messageCode: job.messageCode,
    messageParams: job.messageParams,
    sequence: job.sequence,
    reason,
    occurredAt,
    job,
  };
}

/** The body of a work message on a transport: enough to find the outbox row. */
export interface JobMessage {
  outboxId: OutboxId;
  jobId: JobId;
  kind: string;
}

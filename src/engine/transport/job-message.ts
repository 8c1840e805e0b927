import { asJobId, asOutboxId, type JobMessage } from '../types';

/** Why a delivery was parked instead of run. */
export enum ParkReason {
  /** Not a work message: not JSON, a field missing, or an id that is not a UUID. */
  MALFORMED = 'malformed',
  /** A well-formed message of another kind than the queue it arrived on. */
  WRONG_QUEUE = 'wrong-queue',
  /** Its outbox row belongs to another job or kind: running it would run the wrong processor on a real job. */
  MISMATCH = 'mismatch',
}

/** Canonical UUID text, as PostgreSQL writes it (any case). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

type CheckedJobMessage = { ok: true; message: JobMessage } | { ok: false; reason: ParkReason; detail: string };
export type ParsedJobMessages = { ok: true; messages: JobMessage[] } | { ok: false; reason: ParkReason; detail: string };

/** Most jobs one broker message may carry (`JOBS_PER_MESSAGE_<KIND>`'s upper bound). */
export const MAX_JOBS_PER_MESSAGE = 64;

/** What a message carries of one job: `{ outboxId, jobId, kind }`. */
const wireForm = (message: JobMessage) => ({ outboxId: message.outboxId, jobId: message.jobId, kind: message.kind });

/** The body of one job's message. */
export const encodeJobMessage = (message: JobMessage): Buffer => Buffer.from(JSON.stringify(wireForm(message)));

/**
 * The body of a broker message carrying several jobs of one kind: a JSON array of
 * job messages. One job alone keeps the plain object body.
 */
export function encodeJobMessages(messages: readonly JobMessage[]): Buffer {
  if (messages.length === 1) return encodeJobMessage(messages[0]!);
  return Buffer.from(JSON.stringify(messages.map(wireForm)));
}

/**
 * Checks a work message body in full before anything reads the database with it: a
 * value that is not a UUID would break the batched claim (`$1::uuid[]`) of every
 * message claimed with it, and a message on the wrong queue would run the wrong
 * kind's processor. What fails here is parked, never retried: it fails the same way
 * every time. A body carries one job (an object) or several (an array of
 * 1–`MAX_JOBS_PER_MESSAGE` objects); one bad job fails the whole body — the publisher
 * writes none, so no part of it is ours to run.
 */
export function parseJobMessages(content: Buffer, queueKind: string): ParsedJobMessages {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch {
    return { ok: false, reason: ParkReason.MALFORMED, detail: 'the body is not JSON' };
  }
  if (!Array.isArray(value)) {
    if (!value || typeof value !== 'object') return { ok: false, reason: ParkReason.MALFORMED, detail: 'the body is not a JSON object or array' };
    const one = checkJobMessage(value, queueKind);
    return one.ok ? { ok: true, messages: [one.message] } : one;
  }
  if (value.length === 0 || value.length > MAX_JOBS_PER_MESSAGE) {
    return { ok: false, reason: ParkReason.MALFORMED, detail: `an array of ${value.length} jobs (1–${MAX_JOBS_PER_MESSAGE} allowed)` };
  }
  const messages: JobMessage[] = [];
  for (const [i, element] of value.entries()) {
    if (!element || typeof element !== 'object' || Array.isArray(element)) {
      return { ok: false, reason: ParkReason.MALFORMED, detail: `job ${i} of the array is not a JSON object` };
    }
    const one = checkJobMessage(element, queueKind);
    if (!one.ok) return { ...one, detail: `job ${i} of the array: ${one.detail}` };
    messages.push(one.message);
  }
  return { ok: true, messages };
}

function checkJobMessage(value: object, queueKind: string): CheckedJobMessage {
  const { outboxId, jobId, kind } = value as Record<string, unknown>;
  if (!isUuid(outboxId)) return { ok: false, reason: ParkReason.MALFORMED, detail: 'outboxId is not a UUID' };
  if (!isUuid(jobId)) return { ok: false, reason: ParkReason.MALFORMED, detail: 'jobId is not a UUID' };
  if (typeof kind !== 'string' || kind.length === 0) return { ok: false, reason: ParkReason.MALFORMED, detail: 'kind is missing' };
  if (kind !== queueKind) {
    return { ok: false, reason: ParkReason.WRONG_QUEUE, detail: `a ${truncate(kind, 100)} message on the ${queueKind} queue` };
  }
  return { ok: true, message: { outboxId: asOutboxId(outboxId.toLowerCase()), jobId: asJobId(jobId.toLowerCase()), kind } };
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

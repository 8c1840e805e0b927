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

export type ParsedJobMessage = { ok: true; message: JobMessage } | { ok: false; reason: ParkReason; detail: string };

/**
 * Checks a work message body in full before anything reads the database with it: a
 * value that is not a UUID would break the batched claim (`$1::uuid[]`) of every
 * message claimed with it, and a message on the wrong queue would run the wrong
 * kind's processor. What fails here is parked, never retried: it fails the same way
 * every time.
 */
export function parseJobMessage(content: Buffer, queueKind: string): ParsedJobMessage {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch {
    return { ok: false, reason: ParkReason.MALFORMED, detail: 'the body is not JSON' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: ParkReason.MALFORMED, detail: 'the body is not a JSON object' };
  }
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

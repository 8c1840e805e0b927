import { asJobId, type JobSnapshot, type JobStatus } from '../types';

/** The columns every statement returns for a job, and their mapping to a snapshot. */
export const JOB_COLUMNS = `id, kind, status, current_step, current_step_code, progress, message, message_code, message_params,
  sequence, attempts, error_message, error_code, error_params, requested_by, exclusive_key, input, result, cancel_requested_at, created_at, updated_at, started_at, completed_at`;

/** The same columns qualified by a table alias, for statements with joins. */
export const jobColumnsOf = (alias: string): string =>
  JOB_COLUMNS.split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

export interface JobRow {
  id: string;
  kind: string;
  status: string;
  current_step: string | null;
  current_step_code: string | null;
  progress: number;
  message: string | null;
  message_code: string | null;
  message_params: Record<string, unknown> | null;
  sequence: string | number;
  attempts: number;
  error_message: string | null;
  error_code: string | null;
  error_params: Record<string, unknown> | null;
  requested_by: string | null;
  exclusive_key: string | null;
  input: unknown;
  result: unknown;
  cancel_requested_at: Date | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

const asDate = (value: Date | string | null): Date | null => (value === null ? null : value instanceof Date ? value : new Date(value));

export function toSnapshot(row: JobRow): JobSnapshot {
  return {
    id: asJobId(row.id),
    kind: row.kind,
    status: row.status as JobStatus,
    currentStep: row.current_step,
    currentStepCode: row.current_step_code ?? null,
    progress: Number(row.progress),
    message: row.message,
    messageCode: row.message_code ?? null,
    messageParams: row.message_params ?? null,
    sequence: Number(row.sequence),
    attempts: row.attempts,
    errorMessage: row.error_message,
    errorCode: row.error_code ?? null,
    errorParams: row.error_params ?? null,
    requestedBy: row.requested_by,
    exclusiveKey: row.exclusive_key,
    input: row.input,
    result: row.result ?? null,
    cancelRequested: row.cancel_requested_at !== null,
    createdAt: asDate(row.created_at)!,
    updatedAt: asDate(row.updated_at)!,
    startedAt: asDate(row.started_at),
    completedAt: asDate(row.completed_at),
  };
}

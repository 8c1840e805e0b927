import { registerEnumType } from 'type-graphql';
import { JobStatus } from '../../../engine/types';
import { JobKind } from '../../../job-kinds';

/** Why an event was sent; SNAPSHOT marks the current state sent first to a new subscriber. */
export enum JobEventReasonValue {
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

export enum HealthStatusValue {
  HEALTHY = 'HEALTHY',
  DEGRADED = 'DEGRADED',
  UNHEALTHY = 'UNHEALTHY',
}

registerEnumType(JobKind, { name: 'JobKind', description: 'The kinds of background job this service runs.' });
registerEnumType(JobStatus, {
  name: 'JobStatus',
  description: 'QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED (a retry starts again at QUEUED).',
});
registerEnumType(JobEventReasonValue, { name: 'JobEventReason', description: 'Why a job event was sent.' });
registerEnumType(HealthStatusValue, { name: 'HealthStatus' });

export { JobKind, JobStatus };

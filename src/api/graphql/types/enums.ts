import { registerEnumType } from 'type-graphql';
import { HealthStatus } from '../../../engine/health';
import { JobEventReason, JobStatus } from '../../../engine/types';
import { JobKind } from '../../../job-kinds';

registerEnumType(JobKind, { name: 'JobKind', description: 'The kinds of background job this service runs.' });
registerEnumType(JobStatus, {
  name: 'JobStatus',
  description: 'QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED (a retry starts again at QUEUED).',
});
registerEnumType(JobEventReason, {
  name: 'JobEventReason',
  description:
    "Why a job event was sent; SNAPSHOT is the job's state read from the database: sent first to a new subscriber, and later in place of events lost on the way.",
});
registerEnumType(HealthStatus, { name: 'HealthStatus' });

export { HealthStatus, JobEventReason, JobKind, JobStatus };

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
  description: 'Why a job event was sent; SNAPSHOT is the current state sent first to a new subscriber.',
});
registerEnumType(HealthStatus, { name: 'HealthStatus' });

export { HealthStatus, JobEventReason, JobKind, JobStatus };

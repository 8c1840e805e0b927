/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Why a job event was sent; SNAPSHOT is the job's state read from the database: sent first to a new subscriber, and later in place of events lost on the way. */
export const JobEventReason = {
  Cancelled: 'CANCELLED',
  CancelRequested: 'CANCEL_REQUESTED',
  Enqueued: 'ENQUEUED',
  Failed: 'FAILED',
  Heartbeat: 'HEARTBEAT',
  Progress: 'PROGRESS',
  Retried: 'RETRIED',
  RetryScheduled: 'RETRY_SCHEDULED',
  Snapshot: 'SNAPSHOT',
  Started: 'STARTED',
  Step: 'STEP',
  Succeeded: 'SUCCEEDED'
} as const;

export type JobEventReason = typeof JobEventReason[keyof typeof JobEventReason];
/** The kinds of background job this service runs. */
export const JobKind = {
  AutomaticSchedule: 'AUTOMATIC_SCHEDULE',
  MakeupExamAuto: 'MAKEUP_EXAM_AUTO',
  SchedulePublish: 'SCHEDULE_PUBLISH'
} as const;

export type JobKind = typeof JobKind[keyof typeof JobKind];
/** QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED (a retry starts again at QUEUED). */
export const JobStatus = {
  Cancelled: 'CANCELLED',
  Failed: 'FAILED',
  Queued: 'QUEUED',
  Running: 'RUNNING',
  Succeeded: 'SUCCEEDED'
} as const;

export type JobStatus = typeof JobStatus[keyof typeof JobStatus];
type JobRow_AutomaticScheduleJob_Fragment = { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown };

type JobRow_MakeupExamAutoJob_Fragment = { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown };

type JobRow_SchedulePublishJob_Fragment = { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown };

export type JobRowFragment =
  | JobRow_AutomaticScheduleJob_Fragment
  | JobRow_MakeupExamAutoJob_Fragment
  | JobRow_SchedulePublishJob_Fragment
;

export type JobsQueryVariables = Exact<{
  first: number;
  kinds?: Array<JobKind> | JobKind | null | undefined;
  statuses?: Array<JobStatus> | JobStatus | null | undefined;
}>;


export type JobsQuery = { jobs: { edges: Array<{ node:
        | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown, scheduleResult: { penalty: number } | null }
        | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown, arrangementResult: { cost: number } | null }
        | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
       }> } };

export type JobDetailQueryVariables = Exact<{
  id: string;
}>;


export type JobDetailQuery = { job:
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown, plan: { id: string, name: string } | null, scheduleResult: { penalty: number, hardViolations: number, lecturesPlaced: number, lockedKept: number, iterations: number, timeUsedMs: number, stopReason: string, seed: number } | null }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown, arrangementResult: { cost: number, hardViolations: number, exams: number, students: number, periodsUsed: number, unplacedCount: number, iterations: number, timeUsedMs: number, stopReason: string, seed: number } | null }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown, publishResult: { penalty: number, entries: number, publishedAt: string } | null }
   | null };

export type SignInCheckQueryVariables = Exact<{ [key: string]: never; }>;


export type SignInCheckQuery = { jobs: { edges: Array<{ node:
        | { id: string }
        | { id: string }
        | { id: string }
       }> } };

export type CancelJobMutationVariables = Exact<{
  id: string;
}>;


export type CancelJobMutation = { cancelJob:
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
   };

export type RetryJobMutationVariables = Exact<{
  id: string;
}>;


export type RetryJobMutation = { retryJob:
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
    | { id: string, kind: JobKind, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, requestedBy: string | null, createdAt: string, updatedAt: string, startedAt: string | null, completedAt: string | null, sequence: number, attempts: number, cancelRequested: boolean, errorMessage: string | null, errorCode: string | null, errorParams: unknown }
   };

export type JobEventsSubscriptionVariables = Exact<{
  kinds?: Array<JobKind> | JobKind | null | undefined;
}>;


export type JobEventsSubscription = { jobEvents: { jobId: string, kind: JobKind, sequence: number, reason: JobEventReason, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, occurredAt: string } };

export type JobProgressSubscriptionVariables = Exact<{
  jobId: string;
}>;


export type JobProgressSubscription = { jobProgress: { jobId: string, kind: JobKind, sequence: number, reason: JobEventReason, status: JobStatus, currentStep: string | null, currentStepCode: string | null, progress: number, message: string | null, messageCode: string | null, messageParams: unknown, occurredAt: string } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const JobRowFragmentDoc = new TypedDocumentString(`
    fragment JobRow on Job {
  id
  kind
  status
  currentStep
  currentStepCode
  progress
  message
  messageCode
  messageParams
  requestedBy
  createdAt
  updatedAt
  startedAt
  completedAt
  sequence
  attempts
  cancelRequested
  errorMessage
  errorCode
  errorParams
}
    `, {"fragmentName":"JobRow"}) as unknown as TypedDocumentString<JobRowFragment, unknown>;
export const JobsDocument = new TypedDocumentString(`
    query Jobs($first: Int!, $kinds: [JobKind!], $statuses: [JobStatus!]) {
  jobs(first: $first, kinds: $kinds, statuses: $statuses) {
    edges {
      node {
        ...JobRow
        ... on AutomaticScheduleJob {
          scheduleResult {
            penalty
          }
        }
        ... on MakeupExamAutoJob {
          arrangementResult {
            cost
          }
        }
      }
    }
  }
}
    fragment JobRow on Job {
  id
  kind
  status
  currentStep
  currentStepCode
  progress
  message
  messageCode
  messageParams
  requestedBy
  createdAt
  updatedAt
  startedAt
  completedAt
  sequence
  attempts
  cancelRequested
  errorMessage
  errorCode
  errorParams
}`) as unknown as TypedDocumentString<JobsQuery, JobsQueryVariables>;
export const JobDetailDocument = new TypedDocumentString(`
    query JobDetail($id: ID!) {
  job(id: $id) {
    ...JobRow
    ... on AutomaticScheduleJob {
      plan {
        id
        name
      }
      scheduleResult {
        penalty
        hardViolations
        lecturesPlaced
        lockedKept
        iterations
        timeUsedMs
        stopReason
        seed
      }
    }
    ... on SchedulePublishJob {
      publishResult {
        penalty
        entries
        publishedAt
      }
    }
    ... on MakeupExamAutoJob {
      arrangementResult {
        cost
        hardViolations
        exams
        students
        periodsUsed
        unplacedCount
        iterations
        timeUsedMs
        stopReason
        seed
      }
    }
  }
}
    fragment JobRow on Job {
  id
  kind
  status
  currentStep
  currentStepCode
  progress
  message
  messageCode
  messageParams
  requestedBy
  createdAt
  updatedAt
  startedAt
  completedAt
  sequence
  attempts
  cancelRequested
  errorMessage
  errorCode
  errorParams
}`) as unknown as TypedDocumentString<JobDetailQuery, JobDetailQueryVariables>;
export const SignInCheckDocument = new TypedDocumentString(`
    query SignInCheck {
  jobs(first: 1) {
    edges {
      node {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<SignInCheckQuery, SignInCheckQueryVariables>;
export const CancelJobDocument = new TypedDocumentString(`
    mutation CancelJob($id: ID!) {
  cancelJob(id: $id) {
    ...JobRow
  }
}
    fragment JobRow on Job {
  id
  kind
  status
  currentStep
  currentStepCode
  progress
  message
  messageCode
  messageParams
  requestedBy
  createdAt
  updatedAt
  startedAt
  completedAt
  sequence
  attempts
  cancelRequested
  errorMessage
  errorCode
  errorParams
}`) as unknown as TypedDocumentString<CancelJobMutation, CancelJobMutationVariables>;
export const RetryJobDocument = new TypedDocumentString(`
    mutation RetryJob($id: ID!) {
  retryJob(id: $id) {
    ...JobRow
  }
}
    fragment JobRow on Job {
  id
  kind
  status
  currentStep
  currentStepCode
  progress
  message
  messageCode
  messageParams
  requestedBy
  createdAt
  updatedAt
  startedAt
  completedAt
  sequence
  attempts
  cancelRequested
  errorMessage
  errorCode
  errorParams
}`) as unknown as TypedDocumentString<RetryJobMutation, RetryJobMutationVariables>;
export const JobEventsDocument = new TypedDocumentString(`
    subscription JobEvents($kinds: [JobKind!]) {
  jobEvents(kinds: $kinds) {
    jobId
    kind
    sequence
    reason
    status
    currentStep
    currentStepCode
    progress
    message
    messageCode
    messageParams
    occurredAt
  }
}
    `) as unknown as TypedDocumentString<JobEventsSubscription, JobEventsSubscriptionVariables>;
export const JobProgressDocument = new TypedDocumentString(`
    subscription JobProgress($jobId: ID!) {
  jobProgress(jobId: $jobId) {
    jobId
    kind
    sequence
    reason
    status
    currentStep
    currentStepCode
    progress
    message
    messageCode
    messageParams
    occurredAt
  }
}
    `) as unknown as TypedDocumentString<JobProgressSubscription, JobProgressSubscriptionVariables>;
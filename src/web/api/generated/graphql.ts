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
/** TERM: a term's make-up session (one exam per course with failing students). ITC2007_EXAM, TORONTO: imported from a benchmark's files. */
export const MakeupExamSessionFormat = {
  Itc2007Exam: 'ITC2007_EXAM',
  Term: 'TERM',
  Toronto: 'TORONTO'
} as const;

export type MakeupExamSessionFormat = typeof MakeupExamSessionFormat[keyof typeof MakeupExamSessionFormat];
/** DRAFT (can be scheduled and edited) → PUBLISHED (the term's timetable in force, one per term) → ARCHIVED. */
export const SchedulePlanStatus = {
  Archived: 'ARCHIVED',
  Draft: 'DRAFT',
  Published: 'PUBLISHED'
} as const;

export type SchedulePlanStatus = typeof SchedulePlanStatus[keyof typeof SchedulePlanStatus];
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

export type MakeupExamSittingsQueryVariables = Exact<{
  sessionId: string;
  examId?: string | null | undefined;
  roomId?: string | null | undefined;
  invigilatorId?: string | null | undefined;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamSittingsQuery = { makeupExamSession: { id: string, sittings: Array<{ id: string, seats: number, exam: { id: string }, period: { id: string }, room: { id: string } | null, invigilator: { id: string } | null }> } | null };

export type MakeupExamStudentTimetableQueryVariables = Exact<{
  sessionId: string;
  studentCode: string;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamStudentTimetableQuery = { makeupExamSession: { id: string, studentTimetable: Array<{ id: string, studentCode: string, exam: { id: string }, period: { id: string }, room: { id: string } | null }> } | null };

export type MakeupExamExamsQueryVariables = Exact<{
  sessionId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamExamsQuery = { makeupExamSession: { id: string, exams: Array<{ id: string, code: string, position: number, duration: number | null, roomExclusive: boolean, course: { id: string, code: string, name: string } | null }> } | null };

export type MakeupExamRoomsQueryVariables = Exact<{
  sessionId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamRoomsQuery = { makeupExamSession: { id: string, rooms: Array<{ id: string, code: string, name: string, capacity: number, position: number }> } | null };

export type MakeupExamPeriodsQueryVariables = Exact<{
  sessionId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamPeriodsQuery = { makeupExamSession: { id: string, periods: Array<{ id: string, position: number, date: string | null, startTime: string | null, duration: number }> } | null };

export type MakeupExamInvigilatorsQueryVariables = Exact<{
  sessionId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamInvigilatorsQuery = { makeupExamSession: { id: string, invigilators: Array<{ id: string, teacher: { id: string, code: string, name: string } }> } | null };

export type MakeupExamSessionsQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
}>;


export type MakeupExamSessionsQuery = { makeupExamSessions: Array<{ id: string, code: string, name: string, format: MakeupExamSessionFormat, revision: number, term: { id: string, code: string, name: string } | null, arrangement: { id: string, cost: number, hardViolations: number, createdAt: string, sessionRevision: number } | null }> };

export type MakeupExamSessionQueryVariables = Exact<{
  id: string;
}>;


export type MakeupExamSessionQuery = { makeupExamSession: { id: string, code: string, name: string, format: MakeupExamSessionFormat, revision: number, capacitated: boolean, passingScore: number, defaultExamDuration: number, term: { id: string, code: string, name: string } | null, arrangement: { id: string, cost: number, hardViolations: number, createdAt: string, jobId: string | null, seed: number, sessionRevision: number, timeUsedMs: number, iterations: number } | null, evaluation: { current: boolean, feasible: boolean, exams: number, students: number, cost: number, hardViolations: number, hard: { conflicts: number, roomCapacity: number, periodDuration: number, periodConstraints: number, roomExclusive: number, seating: number, invigilation: number, unplaced: number }, soft: { twoInARow: number, twoInADay: number, periodSpread: number, mixedDurations: number, frontLoad: number, periodPenalty: number, roomPenalty: number, proximity: number } } | null } | null };

export type MakeupExamStartArrangementMutationVariables = Exact<{
  sessionId: string;
  timeLimitSeconds?: number | null | undefined;
  seed?: number | null | undefined;
  maxIterations?: number | null | undefined;
}>;


export type MakeupExamStartArrangementMutation = { startMakeupExamArrangement:
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
   };

export type TimetablingPlanQueryVariables = Exact<{
  planId: string;
}>;


export type TimetablingPlanQuery = { schedulePlan: { id: string, name: string, status: SchedulePlanStatus, copiedFromId: string | null, createdAt: string, updatedAt: string, publishedAt: string | null, archivedAt: string | null, term: { id: string, code: string, name: string, daysPerWeek: number, periodsPerDay: number, periodLabels: Array<string>, publishedPlan: { id: string } | null } } | null };

export type TimetablingPlanAssignmentsQueryVariables = Exact<{
  planId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingPlanAssignmentsQuery = { schedulePlan: { id: string, assignments: Array<{ id: string, day: number, period: number, lectureIndex: number, locked: boolean, course: { id: string }, room: { id: string } }> } | null };

export type TimetablingPlanEvaluationQueryVariables = Exact<{
  planId: string;
  conflicts: number;
}>;


export type TimetablingPlanEvaluationQuery = { schedulePlan: { id: string, evaluation: { feasible: boolean, hardViolations: number, penalty: number, conflicts: Array<string>, breakdown: { lectures: number, conflicts: number, availability: number, roomOccupancy: number, roomCapacity: number, minWorkingDays: number, curriculumCompactness: number, roomStability: number } } } | null };

export type TimetablingLockAssignmentMutationVariables = Exact<{
  id: string;
}>;


export type TimetablingLockAssignmentMutation = { lockAssignment: { id: string, locked: boolean } };

export type TimetablingUnlockAssignmentMutationVariables = Exact<{
  id: string;
}>;


export type TimetablingUnlockAssignmentMutation = { unlockAssignment: { id: string, locked: boolean } };

export type TimetablingCopyPlanMutationVariables = Exact<{
  planId: string;
  name?: string | null | undefined;
}>;


export type TimetablingCopyPlanMutation = { copySchedulePlan: { id: string, name: string, status: SchedulePlanStatus } };

export type TimetablingStartScheduleMutationVariables = Exact<{
  planId: string;
  timeLimitSeconds?: number | null | undefined;
  seed?: number | null | undefined;
}>;


export type TimetablingStartScheduleMutation = { startAutomaticSchedule:
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
   };

export type TimetablingPublishPlanMutationVariables = Exact<{
  planId: string;
}>;


export type TimetablingPublishPlanMutation = { publishSchedulePlan:
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
    | { id: string, kind: JobKind, status: JobStatus }
   };

export type TimetablingPublishedQueryVariables = Exact<{
  termId: string;
  teacherId?: string | null | undefined;
  curriculumId?: string | null | undefined;
  roomId?: string | null | undefined;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingPublishedQuery = { publishedTimetable: Array<{ id: string, day: number, dayName: string, period: number, periodLabel: string, lectureIndex: number, courseId: string, courseCode: string, courseName: string, teacherId: string, teacherCode: string, teacherName: string, roomId: string, roomCode: string, roomName: string, curriculumCodes: Array<string> }> };

export type TimetablingTermTeachersQueryVariables = Exact<{
  termId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingTermTeachersQuery = { term: { id: string, teachers: Array<{ id: string, code: string, name: string }> } | null };

export type TimetablingTermRoomsQueryVariables = Exact<{
  termId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingTermRoomsQuery = { term: { id: string, rooms: Array<{ id: string, code: string, name: string, capacity: number }> } | null };

export type TimetablingTermCoursesQueryVariables = Exact<{
  termId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingTermCoursesQuery = { term: { id: string, courses: Array<{ id: string, code: string, name: string, students: number, teacher: { id: string } }> } | null };

export type TimetablingTermCurriculaQueryVariables = Exact<{
  termId: string;
  first: number;
  after?: string | null | undefined;
  courses: number;
}>;


export type TimetablingTermCurriculaQuery = { term: { id: string, curricula: Array<{ id: string, code: string, name: string, courses: Array<{ id: string }> }> } | null };

export type TimetablingCurriculumCoursesQueryVariables = Exact<{
  termId: string;
  before?: string | null | undefined;
  afterCourse?: string | null | undefined;
  first: number;
}>;


export type TimetablingCurriculumCoursesQuery = { term: { id: string, curricula: Array<{ id: string, courses: Array<{ id: string }> }> } | null };

export type TimetablingTermsQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingTermsQuery = { terms: Array<{ id: string, code: string, name: string, daysPerWeek: number, periodsPerDay: number, periodLabels: Array<string>, publishedPlan: { id: string, name: string } | null }> };

export type TimetablingTermPlansQueryVariables = Exact<{
  termId: string;
  first: number;
  after?: string | null | undefined;
}>;


export type TimetablingTermPlansQuery = { term: { id: string, code: string, name: string, daysPerWeek: number, periodsPerDay: number, periodLabels: Array<string>, publishedPlan: { id: string } | null, plans: Array<{ id: string, name: string, status: SchedulePlanStatus, copiedFromId: string | null, createdAt: string, updatedAt: string, publishedAt: string | null, archivedAt: string | null }> } | null };

export type TimetablingCreatePlanMutationVariables = Exact<{
  termId: string;
  name: string;
}>;


export type TimetablingCreatePlanMutation = { createSchedulePlan: { id: string, name: string, status: SchedulePlanStatus } };

export type TimetablingImportCttMutationVariables = Exact<{
  text: string;
  termCode?: string | null | undefined;
}>;


export type TimetablingImportCttMutation = { importCurriculumTimetabling: { id: string, code: string, name: string } };

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
export const MakeupExamSittingsDocument = new TypedDocumentString(`
    query MakeupExamSittings($sessionId: ID!, $examId: ID, $roomId: ID, $invigilatorId: ID, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    sittings(
      examId: $examId
      roomId: $roomId
      invigilatorId: $invigilatorId
      first: $first
      after: $after
    ) {
      id
      seats
      exam {
        id
      }
      period {
        id
      }
      room {
        id
      }
      invigilator {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamSittingsQuery, MakeupExamSittingsQueryVariables>;
export const MakeupExamStudentTimetableDocument = new TypedDocumentString(`
    query MakeupExamStudentTimetable($sessionId: ID!, $studentCode: String!, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    studentTimetable(studentCode: $studentCode, first: $first, after: $after) {
      id
      studentCode
      exam {
        id
      }
      period {
        id
      }
      room {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamStudentTimetableQuery, MakeupExamStudentTimetableQueryVariables>;
export const MakeupExamExamsDocument = new TypedDocumentString(`
    query MakeupExamExams($sessionId: ID!, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    exams(first: $first, after: $after) {
      id
      code
      position
      duration
      roomExclusive
      course {
        id
        code
        name
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamExamsQuery, MakeupExamExamsQueryVariables>;
export const MakeupExamRoomsDocument = new TypedDocumentString(`
    query MakeupExamRooms($sessionId: ID!, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    rooms(first: $first, after: $after) {
      id
      code
      name
      capacity
      position
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamRoomsQuery, MakeupExamRoomsQueryVariables>;
export const MakeupExamPeriodsDocument = new TypedDocumentString(`
    query MakeupExamPeriods($sessionId: ID!, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    periods(first: $first, after: $after) {
      id
      position
      date
      startTime
      duration
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamPeriodsQuery, MakeupExamPeriodsQueryVariables>;
export const MakeupExamInvigilatorsDocument = new TypedDocumentString(`
    query MakeupExamInvigilators($sessionId: ID!, $first: Int!, $after: ID) {
  makeupExamSession(id: $sessionId) {
    id
    invigilators(first: $first, after: $after) {
      id
      teacher {
        id
        code
        name
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamInvigilatorsQuery, MakeupExamInvigilatorsQueryVariables>;
export const MakeupExamSessionsDocument = new TypedDocumentString(`
    query MakeupExamSessions($first: Int!, $after: ID) {
  makeupExamSessions(first: $first, after: $after) {
    id
    code
    name
    format
    revision
    term {
      id
      code
      name
    }
    arrangement {
      id
      cost
      hardViolations
      createdAt
      sessionRevision
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamSessionsQuery, MakeupExamSessionsQueryVariables>;
export const MakeupExamSessionDocument = new TypedDocumentString(`
    query MakeupExamSession($id: ID!) {
  makeupExamSession(id: $id) {
    id
    code
    name
    format
    revision
    capacitated
    passingScore
    defaultExamDuration
    term {
      id
      code
      name
    }
    arrangement {
      id
      cost
      hardViolations
      createdAt
      jobId
      seed
      sessionRevision
      timeUsedMs
      iterations
    }
    evaluation {
      current
      feasible
      exams
      students
      cost
      hardViolations
      hard {
        conflicts
        roomCapacity
        periodDuration
        periodConstraints
        roomExclusive
        seating
        invigilation
        unplaced
      }
      soft {
        twoInARow
        twoInADay
        periodSpread
        mixedDurations
        frontLoad
        periodPenalty
        roomPenalty
        proximity
      }
    }
  }
}
    `) as unknown as TypedDocumentString<MakeupExamSessionQuery, MakeupExamSessionQueryVariables>;
export const MakeupExamStartArrangementDocument = new TypedDocumentString(`
    mutation MakeupExamStartArrangement($sessionId: ID!, $timeLimitSeconds: Int, $seed: Int, $maxIterations: Int) {
  startMakeupExamArrangement(
    input: {sessionId: $sessionId, timeLimitSeconds: $timeLimitSeconds, seed: $seed, maxIterations: $maxIterations}
  ) {
    id
    kind
    status
  }
}
    `) as unknown as TypedDocumentString<MakeupExamStartArrangementMutation, MakeupExamStartArrangementMutationVariables>;
export const TimetablingPlanDocument = new TypedDocumentString(`
    query TimetablingPlan($planId: ID!) {
  schedulePlan(id: $planId) {
    id
    name
    status
    copiedFromId
    createdAt
    updatedAt
    publishedAt
    archivedAt
    term {
      id
      code
      name
      daysPerWeek
      periodsPerDay
      periodLabels
      publishedPlan {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingPlanQuery, TimetablingPlanQueryVariables>;
export const TimetablingPlanAssignmentsDocument = new TypedDocumentString(`
    query TimetablingPlanAssignments($planId: ID!, $first: Int!, $after: ID) {
  schedulePlan(id: $planId) {
    id
    assignments(first: $first, after: $after) {
      id
      day
      period
      lectureIndex
      locked
      course {
        id
      }
      room {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingPlanAssignmentsQuery, TimetablingPlanAssignmentsQueryVariables>;
export const TimetablingPlanEvaluationDocument = new TypedDocumentString(`
    query TimetablingPlanEvaluation($planId: ID!, $conflicts: Int!) {
  schedulePlan(id: $planId) {
    id
    evaluation {
      feasible
      hardViolations
      penalty
      breakdown {
        lectures
        conflicts
        availability
        roomOccupancy
        roomCapacity
        minWorkingDays
        curriculumCompactness
        roomStability
      }
      conflicts(first: $conflicts)
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingPlanEvaluationQuery, TimetablingPlanEvaluationQueryVariables>;
export const TimetablingLockAssignmentDocument = new TypedDocumentString(`
    mutation TimetablingLockAssignment($id: ID!) {
  lockAssignment(id: $id) {
    id
    locked
  }
}
    `) as unknown as TypedDocumentString<TimetablingLockAssignmentMutation, TimetablingLockAssignmentMutationVariables>;
export const TimetablingUnlockAssignmentDocument = new TypedDocumentString(`
    mutation TimetablingUnlockAssignment($id: ID!) {
  unlockAssignment(id: $id) {
    id
    locked
  }
}
    `) as unknown as TypedDocumentString<TimetablingUnlockAssignmentMutation, TimetablingUnlockAssignmentMutationVariables>;
export const TimetablingCopyPlanDocument = new TypedDocumentString(`
    mutation TimetablingCopyPlan($planId: ID!, $name: String) {
  copySchedulePlan(planId: $planId, name: $name) {
    id
    name
    status
  }
}
    `) as unknown as TypedDocumentString<TimetablingCopyPlanMutation, TimetablingCopyPlanMutationVariables>;
export const TimetablingStartScheduleDocument = new TypedDocumentString(`
    mutation TimetablingStartSchedule($planId: ID!, $timeLimitSeconds: Int, $seed: Int) {
  startAutomaticSchedule(
    input: {planId: $planId, timeLimitSeconds: $timeLimitSeconds, seed: $seed}
  ) {
    id
    kind
    status
  }
}
    `) as unknown as TypedDocumentString<TimetablingStartScheduleMutation, TimetablingStartScheduleMutationVariables>;
export const TimetablingPublishPlanDocument = new TypedDocumentString(`
    mutation TimetablingPublishPlan($planId: ID!) {
  publishSchedulePlan(planId: $planId) {
    id
    kind
    status
  }
}
    `) as unknown as TypedDocumentString<TimetablingPublishPlanMutation, TimetablingPublishPlanMutationVariables>;
export const TimetablingPublishedDocument = new TypedDocumentString(`
    query TimetablingPublished($termId: ID!, $teacherId: ID, $curriculumId: ID, $roomId: ID, $first: Int!, $after: ID) {
  publishedTimetable(
    termId: $termId
    teacherId: $teacherId
    curriculumId: $curriculumId
    roomId: $roomId
    first: $first
    after: $after
  ) {
    id
    day
    dayName
    period
    periodLabel
    lectureIndex
    courseId
    courseCode
    courseName
    teacherId
    teacherCode
    teacherName
    roomId
    roomCode
    roomName
    curriculumCodes
  }
}
    `) as unknown as TypedDocumentString<TimetablingPublishedQuery, TimetablingPublishedQueryVariables>;
export const TimetablingTermTeachersDocument = new TypedDocumentString(`
    query TimetablingTermTeachers($termId: ID!, $first: Int!, $after: ID) {
  term(id: $termId) {
    id
    teachers(first: $first, after: $after) {
      id
      code
      name
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermTeachersQuery, TimetablingTermTeachersQueryVariables>;
export const TimetablingTermRoomsDocument = new TypedDocumentString(`
    query TimetablingTermRooms($termId: ID!, $first: Int!, $after: ID) {
  term(id: $termId) {
    id
    rooms(first: $first, after: $after) {
      id
      code
      name
      capacity
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermRoomsQuery, TimetablingTermRoomsQueryVariables>;
export const TimetablingTermCoursesDocument = new TypedDocumentString(`
    query TimetablingTermCourses($termId: ID!, $first: Int!, $after: ID) {
  term(id: $termId) {
    id
    courses(first: $first, after: $after) {
      id
      code
      name
      students
      teacher {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermCoursesQuery, TimetablingTermCoursesQueryVariables>;
export const TimetablingTermCurriculaDocument = new TypedDocumentString(`
    query TimetablingTermCurricula($termId: ID!, $first: Int!, $after: ID, $courses: Int!) {
  term(id: $termId) {
    id
    curricula(first: $first, after: $after) {
      id
      code
      name
      courses(first: $courses) {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermCurriculaQuery, TimetablingTermCurriculaQueryVariables>;
export const TimetablingCurriculumCoursesDocument = new TypedDocumentString(`
    query TimetablingCurriculumCourses($termId: ID!, $before: ID, $afterCourse: ID, $first: Int!) {
  term(id: $termId) {
    id
    curricula(first: 1, after: $before) {
      id
      courses(first: $first, after: $afterCourse) {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingCurriculumCoursesQuery, TimetablingCurriculumCoursesQueryVariables>;
export const TimetablingTermsDocument = new TypedDocumentString(`
    query TimetablingTerms($first: Int!, $after: ID) {
  terms(first: $first, after: $after) {
    id
    code
    name
    daysPerWeek
    periodsPerDay
    periodLabels
    publishedPlan {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermsQuery, TimetablingTermsQueryVariables>;
export const TimetablingTermPlansDocument = new TypedDocumentString(`
    query TimetablingTermPlans($termId: ID!, $first: Int!, $after: ID) {
  term(id: $termId) {
    id
    code
    name
    daysPerWeek
    periodsPerDay
    periodLabels
    publishedPlan {
      id
    }
    plans(first: $first, after: $after) {
      id
      name
      status
      copiedFromId
      createdAt
      updatedAt
      publishedAt
      archivedAt
    }
  }
}
    `) as unknown as TypedDocumentString<TimetablingTermPlansQuery, TimetablingTermPlansQueryVariables>;
export const TimetablingCreatePlanDocument = new TypedDocumentString(`
    mutation TimetablingCreatePlan($termId: ID!, $name: String!) {
  createSchedulePlan(input: {termId: $termId, name: $name}) {
    id
    name
    status
  }
}
    `) as unknown as TypedDocumentString<TimetablingCreatePlanMutation, TimetablingCreatePlanMutationVariables>;
export const TimetablingImportCttDocument = new TypedDocumentString(`
    mutation TimetablingImportCtt($text: String!, $termCode: String) {
  importCurriculumTimetabling(text: $text, termCode: $termCode) {
    id
    code
    name
  }
}
    `) as unknown as TypedDocumentString<TimetablingImportCttMutation, TimetablingImportCttMutationVariables>;
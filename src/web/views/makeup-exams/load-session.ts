/**
 * Reads a make-up session's parts (exams, rooms, periods, invigilators) and its
 * sittings over the public API, a keyset page at a time, sized to the cost limit.
 */
import { ApiError, request } from '../../api/client';
import {
  MakeupExamExamsDocument,
  MakeupExamInvigilatorsDocument,
  MakeupExamPeriodsDocument,
  MakeupExamRoomsDocument,
  MakeupExamSittingsDocument,
  MakeupExamStudentTimetableDocument,
} from '../../api/generated/graphql';
import { readAllPages } from '../timetabling/read-pages';
import type { SessionParts, SittingRow } from './arrangement-view';

/** Rows per page within the default cost limit (1,000): a row costs the objects it selects. */
export const EXAM_PAGE_SIZE = {
  /** 2 a row (the exam, its course). */
  exams: 450,
  rooms: 500,
  periods: 500,
  /** 2 a row (the invigilator, their teacher). */
  invigilators: 450,
  /** 5 a row (the sitting and the ids of its exam, period, room, invigilator). */
  sittings: 190,
  /** 4 a row, and 10 for the field. */
  studentTimetable: 200,
} as const;

const missing = (id: string) => new ApiError('NOT_FOUND', `No make-up exam session with id ${id}`);

function sessionOf<S>(id: string, session: S | null | undefined): S {
  if (!session) throw missing(id);
  return session;
}

export async function loadSessionParts(sessionId: string): Promise<SessionParts> {
  const [exams, rooms, periods, invigilators] = await Promise.all([
    readAllPages(async (first, after) => sessionOf(sessionId, (await request(MakeupExamExamsDocument, { sessionId, first, after })).makeupExamSession).exams, EXAM_PAGE_SIZE.exams),
    readAllPages(async (first, after) => sessionOf(sessionId, (await request(MakeupExamRoomsDocument, { sessionId, first, after })).makeupExamSession).rooms, EXAM_PAGE_SIZE.rooms),
    readAllPages(async (first, after) => sessionOf(sessionId, (await request(MakeupExamPeriodsDocument, { sessionId, first, after })).makeupExamSession).periods, EXAM_PAGE_SIZE.periods),
    readAllPages(
      async (first, after) => sessionOf(sessionId, (await request(MakeupExamInvigilatorsDocument, { sessionId, first, after })).makeupExamSession).invigilators,
      EXAM_PAGE_SIZE.invigilators,
    ),
  ]);
  return { exams, rooms, periods, invigilators };
}

export interface SittingFilter {
  examId?: string | null;
  roomId?: string | null;
  invigilatorId?: string | null;
}

export async function loadSittings(sessionId: string, filter: SittingFilter): Promise<SittingRow[]> {
  return readAllPages(
    async (first, after) =>
      sessionOf(
        sessionId,
        (
          await request(MakeupExamSittingsDocument, {
            sessionId,
            examId: filter.examId ?? null,
            roomId: filter.roomId ?? null,
            invigilatorId: filter.invigilatorId ?? null,
            first,
            after,
          })
        ).makeupExamSession,
      ).sittings,
    EXAM_PAGE_SIZE.sittings,
  );
}

export async function loadStudentTimetable(sessionId: string, studentCode: string): Promise<SittingRow[]> {
  return readAllPages(
    async (first, after) =>
      sessionOf(sessionId, (await request(MakeupExamStudentTimetableDocument, { sessionId, studentCode, first, after })).makeupExamSession).studentTimetable,
    EXAM_PAGE_SIZE.studentTimetable,
  );
}

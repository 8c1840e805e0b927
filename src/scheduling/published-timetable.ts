/** The published timetable of a term, looked up by teacher, by curriculum (class group) or by room. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireId } from '../academic/validation';
import { PublishedTimetableEntry } from './entities';

export interface PublishedTimetableFilter {
  teacherId?: string | null;
  curriculumId?: string | null;
  roomId?: string | null;
}

export async function publishedTimetable(em: EntityManager, termId: string, filter: PublishedTimetableFilter = {}): Promise<PublishedTimetableEntry[]> {
  const where: Record<string, unknown> = { term: requireId('termId', termId) };
  if (filter.teacherId != null) where.teacherId = requireId('teacherId', filter.teacherId);
  if (filter.roomId != null) where.roomId = requireId('roomId', filter.roomId);
  if (filter.curriculumId != null) where.curriculumIds = { $contains: [requireId('curriculumId', filter.curriculumId)] };
  return em.find(PublishedTimetableEntry, where, { orderBy: { day: 'asc', period: 'asc', courseCode: 'asc', lectureIndex: 'asc' } });
}

export const publishedTimetableByTeacher = (em: EntityManager, termId: string, teacherId: string) => publishedTimetable(em, termId, { teacherId });
export const publishedTimetableByCurriculum = (em: EntityManager, termId: string, curriculumId: string) => publishedTimetable(em, termId, { curriculumId });
export const publishedTimetableByRoom = (em: EntityManager, termId: string, roomId: string) => publishedTimetable(em, termId, { roomId });

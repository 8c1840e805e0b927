/** The published timetable of a term, looked up by teacher, by curriculum (class group) or by room. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { keysetPage, type Page } from '../academic/keyset-page';
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

/**
 * One page of `publishedTimetable`, by (day, period, id): the (term_id, day, period, id)
 * index serves the whole-term pages; a teacher's, room's or class group's entries are
 * few and found by their own indexes.
 */
export async function publishedTimetablePage(em: EntityManager, termId: string, filter: PublishedTimetableFilter, page: Page): Promise<PublishedTimetableEntry[]> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const where = (sql: string, param: string) => {
    conditions.push(sql);
    params.push(param);
  };
  if (filter.teacherId != null) where('x.teacher_id = ?', requireId('teacherId', filter.teacherId));
  if (filter.roomId != null) where('x.room_id = ?', requireId('roomId', filter.roomId));
  if (filter.curriculumId != null) where('x.curriculum_ids @> array[?]::text[]', requireId('curriculumId', filter.curriculumId));
  const rows = await keysetPage(
    em,
    PublishedTimetableEntry,
    {
      table: 'published_timetable_entries',
      noun: 'published timetable entry',
      parent: 'x.term_id',
      order: ['day', 'period', 'id'],
      ...(conditions.length > 0 ? { where: { sql: conditions.join(' and '), params } } : {}),
    },
    requireId('termId', termId),
    page,
  );
  return rows.map(({ row }) => row);
}

import { PublishedTimetableEntry } from './published-timetable-entry.entity';
import { ScheduleAssignment } from './schedule-assignment.entity';
import { SchedulePlan, SchedulePlanStatus } from './schedule-plan.entity';

export { PublishedTimetableEntry, ScheduleAssignment, SchedulePlan, SchedulePlanStatus };
export const schedulingEntities = [SchedulePlan, ScheduleAssignment, PublishedTimetableEntry];

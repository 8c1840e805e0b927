import { IsInt, IsOptional, IsUUID, Length, Max, Min } from 'class-validator';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { MAX_NAME_LENGTH } from '../../academic/validation';
import { MAX_TIME_LIMIT_SECONDS, MIN_TIME_LIMIT_SECONDS } from '../../scheduling/automatic-schedule';
import { SchedulePlanStatus } from '../../scheduling/entities';

registerEnumType(SchedulePlanStatus, {
  name: 'SchedulePlanStatus',
  description: 'DRAFT (can be scheduled and edited) → PUBLISHED (the term\'s timetable in force, one per term) → ARCHIVED.',
});

@ObjectType('SchedulePlan', { description: 'A timetable of a term.' })
export class SchedulePlanType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => SchedulePlanStatus) status!: SchedulePlanStatus;
  @Field(() => ID, { nullable: true, description: 'The plan this one was copied from.' }) copiedFromId!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Date, { nullable: true }) publishedAt!: Date | null;
  @Field(() => Date, { nullable: true }) archivedAt!: Date | null;
}

@ObjectType('ScheduleAssignment', { description: 'One lecture of a course at (day, period), both 0-based, in a room.' })
export class ScheduleAssignmentType {
  @Field(() => ID) id!: string;
  @Field(() => Int, { description: '0-based, below the course\'s lectures per week.' }) lectureIndex!: number;
  @Field(() => Int) day!: number;
  @Field(() => Int) period!: number;
  @Field({ description: 'Kept where it is when the plan is scheduled again.' }) locked!: boolean;
}

@ObjectType('PenaltyBreakdown', { description: 'Hard violation counts and ITC-2007 weighted soft penalties.' })
export class PenaltyBreakdownType {
  @Field(() => Int, { description: 'Hard: lectures missing (or extra) per course.' }) lectures!: number;
  @Field(() => Int, { description: 'Hard: pairs of courses of one teacher or class group at the same time.' }) conflicts!: number;
  @Field(() => Int, { description: 'Hard: lectures at a time the course or its teacher is unavailable.' }) availability!: number;
  @Field(() => Int, { description: 'Hard: extra lectures in an occupied room.' }) roomOccupancy!: number;
  @Field(() => Int, { description: 'Soft (×1): students over the room capacity.' }) roomCapacity!: number;
  @Field(() => Int, { description: 'Soft (×5): days below a course\'s minimum working days.' }) minWorkingDays!: number;
  @Field(() => Int, { description: 'Soft (×2): isolated lectures of a class group.' }) curriculumCompactness!: number;
  @Field(() => Int, { description: 'Soft (×1): rooms beyond the first per course.' }) roomStability!: number;
}

@ObjectType('PlanEvaluation', { description: 'A plan checked by the independent ITC-2007 evaluator.' })
export class PlanEvaluationType {
  @Field(() => Int) hardViolations!: number;
  @Field(() => Int, { description: 'Soft penalty with the ITC-2007 weights.' }) penalty!: number;
  @Field() feasible!: boolean;
  @Field(() => PenaltyBreakdownType) breakdown!: PenaltyBreakdownType;
  /** Exposed by PlanEvaluationResolver, a page of it at a time. */
  conflicts!: string[];
}

@ObjectType('PublishedTimetableEntry', { description: 'One lecture of the published timetable of a term.' })
export class PublishedTimetableEntryType {
  @Field(() => ID, { description: 'Pass it as `after` to read the page after this entry.' }) id!: string;
  @Field(() => Int) day!: number;
  @Field(() => Int) period!: number;
  @Field() dayName!: string;
  @Field() periodLabel!: string;
  @Field(() => ID) courseId!: string;
  @Field() courseCode!: string;
  @Field() courseName!: string;
  @Field(() => Int) lectureIndex!: number;
  @Field(() => ID) teacherId!: string;
  @Field() teacherCode!: string;
  @Field() teacherName!: string;
  @Field(() => ID) roomId!: string;
  @Field() roomCode!: string;
  @Field() roomName!: string;
  @Field(() => [String], { description: 'Codes of the class groups taking the course.' }) curriculumCodes!: string[];
}

@InputType()
export class CreateSchedulePlanInput {
  @Field(() => ID) @IsUUID() termId!: string;
  @Field() @Length(1, MAX_NAME_LENGTH) name!: string;
}

@InputType()
export class StartAutomaticScheduleInput {
  @Field(() => ID, { description: 'A DRAFT plan.' }) @IsUUID() planId!: string;
  @Field(() => Int, { nullable: true, description: `Time budget, ${MIN_TIME_LIMIT_SECONDS}–${MAX_TIME_LIMIT_SECONDS} s (default 60).` })
  @IsOptional()
  @IsInt()
  @Min(MIN_TIME_LIMIT_SECONDS)
  @Max(MAX_TIME_LIMIT_SECONDS)
  timeLimitSeconds?: number;
  @Field(() => Int, { nullable: true, description: 'Random seed (default 1); the same seed gives the same search path.' })
  @IsOptional()
  @IsInt()
  @Min(0)
  seed?: number;
}

@InputType()
export class PlaceLectureInput {
  @Field(() => ID) @IsUUID() planId!: string;
  @Field(() => ID) @IsUUID() courseId!: string;
  @Field(() => Int) @IsInt() @Min(0) lectureIndex!: number;
  @Field(() => Int) @IsInt() @Min(0) day!: number;
  @Field(() => Int) @IsInt() @Min(0) period!: number;
  @Field(() => ID) @IsUUID() roomId!: string;
  @Field({ nullable: true, description: 'Default true: a lecture placed by hand stays put.' }) @IsOptional() locked?: boolean;
}

@ObjectType('AutomaticScheduleResult', { description: 'What an AUTOMATIC_SCHEDULE job found, checked by the independent evaluator.' })
export class AutomaticScheduleResultType {
  @Field(() => ID) planId!: string;
  @Field(() => Int) hardViolations!: number;
  @Field(() => Int, { description: 'Soft penalty with the ITC-2007 weights.' }) penalty!: number;
  @Field(() => PenaltyBreakdownType) breakdown!: PenaltyBreakdownType;
  @Field(() => Int) timeUsedMs!: number;
  @Field(() => Int) seed!: number;
  @Field(() => Float, { description: 'Local-search moves tried.' }) iterations!: number;
  @Field({ description: 'Why the search stopped: time, iterations or optimal.' }) stopReason!: string;
  @Field(() => Int) lecturesPlaced!: number;
  @Field(() => Int, { description: 'Locked lectures kept where they were.' }) lockedKept!: number;
}

@ObjectType('SchedulePublishResult', { description: 'What a SCHEDULE_PUBLISH job did.' })
export class SchedulePublishResultType {
  @Field(() => ID) planId!: string;
  @Field(() => ID) termId!: string;
  @Field(() => ID, { nullable: true, description: 'The plan that was published before and is ARCHIVED now.' }) previousPlanId!: string | null;
  @Field(() => Int, { description: 'Lectures in the published timetable.' }) entries!: number;
  @Field(() => Int) penalty!: number;
  @Field() publishedAt!: string;
}

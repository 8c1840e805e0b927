import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { MakeupExamSessionFormat } from '../../exams/entities';
import { ExamFormat } from '../../exams/exam-import';
import { DEFAULT_TIME_LIMIT_SECONDS, MAX_TIME_LIMIT_SECONDS, MIN_TIME_LIMIT_SECONDS } from '../../exams/makeup-exam-arrangement';
import { PeriodConstraintKind } from '../../exams/model/exam-model';

/*
 * Inputs carry no validation decorators: the exams services check every field and name
 * it in a BAD_USER_INPUT, before anything is written.
 */

registerEnumType(ExamFormat, {
  name: 'ExamFormat',
  description: 'ITC2007_EXAM: `text` is an ITC-2007 examination track .exam file. TORONTO: `text` is a .crs file, `studentsText` its .stu, `periods` the number of periods.',
});
registerEnumType(MakeupExamSessionFormat, {
  name: 'MakeupExamSessionFormat',
  description: "TERM: a term's make-up session (one exam per course with failing students). ITC2007_EXAM, TORONTO: imported from a benchmark's files.",
});
/** The core's `PeriodConstraintKind` under GraphQL's names (same values). */
export enum MakeupExamConstraintKind {
  SAME_PERIOD = PeriodConstraintKind.SamePeriod,
  DIFFERENT_PERIOD = PeriodConstraintKind.DifferentPeriod,
  AFTER = PeriodConstraintKind.After,
}
registerEnumType(MakeupExamConstraintKind, {
  name: 'MakeupExamConstraintKind',
  description: 'SAME_PERIOD: both exams in one period. DIFFERENT_PERIOD: in different periods. AFTER: the first in a later period than the second.',
});

@ObjectType('MakeupExamWeightings', { description: 'The soft weights: ITC-2007\'s institutional model and the Toronto proximity multiplier.' })
export class MakeupExamWeightingsType {
  @Field(() => Int, { description: 'Per student with two exams in adjacent periods of one day.' }) twoInARow!: number;
  @Field(() => Int, { description: 'Per student with two exams on one day, not adjacent.' }) twoInADay!: number;
  @Field(() => Int, { description: "A student's second exam within this many periods after the first costs 1 (0: off)." }) periodSpread!: number;
  @Field(() => Int, { description: 'Per room and period: (distinct exam lengths − 1) × this.' }) nonMixedDurations!: number;
  @Field(() => Int, { description: 'How many of the largest exams the front load watches.' }) frontLoadExams!: number;
  @Field(() => Int, { description: 'How many of the last periods they should avoid.' }) frontLoadPeriods!: number;
  @Field(() => Int, { description: 'Cost per large exam in one of those periods.' }) frontLoadWeight!: number;
  @Field(() => Int, { description: "Multiplier of Carter's proximity cost (16, 8, 4, 2, 1 per student for exams 1–5 periods apart, divided by the students)." })
  proximity!: number;
}

@ObjectType('MakeupExamSession', { description: 'A make-up exam session: periods, rooms, invigilators, exams, and its arrangement.' })
export class MakeupExamSessionType {
  @Field(() => ID) id!: string;
  @Field({ description: 'Unique.' }) code!: string;
  @Field() name!: string;
  @Field(() => MakeupExamSessionFormat) format!: MakeupExamSessionFormat;
  @Field(() => Float, { description: 'A recorded score below this is a failure (term sessions).' }) passingScore!: number;
  @Field(() => Int, { description: 'Minutes of an exam whose course names none.' }) defaultExamDuration!: number;
  @Field({ description: 'Exams need seats (false for a Toronto session).' }) capacitated!: boolean;
  @Field({ description: 'An exam larger than every room is split over several rooms (ITC-2007 forbids it).' }) roomSplitting!: boolean;
  @Field(() => Int, { description: 'Grows with every change to the session or its parts.' }) revision!: number;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType('MakeupExamPeriod', { description: 'An exam period; periods on one date form a day.' })
export class MakeupExamPeriodType {
  @Field(() => ID) id!: string;
  @Field(() => Int, { description: '0-based, in time order: the number solution files use.' }) position!: number;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD (none in a Toronto session).' }) date!: string | null;
  @Field(() => String, { nullable: true, description: 'HH:MM:SS.' }) startTime!: string | null;
  @Field(() => Int, { description: 'Minutes.' }) duration!: number;
  @Field(() => Int, { description: 'Soft: added for every exam placed in this period.' }) penalty!: number;
}

@ObjectType('MakeupExamRoom', { description: 'An exam room.' })
export class MakeupExamRoomType {
  @Field(() => ID) id!: string;
  @Field(() => Int, { description: '0-based: the number .sln files use.' }) position!: number;
  @Field() code!: string;
  @Field() name!: string;
  @Field(() => Int) capacity!: number;
  @Field(() => Int, { description: 'Soft: added for every exam seated here.' }) penalty!: number;
}

@ObjectType('MakeupExamInvigilator', { description: "A teacher of the session's term who can supervise exams in the periods listed." })
export class MakeupExamInvigilatorType {
  @Field(() => ID) id!: string;
}

@ObjectType('MakeupExam', { description: "An exam of a session: a course's make-up exam (term sessions) or an imported exam." })
export class MakeupExamType {
  @Field(() => ID) id!: string;
  @Field(() => Int, { description: '0-based: the order of the .sln file.' }) position!: number;
  @Field({ description: "The course's code, or the imported exam's id." }) code!: string;
  @Field(() => Int, { nullable: true, description: "Minutes; null: the session's default." }) duration!: number | null;
  @Field({ description: 'No other exam in its room and period.' }) roomExclusive!: boolean;
}

@ObjectType('MakeupExamEnrolment', {
  description: "A student enrolled in an exam's course with their score (term sessions: below the passing score they sit the make-up exam), or listed for an imported exam (no score; they sit it).",
})
export class MakeupExamEnrolmentType {
  @Field(() => ID) id!: string;
  @Field() studentCode!: string;
  @Field(() => Float, { nullable: true }) score!: number | null;
}

@ObjectType('MakeupExamConstraint', { description: 'A hard constraint between the periods of two exams.' })
export class MakeupExamConstraintType {
  @Field(() => ID) id!: string;
  @Field(() => MakeupExamConstraintKind) kind!: PeriodConstraintKind;
}

@ObjectType('MakeupExamArrangement', { description: "A session's arrangement, as saved by a MAKEUP_EXAM_AUTO job." })
export class MakeupExamArrangementType {
  @Field(() => ID) id!: string;
  @Field(() => ID, { nullable: true, description: 'The job that produced it.' }) jobId!: string | null;
  @Field(() => Int) seed!: number;
  @Field(() => Int, { description: 'When saved, by the independent evaluator.' }) hardViolations!: number;
  @Field(() => Float, { description: 'Soft cost when saved, by the independent evaluator.' }) cost!: number;
  @Field(() => Int) timeUsedMs!: number;
  @Field(() => Float, { description: 'Local-search moves tried.' }) iterations!: number;
  @Field(() => Int, { description: 'The session revision it was computed for.' }) sessionRevision!: number;
  @Field(() => Date) createdAt!: Date;
}

@ObjectType('MakeupExamSitting', { description: 'An exam in a period and a room (a split exam has one per room), with the seats used and the room\'s invigilator.' })
export class MakeupExamSittingType {
  @Field(() => ID, { description: 'Pass it as `after` to read the page after this sitting.' }) id!: string;
  @Field(() => Int) seats!: number;
}

@ObjectType('MakeupExamStudentSitting', { description: "One exam of a student's make-up timetable: the exam (its course), its period (date, time) and the student's room." })
export class MakeupExamStudentSittingType {
  @Field() studentCode!: string;
  /** Exposed by the resolver. */
  sitting!: unknown;
}

@ObjectType('MakeupExamHardViolations', { description: 'Hard violations by type; each occurrence counts 1.' })
export class MakeupExamHardViolationsType {
  @Field(() => Int, { description: 'Exams without a period.' }) unplaced!: number;
  @Field(() => Int, { description: 'Per student and period, the exams beyond the first.' }) conflicts!: number;
  @Field(() => Int, { description: 'A room and period with more students than seats.' }) roomCapacity!: number;
  @Field(() => Int, { description: 'An exam longer than its period.' }) periodDuration!: number;
  @Field(() => Int, { description: 'A broken same-period, different-period or after constraint.' }) periodConstraints!: number;
  @Field(() => Int, { description: 'A room-exclusive exam sharing its room.' }) roomExclusive!: number;
  @Field(() => Int, { description: 'An exam without a room, with seats that do not add up, or split where splitting is off.' }) seating!: number;
  @Field(() => Int, { description: 'A room in use without an available invigilator, or an invigilator in two rooms at once.' }) invigilation!: number;
  @Field(() => Int) total!: number;
}

@ObjectType('MakeupExamSoftCost', { description: 'The soft cost by term, each already weighted.' })
export class MakeupExamSoftCostType {
  @Field(() => Float) twoInARow!: number;
  @Field(() => Float) twoInADay!: number;
  @Field(() => Float) periodSpread!: number;
  @Field(() => Float) mixedDurations!: number;
  @Field(() => Float) frontLoad!: number;
  @Field(() => Float) roomPenalty!: number;
  @Field(() => Float) periodPenalty!: number;
  @Field(() => Float, { description: "Carter's proximity cost, divided by the number of students." }) proximity!: number;
  @Field(() => Float) total!: number;
}

@ObjectType('MakeupExamEvaluation', { description: "The session's arrangement checked by the independent evaluator against the session as it is now." })
export class MakeupExamEvaluationType {
  @Field(() => Int) hardViolations!: number;
  @Field(() => Float, { description: 'The soft cost (hard violations are counted apart).' }) cost!: number;
  @Field() feasible!: boolean;
  @Field({ description: 'No change to the session since the arrangement was computed.' }) current!: boolean;
  @Field(() => Int, { description: "Exams in the session's model (term sessions: courses with failing students)." }) exams!: number;
  @Field(() => Int, { description: 'Distinct students sitting them.' }) students!: number;
  @Field(() => MakeupExamHardViolationsType) hard!: MakeupExamHardViolationsType;
  @Field(() => MakeupExamSoftCostType) soft!: MakeupExamSoftCostType;
}

@ObjectType('MakeupExamArrangementResult', { description: 'What a MAKEUP_EXAM_AUTO job found, checked by the independent evaluator.' })
export class MakeupExamArrangementResultType {
  @Field(() => ID) sessionId!: string;
  @Field(() => ID) arrangementId!: string;
  @Field(() => Int) exams!: number;
  @Field(() => Int) students!: number;
  @Field(() => Int) periodsUsed!: number;
  @Field(() => Int) hardViolations!: number;
  @Field(() => Float) cost!: number;
  @Field(() => MakeupExamHardViolationsType) hard!: MakeupExamHardViolationsType;
  @Field(() => MakeupExamSoftCostType) soft!: MakeupExamSoftCostType;
  @Field(() => Int, { description: 'Exams that fit nowhere (their codes are in the arrangement).' }) unplacedCount!: number;
  @Field(() => Int) timeUsedMs!: number;
  @Field(() => Int) seed!: number;
  @Field(() => Float, { description: 'Local-search moves tried.' }) iterations!: number;
  @Field({ description: 'Why the search stopped: time, iterations or optimal.' }) stopReason!: string;
}

// ----- inputs ------------------------------------------------------------------

@InputType({ description: 'Weights to set; the ones left out keep their value (a new term session starts from 10, 5, 2, 5, no front load, no proximity).' })
export class MakeupExamWeightingsInput {
  @Field(() => Int, { nullable: true }) twoInARow?: number | null;
  @Field(() => Int, { nullable: true }) twoInADay?: number | null;
  @Field(() => Int, { nullable: true }) periodSpread?: number | null;
  @Field(() => Int, { nullable: true }) nonMixedDurations?: number | null;
  @Field(() => Int, { nullable: true }) frontLoadExams?: number | null;
  @Field(() => Int, { nullable: true }) frontLoadPeriods?: number | null;
  @Field(() => Int, { nullable: true }) frontLoadWeight?: number | null;
  @Field(() => Int, { nullable: true }) proximity?: number | null;
}

@InputType()
export class CreateMakeupExamSessionInput {
  @Field(() => ID) termId!: string;
  @Field({ description: 'Unique, no blanks.' }) code!: string;
  @Field(() => String, { nullable: true, description: 'Defaults to the code.' }) name?: string | null;
  @Field(() => Float, { nullable: true, description: 'Default 60.' }) passingScore?: number | null;
  @Field(() => Int, { nullable: true, description: 'Minutes, default 120.' }) defaultExamDuration?: number | null;
  @Field(() => MakeupExamWeightingsInput, { nullable: true }) weightings?: MakeupExamWeightingsInput | null;
}

@InputType()
export class UpdateMakeupExamSessionInput {
  @Field(() => String, { nullable: true }) code?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Float, { nullable: true }) passingScore?: number | null;
  @Field(() => Int, { nullable: true }) defaultExamDuration?: number | null;
  @Field(() => MakeupExamWeightingsInput, { nullable: true }) weightings?: MakeupExamWeightingsInput | null;
}

@InputType()
export class AddMakeupExamPeriodInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD; required except in a Toronto session.' }) date?: string | null;
  @Field(() => String, { nullable: true, description: 'HH:MM or HH:MM:SS; required except in a Toronto session.' }) startTime?: string | null;
  @Field(() => Int, { description: 'Minutes.' }) duration!: number;
  @Field(() => Int, { nullable: true, description: 'Default 0.' }) penalty?: number | null;
}

@InputType()
export class UpdateMakeupExamPeriodInput {
  @Field(() => String, { nullable: true }) date?: string | null;
  @Field(() => String, { nullable: true }) startTime?: string | null;
  @Field(() => Int, { nullable: true }) duration?: number | null;
  @Field(() => Int, { nullable: true }) penalty?: number | null;
}

@InputType()
export class AddMakeupExamRoomInput {
  @Field(() => ID) sessionId!: string;
  @Field({ description: 'Unique in the session, no blanks.' }) code!: string;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Int) capacity!: number;
  @Field(() => Int, { nullable: true, description: 'Default 0.' }) penalty?: number | null;
}

@InputType()
export class UpdateMakeupExamRoomInput {
  @Field(() => String, { nullable: true }) code?: string | null;
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => Int, { nullable: true }) capacity?: number | null;
  @Field(() => Int, { nullable: true }) penalty?: number | null;
}

@InputType()
export class SetMakeupExamInvigilatorInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => ID, { description: "A teacher of the session's term." }) teacherId!: string;
  @Field(() => [ID], { description: 'The periods they can supervise (replaces the list).' }) availablePeriodIds!: string[];
}

@InputType()
export class SetMakeupExamCourseInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => ID, { description: "A course of the session's term." }) courseId!: string;
  @Field(() => Int, { nullable: true, description: "Minutes; null keeps it (or the session's default)." }) duration?: number | null;
  @Field(() => Boolean, { nullable: true }) roomExclusive?: boolean | null;
}

@InputType()
export class UpdateMakeupExamInput {
  @Field(() => Int, { nullable: true }) duration?: number | null;
  @Field(() => Boolean, { nullable: true }) roomExclusive?: boolean | null;
}

@InputType()
export class MakeupExamScoreInput {
  @Field(() => ID) courseId!: string;
  @Field() studentCode!: string;
  @Field(() => Float, { nullable: true, description: 'Null: no score (not graded): not a failure.' }) score!: number | null;
}

@InputType()
export class RecordMakeupExamScoresInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => [MakeupExamScoreInput], { description: 'At most 10,000 per call; a score replaces the one recorded before.' }) scores!: MakeupExamScoreInput[];
}

@InputType()
export class AddMakeupExamConstraintInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => MakeupExamConstraintKind) kind!: PeriodConstraintKind;
  @Field(() => ID, { description: 'For AFTER: the exam that comes later.' }) firstExamId!: string;
  @Field(() => ID) secondExamId!: string;
}

@InputType()
export class StartMakeupExamArrangementInput {
  @Field(() => ID) sessionId!: string;
  @Field(() => Int, { nullable: true, description: `Time budget, ${MIN_TIME_LIMIT_SECONDS}–${MAX_TIME_LIMIT_SECONDS} s (default ${DEFAULT_TIME_LIMIT_SECONDS}).` })
  timeLimitSeconds?: number | null;
  @Field(() => Int, { nullable: true, description: 'Random seed (default 1).' }) seed?: number | null;
  @Field(() => Int, {
    nullable: true,
    description: 'A budget of local-search moves: with it the same seed gives the same arrangement on any machine (the time limit can only cut the run short).',
  })
  maxIterations?: number | null;
}

import { ArrayMaxSize, IsInt, IsOptional, IsUUID, Length, Max, Min } from 'class-validator';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { MAX_CODE_LENGTH, MAX_DAYS_PER_WEEK, MAX_NAME_LENGTH, MAX_PERIODS_PER_DAY, MAX_ROOM_CAPACITY, MAX_STUDENTS } from '../../academic/validation';

@ObjectType('AcademicTerm', { description: 'A term: the week grid and the academic data every timetable of the term uses.' })
export class AcademicTermType {
  @Field(() => ID) id!: string;
  @Field({ description: 'Unique; for an imported ITC-2007 instance, the import\'s term code.' }) code!: string;
  @Field() name!: string;
  @Field(() => Int) daysPerWeek!: number;
  @Field(() => Int) periodsPerDay!: number;
  @Field(() => [String], { description: 'One label per period of the day, or none.' }) periodLabels!: string[];
  @Field(() => Date) createdAt!: Date;
}

@ObjectType('Teacher')
export class TeacherType {
  @Field(() => ID) id!: string;
  @Field() code!: string;
  @Field() name!: string;
}

@ObjectType('Room')
export class RoomType {
  @Field(() => ID) id!: string;
  @Field() code!: string;
  @Field() name!: string;
  @Field(() => Int) capacity!: number;
}

@ObjectType('Course', { description: 'A course of a term.' })
export class CourseType {
  @Field(() => ID) id!: string;
  @Field() code!: string;
  @Field() name!: string;
  @Field(() => Int) lecturesPerWeek!: number;
  @Field(() => Int) minWorkingDays!: number;
  @Field(() => Int) students!: number;
}

@ObjectType('Curriculum', { description: 'A class group: its courses never overlap.' })
export class CurriculumType {
  @Field(() => ID) id!: string;
  @Field() code!: string;
  @Field() name!: string;
}

@ObjectType('Unavailability', { description: 'A course or a teacher cannot be scheduled at (day, period), both 0-based.' })
export class UnavailabilityType {
  @Field(() => ID) id!: string;
  @Field(() => Int) day!: number;
  @Field(() => Int) period!: number;
}

// ----- inputs ------------------------------------------------------------------

@InputType()
export class CreateTermInput {
  @Field() @Length(1, MAX_CODE_LENGTH) code!: string;
  @Field() @Length(1, MAX_NAME_LENGTH) name!: string;
  @Field(() => Int) @IsInt() @Min(1) @Max(MAX_DAYS_PER_WEEK) daysPerWeek!: number;
  @Field(() => Int) @IsInt() @Min(1) @Max(MAX_PERIODS_PER_DAY) periodsPerDay!: number;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(MAX_PERIODS_PER_DAY) periodLabels?: string[];
}

@InputType()
export class UpdateTermInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_CODE_LENGTH) code?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(1) @Max(MAX_DAYS_PER_WEEK) daysPerWeek?: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(1) @Max(MAX_PERIODS_PER_DAY) periodsPerDay?: number;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(MAX_PERIODS_PER_DAY) periodLabels?: string[];
}

@InputType()
export class CreateTeacherInput {
  @Field(() => ID) @IsUUID() termId!: string;
  @Field() @Length(1, MAX_CODE_LENGTH) code!: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
}

@InputType()
export class UpdateTeacherInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_CODE_LENGTH) code?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
}

@InputType()
export class CreateRoomInput {
  @Field(() => ID) @IsUUID() termId!: string;
  @Field() @Length(1, MAX_CODE_LENGTH) code!: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => Int, { description: 'At least 1.' }) @IsInt() @Min(1, { message: 'capacity must be at least 1' }) @Max(MAX_ROOM_CAPACITY, { message: `capacity must be at most ${MAX_ROOM_CAPACITY}` }) capacity!: number;
}

@InputType()
export class UpdateRoomInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_CODE_LENGTH) code?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(1, { message: 'capacity must be at least 1' }) @Max(MAX_ROOM_CAPACITY, { message: `capacity must be at most ${MAX_ROOM_CAPACITY}` }) capacity?: number;
}

@InputType()
export class CreateCourseInput {
  @Field(() => ID) @IsUUID() termId!: string;
  @Field() @Length(1, MAX_CODE_LENGTH) code!: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => ID, { description: 'A teacher of the same term.' }) @IsUUID() teacherId!: string;
  @Field(() => Int, { description: 'At most days × periods of the term.' }) @IsInt() @Min(1) lecturesPerWeek!: number;
  @Field(() => Int, { description: 'At most the days of the week.' }) @IsInt() @Min(0) minWorkingDays!: number;
  @Field(() => Int) @IsInt() @Min(0) @Max(MAX_STUDENTS) students!: number;
}

@InputType()
export class UpdateCourseInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_CODE_LENGTH) code?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => ID, { nullable: true }) @IsOptional() @IsUUID() teacherId?: string;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(1) lecturesPerWeek?: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(0) minWorkingDays?: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @IsInt() @Min(0) @Max(MAX_STUDENTS) students?: number;
}

@InputType()
export class CreateCurriculumInput {
  @Field(() => ID) @IsUUID() termId!: string;
  @Field() @Length(1, MAX_CODE_LENGTH) code!: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => [ID], { description: 'Courses of the same term.' }) @IsUUID('all', { each: true }) @ArrayMaxSize(500) courseIds!: string[];
}

@InputType()
export class UpdateCurriculumInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_CODE_LENGTH) code?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, MAX_NAME_LENGTH) name?: string;
  @Field(() => [ID], { nullable: true }) @IsOptional() @IsUUID('all', { each: true }) @ArrayMaxSize(500) courseIds?: string[];
}

@InputType({ description: 'Exactly one of courseId and teacherId.' })
export class AddUnavailabilityInput {
  @Field(() => ID, { nullable: true }) @IsOptional() @IsUUID() courseId?: string;
  @Field(() => ID, { nullable: true }) @IsOptional() @IsUUID() teacherId?: string;
  @Field(() => Int, { description: '0-based day of the week.' }) @IsInt() @Min(0) day!: number;
  @Field(() => Int, { description: '0-based period of the day.' }) @IsInt() @Min(0) period!: number;
}

import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import * as academic from '../../academic/academic-service';
import { importCurriculumTimetabling } from '../../scheduling/ctt-import';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from '../../academic/entities';
import { ApiRole } from '../auth/viewer';
import type { GraphQLContext } from '../graphql/context';
import {
  AcademicTermType,
  AddUnavailabilityInput,
  CourseType,
  CreateCourseInput,
  CreateCurriculumInput,
  CreateRoomInput,
  CreateTeacherInput,
  CreateTermInput,
  CurriculumType,
  RoomType,
  TeacherType,
  UnavailabilityType,
  UpdateCourseInput,
  UpdateCurriculumInput,
  UpdateRoomInput,
  UpdateTeacherInput,
  UpdateTermInput,
} from './academic.types';
import { entityById, pageOf, referenced } from './batch-loaders';
import { PageArgs, pageCost } from './page-args';
import { entityManagerOf } from './request-entity-manager';

const EDITORS = [ApiRole.ADMIN, ApiRole.SCHEDULER];
const em = entityManagerOf;

@Resolver(() => AcademicTermType)
export class AcademicTermResolver {
  @Authorized()
  @Query(() => [AcademicTermType], { description: 'The academic terms, oldest first, a page at a time.', complexity: pageCost })
  terms(@Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm[]> {
    return academic.pageTerms(em(ctx), page);
  }

  @Authorized()
  @Query(() => AcademicTermType, { nullable: true, description: 'A term by id; null when there is none.' })
  async term(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm | null> {
    return academic.findTerm(em(ctx), id).catch((error: { code?: string }) => {
      if (error.code === 'NOT_FOUND') return null;
      throw error;
    });
  }

  @Authorized(...EDITORS)
  @Mutation(() => AcademicTermType, {
    description:
      'Imports an ITC-2007 curriculum-based course timetabling (.ctt) instance as a new term, keeping its codes. ' +
      'Malformed text is a BAD_USER_INPUT naming the line; an existing term code is a CONFLICT; nothing is written then.',
  })
  importCurriculumTimetabling(
    @Arg('text', () => String) text: string,
    @Arg('termCode', () => String, { nullable: true, description: "Defaults to the file's Name:." }) termCode: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AcademicTerm> {
    return importCurriculumTimetabling(em(ctx), text, termCode);
  }

  @Authorized(...EDITORS)
  @Mutation(() => AcademicTermType)
  createTerm(@Arg('input', () => CreateTermInput) input: CreateTermInput, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm> {
    return academic.createTerm(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => AcademicTermType, { description: 'A smaller week is refused while courses, unavailability or scheduled lectures would not fit.' })
  updateTerm(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateTermInput) input: UpdateTermInput, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm> {
    return academic.updateTerm(em(ctx), id, input);
  }

  @Authorized(ApiRole.ADMIN)
  @Mutation(() => Boolean, { description: 'Deletes the term with all its data and plans.' })
  deleteTerm(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.deleteTerm(em(ctx), id);
  }

  @FieldResolver(() => [TeacherType], { description: 'By code, a page at a time.', complexity: pageCost })
  teachers(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Teacher[]> {
    return pageOf(ctx, 'Teacher', page, academic.pageTeachers, term.id);
  }

  @FieldResolver(() => [RoomType], { description: 'By code, a page at a time.', complexity: pageCost })
  rooms(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Room[]> {
    return pageOf(ctx, 'Room', page, academic.pageRooms, term.id);
  }

  @FieldResolver(() => [CourseType], { description: 'By code, a page at a time.', complexity: pageCost })
  courses(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Course[]> {
    return pageOf(ctx, 'Course', page, academic.pageCourses, term.id);
  }

  @FieldResolver(() => [CurriculumType], { description: 'By code, a page at a time.', complexity: pageCost })
  curricula(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Curriculum[]> {
    return pageOf(ctx, 'Curriculum', page, academic.pageCurricula, term.id);
  }

  @FieldResolver(() => [UnavailabilityType], { description: 'By day and period, a page at a time.', complexity: pageCost })
  unavailability(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Unavailability[]> {
    return pageOf(ctx, 'Unavailability', page, academic.pageUnavailability, term.id);
  }
}

@Resolver(() => TeacherType)
export class TeacherResolver {
  @Authorized(...EDITORS)
  @Mutation(() => TeacherType)
  createTeacher(@Arg('input', () => CreateTeacherInput) input: CreateTeacherInput, @Ctx() ctx: GraphQLContext): Promise<Teacher> {
    return academic.createTeacher(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => TeacherType)
  updateTeacher(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateTeacherInput) input: UpdateTeacherInput, @Ctx() ctx: GraphQLContext): Promise<Teacher> {
    return academic.updateTeacher(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'A teacher who still teaches courses is a CONFLICT.' })
  deleteTeacher(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.deleteTeacher(em(ctx), id);
  }
}

@Resolver(() => RoomType)
export class RoomResolver {
  @Authorized(...EDITORS)
  @Mutation(() => RoomType)
  createRoom(@Arg('input', () => CreateRoomInput) input: CreateRoomInput, @Ctx() ctx: GraphQLContext): Promise<Room> {
    return academic.createRoom(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => RoomType)
  updateRoom(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateRoomInput) input: UpdateRoomInput, @Ctx() ctx: GraphQLContext): Promise<Room> {
    return academic.updateRoom(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'A room used by the published plan is a CONFLICT.' })
  deleteRoom(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.deleteRoom(em(ctx), id);
  }
}

@Resolver(() => CourseType)
export class CourseResolver {
  @FieldResolver(() => TeacherType)
  teacher(@Root() course: Course, @Ctx() ctx: GraphQLContext): Promise<Teacher> {
    return referenced(ctx, Teacher, course.teacher);
  }

  @Authorized(...EDITORS)
  @Mutation(() => CourseType)
  createCourse(@Arg('input', () => CreateCourseInput) input: CreateCourseInput, @Ctx() ctx: GraphQLContext): Promise<Course> {
    return academic.createCourse(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => CourseType, { description: 'Fewer lectures drop the extra lectures from draft plans; a published plan using them is a CONFLICT.' })
  updateCourse(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateCourseInput) input: UpdateCourseInput, @Ctx() ctx: GraphQLContext): Promise<Course> {
    return academic.updateCourse(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'A course of the published plan is a CONFLICT.' })
  deleteCourse(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.deleteCourse(em(ctx), id);
  }
}

@Resolver(() => CurriculumType)
export class CurriculumResolver {
  @FieldResolver(() => [CourseType], { description: 'By code, a page at a time.', complexity: pageCost })
  courses(@Root() curriculum: Curriculum, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<Course[]> {
    return pageOf(ctx, 'CurriculumCourse', page, academic.pageCurriculumCourses, curriculum.id);
  }

  @Authorized(...EDITORS)
  @Mutation(() => CurriculumType)
  createCurriculum(@Arg('input', () => CreateCurriculumInput) input: CreateCurriculumInput, @Ctx() ctx: GraphQLContext): Promise<Curriculum> {
    return academic.createCurriculum(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => CurriculumType)
  updateCurriculum(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateCurriculumInput) input: UpdateCurriculumInput, @Ctx() ctx: GraphQLContext): Promise<Curriculum> {
    return academic.updateCurriculum(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  deleteCurriculum(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.deleteCurriculum(em(ctx), id);
  }
}

@Resolver(() => UnavailabilityType)
export class UnavailabilityResolver {
  @FieldResolver(() => CourseType, { nullable: true })
  course(@Root() row: Unavailability, @Ctx() ctx: GraphQLContext): Promise<Course | null> | null {
    return row.course ? entityById(ctx, Course, row.course.id) : null;
  }

  @FieldResolver(() => TeacherType, { nullable: true })
  teacher(@Root() row: Unavailability, @Ctx() ctx: GraphQLContext): Promise<Teacher | null> | null {
    return row.teacher ? entityById(ctx, Teacher, row.teacher.id) : null;
  }

  @Authorized(...EDITORS)
  @Mutation(() => UnavailabilityType, { description: 'Marks a course or a teacher unavailable at a day/period (idempotent).' })
  addUnavailability(@Arg('input', () => AddUnavailabilityInput) input: AddUnavailabilityInput, @Ctx() ctx: GraphQLContext): Promise<Unavailability> {
    return academic.addUnavailability(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  removeUnavailability(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return academic.removeUnavailability(em(ctx), id);
  }
}

export const academicResolvers = [AcademicTermResolver, TeacherResolver, RoomResolver, CourseResolver, CurriculumResolver, UnavailabilityResolver] as const;

import { ArrayMaxSize, IsOptional, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { MAX_PAGE_SIZE } from '../../../engine/queries/list-jobs';
import { JobKind, JobStatus } from './enums';
import { Job } from './job';

@ObjectType()
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => Boolean)
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType()
export class JobEdge {
  @Field(() => String, { description: 'Opaque; pass it as `after` to continue after this job.' })
  cursor!: string;

  @Field(() => Job)
  node!: Job;
}

@ObjectType()
export class JobConnection {
  @Field(() => [JobEdge])
  edges!: JobEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

export const DEFAULT_PAGE_SIZE = 20;

@ArgsType()
export class JobsArgs {
  @Field(() => Int, { defaultValue: DEFAULT_PAGE_SIZE, description: `Page size, 1–${MAX_PAGE_SIZE}.` })
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  first: number = DEFAULT_PAGE_SIZE;

  @Field(() => String, { nullable: true, description: 'The `endCursor` of the previous page.' })
  @IsOptional()
  @MaxLength(500)
  after?: string | null;

  @Field(() => [JobKind], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(20)
  kinds?: JobKind[] | null;

  @Field(() => [JobStatus], { nullable: true })
  @IsOptional()
  @ArrayMaxSize(20)
  statuses?: JobStatus[] | null;

  @Field(() => String, { nullable: true, description: 'Only jobs started by this subject.' })
  @IsOptional()
  @MaxLength(200)
  requestedBy?: string | null;
}

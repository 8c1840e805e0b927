import { IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';
import type { ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { ArgsType, Field, ID, Int } from 'type-graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page } from '../../academic/keyset-page';

/** `first` / `after` of every academic and scheduling list. */
@ArgsType()
export class PageArgs implements Page {
  @Field(() => Int, { defaultValue: DEFAULT_PAGE_SIZE, description: `Rows in this page, 1–${MAX_PAGE_SIZE}.` })
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  first: number = DEFAULT_PAGE_SIZE;

  @Field(() => ID, { nullable: true, description: 'The id of the last row of the previous page; the page starts after it.' })
  @IsOptional()
  @IsUUID('all', { message: 'after must be the id of a row of this list' })
  after?: string | null;
}

/**
 * A page costs what it can return: `first` rows, each 1 plus what is selected inside it.
 * (graphql-query-complexity gives `args` with their defaults applied.)
 */
export const pageCost = ({ args, childComplexity }: ComplexityEstimatorArgs): number => {
  const first = Number(args.first ?? DEFAULT_PAGE_SIZE);
  return (Number.isFinite(first) ? Math.max(1, first) : MAX_PAGE_SIZE) * (1 + childComplexity);
};

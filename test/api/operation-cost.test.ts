import { parse, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApiSchema } from '../../src/api/graphql/build-schema';
import { operationCost } from '../../src/api/graphql/limits';

const LIMIT = 1_000;
let schema: GraphQLSchema;

beforeAll(async () => {
  schema = await buildApiSchema();
});

const price = (text: string | ReturnType<typeof parse>, variables: Record<string, unknown> = {}, operationName?: string) =>
  operationCost(schema, typeof text === 'string' ? parse(text) : text, operationName, variables, LIMIT);

describe('operationCost, kept per document', () => {
  it('prices a page by the `first` its variable gives on every request: the same document costs more for a larger page', () => {
    const document = parse('query Page($n: Int!) { jobs(first: $n) { edges { node { id kind } } } }');
    const small = price(document, { n: 2 });
    const large = price(document, { n: 40 });
    expect(small.error).toBeNull();
    expect(large.cost).toBeGreaterThan(small.cost);
    expect(price(document, { n: 2 }).cost).toBe(small.cost);
  });

  it('prices a page of jobs by its rows even when it selects nothing of them', () => {
    expect(price('{ jobs(first: 200) { __typename } }').cost).toBeGreaterThanOrEqual(200);
    const many = Array.from({ length: 30 }, (_, i) => `a${i}: jobs(first: 200) { __typename }`).join(' ');
    expect(price(`{ ${many} }`).error?.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('prices a selection left out by @include($v) again when $v changes', () => {
    const document = parse('query Maybe($v: Boolean!) { a: jobs(first: 30) { edges { node { id } } } b: jobs(first: 30) @include(if: $v) { edges { node { id } } } }');
    const without = price(document, { v: false });
    const withBoth = price(document, { v: true });
    expect(withBoth.cost).toBeGreaterThan(without.cost);
    expect(price(document, { v: false }).cost).toBe(without.cost);
  });

  it('keeps the cost of a document no variable can change (a mutation sent again with new input), per operation name and limit', () => {
    const document = parse(`
      mutation Start($input: StartAutomaticScheduleInput!) { startAutomaticSchedule(input: $input) { id status } }
      query Pages { terms(first: 50) { id code } }`);
    const start = price(document, { input: { planId: '00000000-0000-4000-8000-000000000001' } }, 'Start');
    const pages = price(document, {}, 'Pages');
    expect(start).toEqual({ cost: expect.any(Number), error: null });
    expect(pages.cost).not.toBe(start.cost);
    expect(price(document, { input: { planId: '00000000-0000-4000-8000-000000000002' } }, 'Start')).toEqual(start);
    // Over a lower limit the same document is refused: the kept cost is checked against each limit.
    const strict = operationCost(schema, document, 'Pages', {}, pages.cost - 1);
    expect(strict.error?.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('never keeps the cost of a request whose variables it could not read: the next one, with good ones, is priced', () => {
    const document = parse('mutation Start($input: StartAutomaticScheduleInput!) { startAutomaticSchedule(input: $input) { id status } }');
    expect(price(document, { input: 5 })).toEqual({ cost: 0, error: null, unpriced: true });
    expect(price(document, { input: { planId: '00000000-0000-4000-8000-000000000001' } }).cost).toBeGreaterThan(0);
  });

  it('a negative `first` on conflicts costs 1, not less: it cannot pay for the conflicts its siblings send', () => {
    const field = (first: number) => `{ schedulePlan(id: "x") { evaluation { a: conflicts(first: 1000) ${first === 0 ? '' : `b: conflicts(first: ${first})`} } } }`;
    const alone = price(field(0)).cost;
    expect(price(field(-2147483648)).cost).toBe(alone + 1);
    expect(price(field(1)).cost).toBe(alone + 1);
  });
});

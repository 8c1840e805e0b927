/** EventStream's bound on what waits for a slow consumer (BacklogLimit), pulled by hand. */
import { describe, expect, it } from 'vitest';
import { EventStream, type BacklogLimit } from '../../src/api/graphql/event-stream';

type Event = { job: string; sequence: number };

function streamWith(maxPending: number): { stream: EventStream<Event>; overflows: () => number; returned: () => boolean } {
  let overflows = 0;
  let returned = false;
  const limit: BacklogLimit<Event> = { maxPending, keyOf: (e) => e.job, onOverflow: () => overflows++ };
  const stream = new EventStream<Event>(() => (returned = true), limit);
  return { stream, overflows: () => overflows, returned: () => returned };
}

async function drain(stream: EventStream<Event>, count: number): Promise<Event[]> {
  const values: Event[] = [];
  for (let i = 0; i < count; i++) {
    const next = await stream.next();
    if (next.done) break;
    values.push(next.value);
  }
  return values;
}

describe('EventStream with a backlog limit', () => {
  it('keeps every value while no more than maxPending wait', async () => {
    const { stream, overflows } = streamWith(10);
    for (let i = 1; i <= 10; i++) stream.push({ job: 'a', sequence: i });
    expect((await drain(stream, 10)).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(overflows()).toBe(0);
  });

  it('past maxPending keeps the newest value of each key, in the order of those values', async () => {
    const { stream, overflows } = streamWith(10);
    // 11 values of three jobs: b's newest comes after a's and c's newest.
    const pushed = ['a', 'b', 'c', 'a', 'c', 'a', 'c', 'a', 'c', 'a', 'b'];
    pushed.forEach((job, i) => stream.push({ job, sequence: i + 1 }));
    expect(await drain(stream, 3)).toEqual([
      { job: 'c', sequence: 9 },
      { job: 'a', sequence: 10 },
      { job: 'b', sequence: 11 },
    ]);
    expect(overflows()).toBe(0);
  });

  it('ends and calls onOverflow once when more than half of maxPending keys still wait', async () => {
    const { stream, overflows, returned } = streamWith(10);
    for (let i = 1; i <= 20; i++) stream.push({ job: `job-${i}`, sequence: 1 });
    expect(overflows()).toBe(1);
    expect(returned()).toBe(true);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });

  it('hands a value straight to a waiting consumer, whatever the limit', async () => {
    const { stream } = streamWith(10);
    const next = stream.next();
    stream.push({ job: 'a', sequence: 1 });
    expect(await next).toEqual({ value: { job: 'a', sequence: 1 }, done: false });
  });
});

import { describe, expect, it } from 'vitest';
import { Batcher, ItemFailure } from '../../src/engine/db/batcher';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('Batcher', () => {
  it('sends the calls of one turn of the event loop as one batch', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(async (requests) => {
      batches.push(requests);
      return requests.map((r) => r * 10);
    });
    const results = await Promise.all([1, 2, 3, 4].map((n) => batcher.submit(n)));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  it('runs at most `maxInFlight` batches at once; calls arriving meanwhile go together in the next', async () => {
    const gates: Array<ReturnType<typeof gate>> = [];
    const batches: number[][] = [];
    let running = 0;
    let maxRunning = 0;
    const batcher = new Batcher<number, number>(
      async (requests) => {
        batches.push(requests);
        running++;
        maxRunning = Math.max(maxRunning, running);
        const g = gate();
        gates.push(g);
        await g.opened;
        running--;
        return requests;
      },
      64,
      2,
    );
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.submit(2);
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = [3, 4, 5].map((n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2]]);
    gates[0]!.open();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
    for (const g of gates) g.open();
    await Promise.all([second, ...waiting]);
    expect(await Promise.all(waiting)).toEqual([3, 4, 5]);
    expect(maxRunning).toBe(2);
  });

  it('fails only the request its batch marks as failed, and the whole batch when the batch throws', async () => {
    const batcher = new Batcher<number, number>(async (requests) => {
      if (requests.includes(99)) throw new Error('batch refused');
      return requests.map((r) => (r === 2 ? new ItemFailure(new Error('bad 2')) : r));
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit(n)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await expect(batcher.submit(99)).rejects.toThrow('batch refused');
  });
});

import { describe, expect, it } from 'vitest';
import { RunSlots } from '../../src/engine/run-slots';

describe('RunSlots', () => {
  it('grants up to its size at once, then in the order asked as slots are released', async () => {
    const slots = new RunSlots(2);
    const never = new AbortController().signal;
    await slots.acquire(never);
    await slots.acquire(never);
    const order: string[] = [];
    const third = slots.acquire(never).then(() => order.push('third'));
    const fourth = slots.acquire(never).then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(slots.waiting).toBe(2);
    slots.release();
    await third;
    expect(order).toEqual(['third']);
    slots.release();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    expect(slots.held).toBe(2);
  });

  it('a waiter whose signal aborts stops waiting with its reason and takes no slot', async () => {
    const slots = new RunSlots(1);
    await slots.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    controller.abort(new Error('cancelled while waiting'));
    await expect(waiting).rejects.toThrow('cancelled while waiting');
    expect(slots.waiting).toBe(0);
    slots.release();
    expect(slots.held).toBe(0);
  });

  it('refuses at once when the signal has already aborted, and a release of no slot', async () => {
    const slots = new RunSlots(1);
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    await expect(slots.acquire(controller.signal)).rejects.toThrow('shutting down');
    expect(slots.held).toBe(0);
    expect(() => slots.release()).toThrow(/not held/);
    expect(() => new RunSlots(0)).toThrow(/≥ 1/);
  });
});

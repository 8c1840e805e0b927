import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Runs `work` and lists each time MikroORM entered an AsyncLocalStorage within it (its
 * `em.transactional` and flush do). In Node 20 the first entry into any storage turns
 * Node's promise hooks on for as long as the storage stays enabled — for the process's
 * life — a cost on every await; the paths an API process runs on every request must not
 * enter one. Only MikroORM's calls made in `work`'s own async context are listed, so a
 * job that completes in a transaction beside it (an engine running in the same test)
 * is not counted.
 */
export async function ormAsyncContextEntries<T>(work: () => Promise<T>): Promise<{ result: T; entries: string[] }> {
  const entries: string[] = [];
  const withinWork = new AsyncLocalStorage<true>();
  const prototype = AsyncLocalStorage.prototype as unknown as Record<'run' | 'enterWith', (...args: unknown[]) => unknown>;
  const originals = { run: prototype.run, enterWith: prototype.enterWith };
  for (const method of ['run', 'enterWith'] as const) {
    const original = originals[method];
    prototype[method] = function (this: unknown, ...args: unknown[]) {
      const stack = new Error().stack ?? '';
      if (withinWork.getStore() && stack.includes('@mikro-orm')) entries.push(`${method}: ${stack.split('\n').slice(2, 5).join(' | ')}`);
      return original.apply(this, args);
    };
  }
  try {
    return { result: await withinWork.run(true, work), entries };
  } finally {
    Object.assign(prototype, originals);
    withinWork.disable();
  }
}

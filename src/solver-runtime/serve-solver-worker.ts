/**
 * The body of a solver's worker-thread entry: runs one solve with the data the parent sent,
 * reads the parent's stop flag between moves and posts progress and the result (or the
 * solver's error) back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SolverWorkerData, SolverWorkerMessage, WorkerSolverHooks } from './worker-protocol';

export function serveSolverWorker<M, O, P, R>(solve: (model: M, options: O & WorkerSolverHooks<P>) => R): void {
  const data = workerData as SolverWorkerData<M, O>;
  const stop = new Int32Array(data.stopFlag);
  const post = (message: SolverWorkerMessage<P, R>): void => parentPort!.postMessage(message);
  try {
    const result = solve(data.model, {
      ...data.options,
      shouldStop: () => Atomics.load(stop, 0) !== 0,
      onProgress: (progress: P) => post({ type: 'progress', progress }),
    });
    post({ type: 'result', result });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', name: err.name, message: err.message });
  }
}

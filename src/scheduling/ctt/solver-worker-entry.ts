/**
 * Worker-thread entry: runs one solve and posts progress and the result to the parent.
 * Started by `solveInWorker` (solver-worker.ts); not meant to be imported.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { solveCtt } from './solver';
import type { SolverWorkerData, SolverWorkerMessage } from './solver-worker-protocol';

const data = workerData as SolverWorkerData;
const stop = new Int32Array(data.stopFlag);
const post = (message: SolverWorkerMessage): void => parentPort!.postMessage(message);

try {
  const result = solveCtt(data.model, {
    ...data.options,
    shouldStop: () => Atomics.load(stop, 0) !== 0,
    onProgress: (progress) => post({ type: 'progress', progress }),
  });
  post({ type: 'result', result });
} catch (e) {
  const err = e instanceof Error ? e : new Error(String(e));
  post({ type: 'error', name: err.name, message: err.message });
}

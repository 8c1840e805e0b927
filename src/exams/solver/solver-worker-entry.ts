/**
 * Worker-thread entry: runs one exam solve and posts progress and the result to the
 * parent. Started by `solveExamsInWorker` (solver-worker.ts); not meant to be imported.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { solveExams } from './solver';
import type { ExamSolverWorkerData, ExamSolverWorkerMessage } from './solver-worker-protocol';

const data = workerData as ExamSolverWorkerData;
const stop = new Int32Array(data.stopFlag);
const post = (message: ExamSolverWorkerMessage): void => parentPort!.postMessage(message);

try {
  const result = solveExams(data.model, {
    ...data.options,
    shouldStop: () => Atomics.load(stop, 0) !== 0,
    onProgress: (progress) => post({ type: 'progress', progress }),
  });
  post({ type: 'result', result });
} catch (e) {
  const err = e instanceof Error ? e : new Error(String(e));
  post({ type: 'error', name: err.name, message: err.message });
}

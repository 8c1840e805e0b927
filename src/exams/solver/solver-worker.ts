/**
 * Runs the CPU-bound exam solver in a `worker_threads` Worker so the service's event loop
 * (HTTP, GraphQL subscriptions, job heartbeats) stays responsive during a solve.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ExamModel } from '../model/exam-model';
import type { ExamSolveProgress, ExamSolveResult } from './solver';
import type { ExamSolverWorkerData, ExamSolverWorkerMessage, ExamWorkerSolveOptions } from './solver-worker-protocol';

export type { ExamWorkerSolveOptions } from './solver-worker-protocol';

/** How long a worker asked to stop may take before it is terminated. */
const STOP_GRACE_MS = 1_000;

/** The solve was aborted through the signal. `partial` is the best arrangement if the worker returned one. */
export class ExamSolveAbortedError extends Error {
  override readonly name = 'AbortError';
  constructor(readonly partial?: ExamSolveResult) {
    super('exam solve aborted');
  }
}

/** The solver failed inside the worker (e.g. an invalid model); carries the original name. */
export class ExamSolverWorkerError extends Error {
  constructor(
    readonly originalName: string,
    message: string,
  ) {
    super(message);
    this.name = 'ExamSolverWorkerError';
  }
}

export interface ExamSolveInWorkerHooks {
  signal?: AbortSignal;
  onProgress?: (progress: ExamSolveProgress) => void;
}

/**
 * Under vitest/ts-node this module is a `.ts` file and so is its sibling entry; compiled,
 * both are `.js` in dist/. The worker gets a plain Node, so for TS sources it needs
 * ts-node's require hook (tsconfig compiles to CommonJS).
 */
function workerEntry(): { file: string; execArgv: string[] } {
  if (__filename.endsWith('.ts')) {
    return { file: join(__dirname, 'solver-worker-entry.ts'), execArgv: ['-r', 'ts-node/register/transpile-only'] };
  }
  return { file: join(__dirname, 'solver-worker-entry.js'), execArgv: [] };
}

export function solveExamsInWorker(model: ExamModel, options: ExamWorkerSolveOptions = {}, hooks: ExamSolveInWorkerHooks = {}): Promise<ExamSolveResult> {
  const { signal, onProgress } = hooks;
  if (signal?.aborted) return Promise.reject(new ExamSolveAbortedError());
  return new Promise<ExamSolveResult>((resolve, reject) => {
    const stopFlag = new SharedArrayBuffer(4);
    const stop = new Int32Array(stopFlag);
    const { file, execArgv } = workerEntry();
    const data: ExamSolverWorkerData = { model, options, stopFlag };
    const worker = new Worker(file, { workerData: data, execArgv });
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;

    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      fn();
      // The worker has posted its last message or is being abandoned; either way it is done.
      void worker.terminate();
    };
    function onAbort(): void {
      Atomics.store(stop, 0, 1);
      killTimer = setTimeout(() => finish(() => reject(new ExamSolveAbortedError())), STOP_GRACE_MS);
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (message: ExamSolverWorkerMessage) => {
      if (message.type === 'progress') {
        if (!settled && onProgress) {
          try {
            onProgress(message.progress);
          } catch {
            // A failing observer must not kill the solve.
          }
        }
      } else if (message.type === 'result') {
        if (signal?.aborted) finish(() => reject(new ExamSolveAbortedError(message.result)));
        else finish(() => resolve(message.result));
      } else {
        finish(() => reject(new ExamSolverWorkerError(message.name, message.message)));
      }
    });
    worker.on('error', (err) => finish(() => reject(err)));
    worker.on('exit', (code) => finish(() => reject(new Error(`exam solver worker exited with code ${code} before returning a result`))));
  });
}

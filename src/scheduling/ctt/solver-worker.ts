/**
 * Runs the CPU-bound solver in a `worker_threads` Worker so the service's event loop
 * (HTTP, GraphQL subscriptions, job heartbeats) stays responsive during a solve.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CttModel } from './model';
import type { SolveProgress, SolveResult } from './solver';
import type { SolverWorkerData, SolverWorkerMessage, WorkerSolveOptions } from './solver-worker-protocol';

export type { WorkerSolveOptions } from './solver-worker-protocol';

/** How long a worker asked to stop may take before it is terminated. */
const STOP_GRACE_MS = 1_000;

/** The solve was aborted through the signal. `partial` is the best timetable if the worker returned one. */
export class CttSolveAbortedError extends Error {
  override readonly name = 'AbortError';
  constructor(readonly partial?: SolveResult) {
    super('timetable solve aborted');
  }
}

/** The solver failed inside the worker (e.g. an invalid model); carries the original name. */
export class CttSolverWorkerError extends Error {
  constructor(
    readonly originalName: string,
    message: string,
  ) {
    super(message);
    this.name = 'CttSolverWorkerError';
  }
}

export interface SolveInWorkerHooks {
  signal?: AbortSignal;
  onProgress?: (progress: SolveProgress) => void;
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

export function solveInWorker(model: CttModel, options: WorkerSolveOptions = {}, hooks: SolveInWorkerHooks = {}): Promise<SolveResult> {
  const { signal, onProgress } = hooks;
  if (signal?.aborted) return Promise.reject(new CttSolveAbortedError());
  return new Promise<SolveResult>((resolve, reject) => {
    const stopFlag = new SharedArrayBuffer(4);
    const stop = new Int32Array(stopFlag);
    const { file, execArgv } = workerEntry();
    const data: SolverWorkerData = { model, options, stopFlag };
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
      killTimer = setTimeout(() => finish(() => reject(new CttSolveAbortedError())), STOP_GRACE_MS);
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (message: SolverWorkerMessage) => {
      if (message.type === 'progress') {
        if (!settled && onProgress) {
          try {
            onProgress(message.progress);
          } catch {
            // A failing observer must not kill the solve.
          }
        }
      } else if (message.type === 'result') {
        if (signal?.aborted) finish(() => reject(new CttSolveAbortedError(message.result)));
        else finish(() => resolve(message.result));
      } else {
        finish(() => reject(new CttSolverWorkerError(message.name, message.message)));
      }
    });
    worker.on('error', (err) => finish(() => reject(err)));
    worker.on('exit', (code) => finish(() => reject(new Error(`solver worker exited with code ${code} before returning a result`))));
  });
}

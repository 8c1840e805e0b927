/**
 * Runs a CPU-bound solver in a `worker_threads` Worker so the service's event loop (HTTP,
 * GraphQL subscriptions, job heartbeats) stays responsive during a solve. Stopping is
 * cooperative through a shared flag the solver reads between moves; a worker that has not
 * answered within the grace period is terminated.
 */
import { Worker } from 'node:worker_threads';
import type { SolveAbortedError, SolverWorkerError } from './solver-errors';
import type { SolverWorkerData, SolverWorkerMessage } from './worker-protocol';

/** How long a worker asked to stop may take before it is terminated. */
const STOP_GRACE_MS = 1_000;

export interface SolveInWorkerHooks<P> {
  signal?: AbortSignal;
  onProgress?: (progress: P) => void;
}

/** What a domain tells the runner about its solver. */
export interface SolverWorkerSpec<R> {
  /** The entry module's path without its extension (`.ts` under ts-node/vitest, `.js` compiled). */
  entry: string;
  /** Names the solver in the error of a worker that exits without answering. */
  name: string;
  aborted: (partial?: R) => SolveAbortedError<R>;
  failed: (originalName: string, message: string) => SolverWorkerError;
}

/**
 * Under vitest/ts-node this module is a `.ts` file and so is every entry; compiled, all are
 * `.js` in dist/. The worker gets a plain Node, so for TS sources it needs ts-node's require
 * hook (tsconfig compiles to CommonJS).
 */
function workerEntry(entry: string): { file: string; execArgv: string[] } {
  if (__filename.endsWith('.ts')) return { file: `${entry}.ts`, execArgv: ['-r', 'ts-node/register/transpile-only'] };
  return { file: `${entry}.js`, execArgv: [] };
}

export function runSolverInWorker<M, O, P, R>(spec: SolverWorkerSpec<R>, model: M, options: O, hooks: SolveInWorkerHooks<P> = {}): Promise<R> {
  const { signal, onProgress } = hooks;
  if (signal?.aborted) return Promise.reject(spec.aborted());
  return new Promise<R>((resolve, reject) => {
    const stopFlag = new SharedArrayBuffer(4);
    const stop = new Int32Array(stopFlag);
    const { file, execArgv } = workerEntry(spec.entry);
    const data: SolverWorkerData<M, O> = { model, options, stopFlag };
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
      killTimer = setTimeout(() => finish(() => reject(spec.aborted())), STOP_GRACE_MS);
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (message: SolverWorkerMessage<P, R>) => {
      if (message.type === 'progress') {
        if (!settled && onProgress) {
          try {
            onProgress(message.progress);
          } catch {
            // A failing observer must not kill the solve.
          }
        }
      } else if (message.type === 'result') {
        if (signal?.aborted) finish(() => reject(spec.aborted(message.result)));
        else finish(() => resolve(message.result));
      } else {
        finish(() => reject(spec.failed(message.name, message.message)));
      }
    });
    worker.on('error', (err) => finish(() => reject(err)));
    worker.on('exit', (code) => finish(() => reject(new Error(`${spec.name} worker exited with code ${code} before returning a result`))));
  });
}

/**
 * Messages between `runSolverInWorker` and a solver's worker entry. Only plain data crosses
 * the boundary (structured clone), so a domain's model goes uncompiled.
 */

/** The callbacks a solver takes that cannot cross into a worker; the rest of its options can. */
export interface WorkerSolverHooks<P> {
  shouldStop: () => boolean;
  onProgress: (progress: P) => void;
}

/** The serialisable part of a solver's options (no callbacks, no signal). */
export type WorkerSolveOptions<O> = Omit<O, 'signal' | 'shouldStop' | 'onProgress'>;

export interface SolverWorkerData<M, O> {
  model: M;
  options: O;
  /**
   * One Int32 set to 1 by the parent to ask for a stop. A message could not be read: a
   * solver runs a synchronous loop and never yields to the worker's event loop.
   */
  stopFlag: SharedArrayBuffer;
}

export type SolverWorkerMessage<P, R> =
  | { type: 'progress'; progress: P }
  | { type: 'result'; result: R }
  | { type: 'error'; name: string; message: string };

/** The errors a solve run in a worker rejects with; each domain names its own subclasses. */

/** The solve was aborted through the signal. `partial` is the solver's best result if the worker returned one. */
export class SolveAbortedError<R> extends Error {
  override readonly name = 'AbortError';
  constructor(
    message: string,
    readonly partial?: R,
  ) {
    super(message);
  }
}

/** The solver failed inside the worker (e.g. an invalid model); carries the original error's name. */
export class SolverWorkerError extends Error {
  constructor(
    readonly originalName: string,
    message: string,
  ) {
    super(message);
    this.name = 'SolverWorkerError';
  }
}

/** A batch result for one request that failed on its own; the others in the batch stand. */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Group commit on the client side: calls that arrive while a batch is in flight wait
 * and go together in the next one. An idle caller goes at once (no added latency);
 * under load, N calls cost one round trip and one commit instead of N.
 */
export class Batcher<Request, Result> {
  private queue: Array<{ request: Request; resolve: (r: Result | undefined) => void; reject: (e: unknown) => void }> = [];
  private running = false;

  constructor(
    /** Runs one batch; returns one result (undefined, or an ItemFailure) per request, in order. */
    private readonly runBatch: (requests: Request[]) => Promise<Array<Result | ItemFailure | undefined>>,
    private readonly maxBatch = 64,
  ) {}

  submit(request: Request): Promise<Result | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.runBatch(batch.map((b) => b.request));
        batch.forEach((b, i) => {
          const result = results[i];
          if (result instanceof ItemFailure) b.reject(result.error);
          else b.resolve(result);
        });
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
    this.running = false;
  }
}

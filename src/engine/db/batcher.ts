import { isTransientDbError } from './transient-error';

/** A batch result for one request that failed on its own; the others in the batch stand. */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Batches the runner's claims (and the completer's completions) run at once. With one, a
 * consumer that asks while a batch is in flight waits for it and then for its own: two
 * round trips. With two it waits for about one, and batches stay large under load.
 * (Two batches holding duplicates of one message may deadlock; PostgreSQL ends one, which
 * is transient: that claim's delivery comes back later, a completion is repeated.)
 */
export const BATCHES_IN_FLIGHT = 2;

/**
 * Group commit on the client side: calls made in the same turn of the event loop, and
 * calls that arrive while a batch is in flight, go together in the next batch. A batch
 * leaves at the end of the turn that asked for it (an idle caller waits for no timer);
 * under load, N calls cost one round trip and one commit instead of N.
 */
export class Batcher<Request, Result> {
  private queue: Array<{ request: Request; resolve: (r: Result | undefined) => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Runs one batch; returns one result (undefined, or an ItemFailure) per request, in order. */
    private readonly runBatch: (requests: Request[]) => Promise<Array<Result | ItemFailure | undefined>>,
    private readonly maxBatch = 64,
    /** Batches running at once (each on its own connection). */
    private readonly maxInFlight = 1,
  ) {}

  submit(request: Request): Promise<Result | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      // Wait for the end of this turn: the deliveries of one socket read all ask in it.
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.startBatches();
        });
      }
    });
  }

  private startBatches(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        // What queued meanwhile has waited already: it goes at once.
        this.startBatches();
      });
    }
  }

  private async run(batch: typeof this.queue): Promise<void> {
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
}

/**
 * A Batcher's `runBatch` for a statement over many requests: `many` runs them all at
 * once, its rows matched to their requests by key (a request with no row gets
 * undefined). A statement that fails for a reason other than the database being away —
 * a value it refuses, one that cannot be serialised — is run again request by request
 * with `one`, so that one bad request fails alone and never those batched with it.
 * A lone request runs `one` at once: `one` may be a statement with scalar parameters,
 * whose plan PostgreSQL keeps, while a statement over arrays is planned on every call —
 * a cost only a batch should pay.
 */
export function statementPerBatch<Request, Row, ManyRow extends Row = Row>(statements: {
  many: (requests: Request[]) => Promise<ManyRow[]>;
  one: (request: Request) => Promise<Row | undefined>;
  rowKey: (row: ManyRow) => string;
  requestKey: (request: Request) => string;
}): (requests: Request[]) => Promise<Array<Row | ItemFailure | undefined>> {
  return async (requests) => {
    if (requests.length === 1) return [await statements.one(requests[0]!)];
    try {
      const rows = await statements.many(requests);
      const byKey = new Map<string, Row>(rows.map((row) => [statements.rowKey(row), row]));
      return requests.map((r) => byKey.get(statements.requestKey(r)));
    } catch (error) {
      if (isTransientDbError(error)) throw error;
      return Promise.all(requests.map((r) => statements.one(r).catch((itemError: unknown) => new ItemFailure(itemError))));
    }
  };
}

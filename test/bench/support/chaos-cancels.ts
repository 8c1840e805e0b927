/**
 * The chaos benchmark's cancellations, through the API (`cancelJob` over HTTP, on a
 * random API process): some jobs are cancelled once they are seen RUNNING, others at a
 * random moment (mostly while still QUEUED). A request that fails for a reason other
 * than CONFLICT (the job had already ended) — the database restarting, say — is tried
 * again a bounded number of times.
 */
import type { SeededRandom } from './seeded-random';

const CANCEL = 'mutation ChaosCancel($id: ID!) { cancelJob(id: $id) { id status cancelRequested } }';
const ATTEMPTS = 10;
const RETRY_MS = 1_000;
const REQUEST_TIMEOUT_MS = 10_000;

export type CancelOutcome =
  /** The API answered CANCELLED: the job was queued and ended at once. */
  | 'cancelled-queued'
  /** The API accepted the request for a running job; its worker stops it. */
  | 'requested-running'
  /** CONFLICT: the job had already ended. */
  | 'already-ended'
  /** Every attempt failed. */
  | 'failed';

export interface CancelPlan {
  jobId: string;
  /** `running`: once seen RUNNING; `at`: `dueMs` after `begin()`. */
  when: 'running' | 'at';
  dueMs: number;
  outcome: CancelOutcome | null;
  attempts: number;
  lastError: string | null;
}

export class Canceller {
  readonly plans: CancelPlan[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly byJob = new Map<string, CancelPlan>();
  private started = 0;
  private stopped = false;

  constructor(
    private readonly deps: {
      httpUrls: string[];
      token: string;
      random: SeededRandom;
    },
  ) {}

  plan(jobId: string, when: CancelPlan['when'], dueMs: number): void {
    const plan: CancelPlan = { jobId, when, dueMs, outcome: null, attempts: 0, lastError: null };
    this.plans.push(plan);
    this.byJob.set(jobId, plan);
  }

  /** Job ids waiting to be cancelled once they run. */
  waitingForRunning(): string[] {
    return this.plans.filter((p) => p.when === 'running' && p.outcome === null && p.attempts === 0).map((p) => p.jobId);
  }

  begin(): void {
    this.started = Date.now();
  }

  /** ms since `begin()`, the clock of `dueMs`. */
  elapsedMs(): number {
    return this.started ? Date.now() - this.started : 0;
  }

  /** Cancels what is due: plans timed before now, and `running` plans among `runningIds`. */
  tick(runningIds: readonly string[] = []): void {
    if (this.stopped || !this.started) return;
    const elapsed = Date.now() - this.started;
    for (const plan of this.plans) {
      if (plan.outcome !== null || plan.attempts > 0) continue;
      if (plan.when === 'at' && plan.dueMs <= elapsed) this.launch(plan);
    }
    for (const id of runningIds) {
      const plan = this.byJob.get(id);
      if (plan && plan.when === 'running' && plan.outcome === null && plan.attempts === 0) this.launch(plan);
    }
  }

  /** Stops starting new requests and waits for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.inFlight]);
  }

  count(outcome: CancelOutcome | null): number {
    return this.plans.filter((p) => p.outcome === outcome).length;
  }

  private launch(plan: CancelPlan): void {
    const task = this.run(plan);
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  private async run(plan: CancelPlan): Promise<void> {
    while (plan.attempts < ATTEMPTS) {
      plan.attempts++;
      const url = this.deps.random.pick(this.deps.httpUrls);
      try {
        const response = await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.deps.token}` },
          body: JSON.stringify({ query: CANCEL, variables: { id: plan.jobId } }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const body = (await response.json()) as {
          data?: { cancelJob?: { status: string } | null } | null;
          errors?: { message: string; extensions?: { code?: string } }[];
        };
        const job = body.data?.cancelJob;
        if (job) {
          plan.outcome = job.status === 'CANCELLED' ? 'cancelled-queued' : 'requested-running';
          return;
        }
        const code = body.errors?.[0]?.extensions?.code;
        if (code === 'CONFLICT') {
          plan.outcome = 'already-ended';
          return;
        }
        plan.lastError = `${code ?? response.status}: ${body.errors?.[0]?.message ?? ''}`.slice(0, 300);
      } catch (error) {
        plan.lastError = error instanceof Error ? error.message : String(error);
      }
      if (this.stopped) break;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    plan.outcome = 'failed';
  }
}

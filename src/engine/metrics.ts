import { metrics as otel, type Counter, type Histogram, type Meter, type ObservableGauge } from '@opentelemetry/api';

/** The meter's name, as the seed's `Jiaowu.BackgroundJobs` in OpenTelemetry's style. */
export const METER_NAME = 'jiaowu.background_jobs';

/** Seconds, from a millisecond publish to a long solve (the SDK's defaults suit milliseconds). */
const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export type ProcessOutcome = 'completed' | 'retry' | 'failed' | 'cancelled' | 'retry-limit' | 'lease-lost' | 'released';

/** What a worker process can say about itself right now (the runner). */
export interface WorkerGaugeSource {
  activeByKind(): Record<string, number>;
  claimedAheadByKind(): Record<string, number>;
  completionsPending(): number;
}

/** The engine's instruments; one place so that names and units stay consistent. */
export class EngineMetrics {
  private readonly running: ObservableGauge;
  private readonly claimedAhead: ObservableGauge;
  private readonly completionsPending: ObservableGauge;
  readonly published: Counter;
  readonly processed: Counter;
  readonly publishDuration: Histogram;
  readonly processingDuration: Histogram;
  readonly cleanedUp: Counter;
  readonly rescued: Counter;
  readonly republished: Counter;
  readonly parked: Counter;
  readonly fastStarted: Counter;
  readonly claimsLost: Counter;
  readonly fastStartPaused: Counter;

  constructor(meter: Meter = otel.getMeter(METER_NAME)) {
    this.published = meter.createCounter('jiaowu.background_jobs.published', {
      description: 'Outbox messages the transport confirmed',
      unit: '{message}',
    });
    this.processed = meter.createCounter('jiaowu.background_jobs.processed', {
      description: 'Deliveries handled by runners, by kind and outcome',
      unit: '{message}',
    });
    this.publishDuration = meter.createHistogram('jiaowu.background_jobs.publish.duration', {
      description: 'Time to publish one batch of outbox messages and get the confirms',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
    });
    this.processingDuration = meter.createHistogram('jiaowu.background_jobs.processing.duration', {
      description: 'Time a processor ran, by kind and outcome',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
    });
    this.cleanedUp = meter.createCounter('jiaowu.background_jobs.cleanup', {
      description: 'Completed outbox messages deleted after the retention period',
      unit: '{message}',
    });
    this.rescued = meter.createCounter('jiaowu.background_jobs.leases_rescued', {
      description: 'Messages whose lease expired and were put back for another worker',
      unit: '{message}',
    });
    this.republished = meter.createCounter('jiaowu.background_jobs.republished', {
      description: 'Messages stranded in PUBLISHING/PUBLISHED and sent again',
      unit: '{message}',
    });
    this.parked = meter.createCounter('jiaowu.background_jobs.parked', {
      description: 'Deliveries moved to the parked queue instead of running (malformed, on the wrong queue, or not matching their outbox row), by kind and reason',
      unit: '{message}',
    });
    this.fastStarted = meter.createCounter('jiaowu.background_jobs.fast_started', {
      description: 'Jobs claimed on their enqueue notification by a worker with a free slot, before their broker message came, by kind',
      unit: '{job}',
    });
    this.fastStartPaused = meter.createCounter('jiaowu.background_jobs.fast_start_paused', {
      description: 'Times this worker stopped listening for job-ready notifications for a while, having heard more jobs in a second than fast start is worth',
      unit: '{pause}',
    });
    this.claimsLost = meter.createCounter('jiaowu.background_jobs.claims_lost', {
      description:
        'Deliveries whose claim another claimer had won, by kind and by what the outbox row then said (found: completed, processing, pending, publishing, published, gone, mismatch)',
      unit: '{message}',
    });
    this.running = meter.createObservableGauge('jiaowu.background_jobs.running', {
      description: 'Jobs whose processor runs in this process now, by kind',
      unit: '{job}',
    });
    this.claimedAhead = meter.createObservableGauge('jiaowu.background_jobs.claimed_ahead', {
      description: 'Jobs claimed by this process that wait for a processor slot (JOB_CLAIM_AHEAD_<KIND>), by kind',
      unit: '{job}',
    });
    this.completionsPending = meter.createObservableGauge('jiaowu.background_jobs.completions_pending', {
      description: 'Finished jobs of this process whose SUCCEEDED is still being committed after their delivery was settled',
      unit: '{job}',
    });
  }

  /** Reports a runner's gauges at each collection; returns the function that stops it. */
  observe(source: WorkerGaugeSource): () => void {
    const running = (result: { observe(value: number, attributes: { kind: string }): void }) => {
      for (const [kind, count] of Object.entries(source.activeByKind())) result.observe(count, { kind });
    };
    const ahead = (result: { observe(value: number, attributes: { kind: string }): void }) => {
      for (const [kind, count] of Object.entries(source.claimedAheadByKind())) result.observe(count, { kind });
    };
    const pending = (result: { observe(value: number): void }) => result.observe(source.completionsPending());
    this.running.addCallback(running);
    this.claimedAhead.addCallback(ahead);
    this.completionsPending.addCallback(pending);
    return () => {
      this.running.removeCallback(running);
      this.claimedAhead.removeCallback(ahead);
      this.completionsPending.removeCallback(pending);
    };
  }
}

import { metrics as otel, type Counter, type Histogram, type Meter } from '@opentelemetry/api';

/** The meter's name, as the seed's `Jiaowu.BackgroundJobs` in OpenTelemetry's style. */
export const METER_NAME = 'jiaowu.background_jobs';

/** Seconds, from a millisecond publish to a long solve (the SDK's defaults suit milliseconds). */
const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export type ProcessOutcome = 'completed' | 'retry' | 'failed' | 'cancelled' | 'retry-limit' | 'lease-lost' | 'released';

/** The engine's instruments; one place so that names and units stay consistent. */
export class EngineMetrics {
  readonly published: Counter;
  readonly processed: Counter;
  readonly publishDuration: Histogram;
  readonly processingDuration: Histogram;
  readonly cleanedUp: Counter;
  readonly rescued: Counter;
  readonly republished: Counter;

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
  }
}

/**
 * What a chaos run does, its defaults (`npm run bench:chaos` with no arguments), the
 * command-line flags that change them, and the command that reproduces a run.
 */
export type RestartMode = 'stop' | 'kill';

export type ChaosPreset = 'full' | 'small';

export interface ChaosOptions {
  /** The defaults these options started from: the full run, or the suite's small one (`--small`). */
  preset: ChaosPreset;
  /** Jobs enqueued at the start. */
  jobs: number;
  /** jobProgress subscriptions kept open at once (across the API processes), each on a job not yet finished. */
  subscriptions: number;
  apis: number;
  workers: number;
  /** Worker kills: a number, or null for one every `killEveryMs` until 95 % of the jobs have finished. */
  kills: number | null;
  killEveryMs: [number, number];
  brokerRestarts: number;
  postgresRestarts: number;
  /** `stop`: a clean stop (rabbitmqctl stop / PostgreSQL fast shutdown); `kill`: SIGKILL, a crash. */
  brokerMode: RestartMode;
  postgresMode: RestartMode;
  /** How long a stopped broker or database stays down before it starts again. */
  downMs: number;
  /** Shares of the jobs: flaky (fail first, then succeed) and slow (cancellable); the rest are short. */
  flakyShare: number;
  slowShare: number;
  /** Share of the slow jobs cancelled through the API (half while running, half at a random moment). */
  cancelShare: number;
  shortMs: [number, number];
  flakyMs: [number, number];
  slowSteps: [number, number];
  slowStepMs: number;
  /** Consumers per worker process, per kind. */
  consumers: { short: number; flaky: number; slow: number };
  leaseSeconds: number;
  maintenanceSeconds: number;
  republishAfterSeconds: number;
  retryBaseMs: number;
  retryMaxMs: number;
  attemptLimit: number;
  /** Faults stop by then (seconds after the jobs were enqueued), whatever the progress. */
  faultWindowSeconds: number;
  /**
   * Jobs not finished once this long has passed with no job finishing, after the last
   * fault, are lost. It covers the slowest legitimate path: a lease running out, a
   * maintenance pass, a republish, a retry back-off.
   */
  drainQuietSeconds: number;
  /** After every job has finished, how long subscriptions may take to see it. */
  subscriptionGraceSeconds: number;
  seed: number;
}

export function defaultChaosOptions(): ChaosOptions {
  const leaseSeconds = 15;
  const maintenanceSeconds = 2;
  const republishAfterSeconds = 10;
  const retryMaxMs = 2_000;
  return {
    preset: 'full',
    jobs: 10_000,
    subscriptions: 200,
    apis: 2,
    workers: 3,
    kills: null,
    killEveryMs: [2_000, 5_000],
    brokerRestarts: 2,
    postgresRestarts: 1,
    brokerMode: 'stop',
    postgresMode: 'stop',
    downMs: 2_000,
    flakyShare: 0.1,
    slowShare: 0.1,
    cancelShare: 0.5,
    shortMs: [20, 200],
    flakyMs: [20, 200],
    slowSteps: [2, 8],
    slowStepMs: 250,
    consumers: { short: 8, flaky: 4, slow: 4 },
    leaseSeconds,
    maintenanceSeconds,
    republishAfterSeconds,
    retryBaseMs: 250,
    retryMaxMs,
    attemptLimit: 5,
    faultWindowSeconds: 300,
    drainQuietSeconds: quietSecondsFor({ leaseSeconds, maintenanceSeconds, republishAfterSeconds, retryMaxMs }),
    subscriptionGraceSeconds: 10,
    seed: 1,
  };
}

/**
 * The suite's small run (test/engine/chaos.test.ts, or `--small`): 300 jobs, 100
 * subscriptions, one fault of each kind. The jobs last long enough that the drain
 * (~15 s undisturbed) is still going at every fault.
 */
export function smallChaosOptions(): ChaosOptions {
  const options: ChaosOptions = {
    ...defaultChaosOptions(),
    preset: 'small',
    jobs: 300,
    subscriptions: 100,
    kills: 1,
    brokerRestarts: 1,
    postgresRestarts: 1,
    downMs: 1_000,
    flakyShare: 0.15,
    slowShare: 0.15,
    shortMs: [200, 600],
    flakyMs: [100, 300],
    slowSteps: [2, 6],
    consumers: { short: 3, flaky: 2, slow: 2 },
    faultWindowSeconds: 60,
    seed: 7,
  };
  options.drainQuietSeconds = quietSecondsFor(options);
  return options;
}

const presetOptions = (preset: ChaosPreset) => (preset === 'small' ? smallChaosOptions() : defaultChaosOptions());

/**
 * The slowest legitimate wait for a job whose message or worker was lost: its lease
 * runs out, a maintenance pass rescues it, a republish sends it again after
 * `republishAfterSeconds` (waited out by another maintenance pass), a retry sits in
 * the broker's next delay bucket (≤ 1.5 × the longest back-off) — plus 30 s for a busy machine.
 */
export function quietSecondsFor(o: { leaseSeconds: number; maintenanceSeconds: number; republishAfterSeconds: number; retryMaxMs: number }): number {
  return Math.ceil(o.leaseSeconds + 3 * o.maintenanceSeconds + o.republishAfterSeconds + (1.5 * o.retryMaxMs) / 1000 + 30);
}

const FLAGS: Record<string, { key: keyof ChaosOptions; parse: (raw: string) => unknown; help: string }> = {
  jobs: { key: 'jobs', parse: positiveInt, help: 'jobs enqueued (10000)' },
  subscriptions: { key: 'subscriptions', parse: nonNegativeInt, help: 'jobProgress subscriptions kept open (200)' },
  apis: { key: 'apis', parse: positiveInt, help: 'API processes (2)' },
  workers: { key: 'workers', parse: positiveInt, help: 'worker processes (3)' },
  kills: { key: 'kills', parse: (raw) => (raw === 'continuous' ? null : nonNegativeInt(raw)), help: 'worker kills, or "continuous" (every 2–5 s until 95 % done)' },
  'broker-restarts': { key: 'brokerRestarts', parse: nonNegativeInt, help: 'broker restarts (2)' },
  'postgres-restarts': { key: 'postgresRestarts', parse: nonNegativeInt, help: 'PostgreSQL restarts (1)' },
  'broker-mode': { key: 'brokerMode', parse: mode, help: 'stop | kill (stop)' },
  'postgres-mode': { key: 'postgresMode', parse: mode, help: 'stop | kill (stop)' },
  'lease-seconds': { key: 'leaseSeconds', parse: positiveInt, help: 'JOB_LEASE_SECONDS of the workers (15, the least allowed)' },
  'maintenance-seconds': { key: 'maintenanceSeconds', parse: positiveInt, help: 'MAINTENANCE_INTERVAL_SECONDS (2)' },
  'republish-after-seconds': { key: 'republishAfterSeconds', parse: positiveInt, help: 'OUTBOX_REPUBLISH_AFTER_SECONDS (10)' },
  'fault-seconds': { key: 'faultWindowSeconds', parse: positiveInt, help: 'faults stop by then (300)' },
  'drain-seconds': { key: 'drainQuietSeconds', parse: positiveInt, help: 'after the last fault, jobs not finished after this long with no progress are lost' },
  seed: { key: 'seed', parse: nonNegativeInt, help: 'random seed (1)' },
};

export function chaosUsage(): string {
  return `  --small                    start from the suite's small run (300 jobs, one fault of each kind) instead of the full one\n${Object.entries(FLAGS)
    .map(([flag, { help }]) => `  --${flag.padEnd(24)} ${help}`)
    .join('\n')}`;
}

/** Options from `--flag value` arguments over the defaults; throws on an unknown flag or a bad value. */
export function parseChaosArgs(argv: readonly string[]): ChaosOptions {
  const options = presetOptions(argv.includes('--small') ? 'small' : 'full');
  let quietGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--small') continue;
    const flag = FLAGS[arg.replace(/^--/, '')];
    if (!arg.startsWith('--') || !flag) throw new Error(`unknown argument ${arg}; allowed:\n${chaosUsage()}`);
    const raw = argv[++i];
    if (raw === undefined) throw new Error(`${arg} needs a value`);
    try {
      (options as unknown as Record<string, unknown>)[flag.key] = flag.parse(raw);
    } catch (error) {
      throw new Error(`${arg} ${raw}: ${(error as Error).message}`);
    }
    if (flag.key === 'drainQuietSeconds') quietGiven = true;
  }
  if (!quietGiven) options.drainQuietSeconds = quietSecondsFor(options);
  return options;
}

/** `npm run bench:chaos -- …` with every flag that differs from the preset's defaults. */
export function reproduceCommand(options: ChaosOptions): string {
  const defaults = presetOptions(options.preset);
  const parts: string[] = options.preset === 'small' ? ['--small'] : [];
  for (const [flag, { key }] of Object.entries(FLAGS)) {
    const value = options[key];
    const fallback = key === 'drainQuietSeconds' ? quietSecondsFor(options) : defaults[key];
    if (JSON.stringify(value) !== JSON.stringify(fallback)) parts.push(`--${flag} ${value === null ? 'continuous' : String(value)}`);
  }
  const unflagged = (Object.keys(options) as (keyof ChaosOptions)[]).filter(
    (key) => key !== 'preset' && !Object.values(FLAGS).some((f) => f.key === key) && JSON.stringify(options[key]) !== JSON.stringify(defaults[key]),
  );
  const note = unflagged.length ? `  (plus settings with no flag: ${unflagged.map((k) => `${k}=${JSON.stringify(options[k])}`).join(', ')})` : '';
  return `npm run bench:chaos${parts.length ? ` -- ${parts.join(' ')}` : ''}${note}`;
}

function positiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error('a whole number ≥ 1');
  return Number(raw);
}

function nonNegativeInt(raw: string): number {
  if (!/^\d+$/.test(raw)) throw new Error('a whole number ≥ 0');
  return Number(raw);
}

function mode(raw: string): RestartMode {
  if (raw !== 'stop' && raw !== 'kill') throw new Error('stop or kill');
  return raw;
}

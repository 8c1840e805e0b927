import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** The window over which a caller's burst allowance refills. */
export const BURST_WINDOW_SECONDS = 10;

/**
 * A per-key allowance of `perSecond` actions every second, plus `burst` more every
 * BURST_WINDOW_SECONDS for a caller that goes over it now and then (a page opening
 * with a dozen queries): rate-limiter-flexible's BurstyRateLimiter, its token-bucket
 * form. In this process's memory: each API process limits its own share of the traffic.
 */
export class KeyedRateLimiter {
  private readonly limiter: BurstyRateLimiter | RateLimiterMemory;

  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {
    const steady = new RateLimiterMemory({ points: perSecond, duration: 1 });
    this.limiter = burst > 0 ? new BurstyRateLimiter(steady, new RateLimiterMemory({ keyPrefix: 'burst', points: burst, duration: BURST_WINDOW_SECONDS })) : steady;
  }

  /** Takes one action from `key`'s allowance: null if allowed, else the whole seconds to wait. */
  async take(key: string): Promise<number | null> {
    try {
      await this.limiter.consume(key);
      return null;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw rejection;
    }
  }

  /** Spends `points` more of `key`'s allowance, as far as it goes: an allowance spent beyond empty refuses the caller's next actions. */
  async spend(key: string, points: number): Promise<void> {
    try {
      await this.limiter.consume(key, points);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
    }
  }

  describe(what: string): string {
    return `at most ${this.perSecond} ${what} per second${this.burst > 0 ? `, plus ${this.burst} per ${BURST_WINDOW_SECONDS} s in bursts` : ''}`;
  }
}

/**
 * Delay before retry number `attempt` (1-based): exponential from `baseMs`, capped at
 * `maxMs`, with "equal jitter" (half fixed, half random) so that jobs failing together
 * do not retry together, yet never retry sooner than half the nominal delay.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const nominal = Math.min(maxMs, baseMs * 2 ** exponent);
  return Math.round(nominal / 2 + random() * (nominal / 2));
}

/** The seed's rule for a lost claim: wait for the holder's lease, within 1 s … lease. */
export function claimLostDelayMs(leaseMsLeft: number | null, leaseSeconds: number): number {
  const left = leaseMsLeft ?? 1_000;
  return Math.min(Math.max(left, 1_000), leaseSeconds * 1_000);
}

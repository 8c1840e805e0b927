/** The seed's rule for a lost claim: wait for the holder's lease, within 1 s … lease. */
export function claimLostDelayMs(leaseMsLeft: number | null, leaseSeconds: number): number {
  const left = leaseMsLeft ?? 1_000;
  return Math.min(Math.max(left, 1_000), leaseSeconds * 1_000);
}

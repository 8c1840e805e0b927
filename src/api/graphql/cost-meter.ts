import { apiError, ErrorCode } from './errors';

/**
 * What an execution may still spend once the static cost of its operation is paid (see
 * `operationCost`). Fields whose work depends on the data, not on the query (a plan's
 * evaluation reads the whole plan and term), charge it when they run; a charge beyond the
 * budget fails that field with QUERY_TOO_COMPLEX before the work is done. Unlimited
 * until the server sets a budget.
 */
export class CostMeter {
  private budget = Number.POSITIVE_INFINITY;
  private spent = 0;

  /** The units this operation may spend at run time, per execution. */
  allow(units: number): void {
    this.budget = Math.max(0, units);
    this.spent = 0;
  }

  /** Whether `allow` has set this operation's budget (the HTTP document check prices before Apollo). */
  get limited(): boolean {
    return this.budget !== Number.POSITIVE_INFINITY;
  }

  /** A new execution of the same operation (a subscription's next event) starts a fresh budget. */
  reset(): void {
    this.spent = 0;
  }

  charge(units: number, what: string): void {
    if (this.spent + units > this.budget) {
      const left = this.budget - this.spent;
      throw apiError(ErrorCode.QUERY_TOO_COMPLEX, `${what} costs ${units}; the query has ${left} left of its limit (ask for less, or for it alone)`, {
        cost: units,
        remaining: left,
      });
    }
    this.spent += units;
  }
}

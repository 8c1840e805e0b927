/**
 * How many of something each key has open (sockets per address, per subject, …): a
 * key is forgotten once its count is back to 0, so the map holds only keys with
 * something open.
 */
export class OpenCounts {
  private readonly counts = new Map<string, number>();

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  opened(key: string): void {
    this.counts.set(key, this.get(key) + 1);
  }

  closed(key: string): void {
    const left = this.get(key) - 1;
    if (left > 0) this.counts.set(key, left);
    else this.counts.delete(key);
  }
}

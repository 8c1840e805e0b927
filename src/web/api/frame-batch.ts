/**
 * Collects items as they arrive and hands them over once per animation frame: fifty
 * socket messages a second become at most one update per frame, not fifty renders.
 * A hidden tab gets no frames; a timer flushes then so the list is current on return.
 */
export class FrameBatch<T> {
  private items: T[] = [];
  private frame: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly flush: (items: T[]) => void) {}

  push(item: T): void {
    this.items.push(item);
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => this.run());
    this.timer = setTimeout(() => this.run(), 250);
  }

  private run(): void {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    if (this.timer !== null) clearTimeout(this.timer);
    this.frame = null;
    this.timer = null;
    const items = this.items;
    this.items = [];
    if (items.length > 0) this.flush(items);
  }

  stop(): void {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    if (this.timer !== null) clearTimeout(this.timer);
    this.frame = null;
    this.timer = null;
    this.items = [];
  }
}

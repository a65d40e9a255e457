/**
 * One budget for the bytes queued to every pushed-to reader (pub/sub subscribers and MONITOR,
 * over TCP and SSE), on top of each client's own output-buffer limit. A per-client limit alone
 * lets a hundred slow SSE streams each hold just under 32 MB; this bounds their sum
 * (`pubsub-output-total-limit`): over it, the readers holding the most are disconnected first,
 * as Redis's maxmemory-clients evicts the biggest clients first.
 *
 * Transports report their queued bytes whenever they compute them (each write for SSE, each
 * flush and drain for TCP); the budget keeps the last figure of each and a running total, so
 * a report costs a Map update, and the sort only happens once the total is over the limit.
 */
export interface QueuedReader {
  /** Bytes queued for this reader now (the figure reported last may be stale). */
  outputBytes(): number;
  /** Disconnect at once, dropping what is queued; MUST end with forget(this). */
  evict(): void;
  /** For the log line. */
  describe(): string;
}

export class OutputBudget {
  private readonly queued = new Map<QueuedReader, number>();
  /** Sum of the last reported figures. */
  total = 0;
  /** Readers disconnected by this budget (INFO evicted_clients). */
  evictions = 0;
  private shedding = false;

  constructor(private readonly limit: () => number) {}

  /** A reader's queued bytes changed to `bytes`. */
  report(r: QueuedReader, bytes: number): void {
    const prev = this.queued.get(r) ?? 0;
    if (bytes === prev) return;
    this.total += bytes - prev;
    if (bytes === 0) this.queued.delete(r);
    else this.queued.set(r, bytes);
    if (this.total > 0 && !this.shedding) {
      const limit = this.limit();
      if (limit > 0 && this.total > limit) this.shed(limit);
    }
  }

  forget(r: QueuedReader): void {
    const prev = this.queued.get(r);
    if (prev === undefined) return;
    this.total -= prev;
    this.queued.delete(r);
  }

  private shed(limit: number): void {
    this.shedding = true;
    try {
      // Refresh first: a reader may have caught up since its last report.
      let total = 0;
      for (const r of [...this.queued.keys()]) {
        const b = r.outputBytes();
        if (b === 0) this.queued.delete(r);
        else { this.queued.set(r, b); total += b; }
      }
      this.total = total;
      if (total <= limit) return;
      const biggest = [...this.queued].sort((a, b) => b[1] - a[1]);
      for (const [r, bytes] of biggest) {
        if (this.total <= limit) break;
        console.warn(`Client ${r.describe()} closed for overcoming of the total pub/sub output limit (${bytes} of ${this.total} bytes queued, limit ${limit}).`);
        this.evictions++;
        this.forget(r);
        r.evict();
      }
    } finally {
      this.shedding = false;
    }
  }
}

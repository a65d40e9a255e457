/**
 * Usage accounting of one search index: per-minute buckets (kept 31 days) of the queries and
 * updates it served, their latencies and bytes, plus day and month counters for the quotas.
 * Persisted as one record per index; the stats endpoints and throughput_vector read from here.
 */

// bucket = [queries, updates, queryLatencySumMs, updateLatencySumMs, bytes, queryP99, updateP99, docCount, dataSize]
export type Bucket = number[];

export interface StatsRecord {
  minutes: Record<string, Bucket>;
  day: number; dayQueries: number; dayUpdates: number; dayBytes: number;
  month: number; monthQueries: number; monthUpdates: number; monthBytes: number;
  totalRequests: number;
  /** Per UTC day (days since epoch): [queries, updates, bytes], kept 31 days. */
  days: Record<string, number[]>;
}

const MINUTE = 60_000;
const KEEP_MINUTES = 31 * 24 * 60;

export function emptyStats(): StatsRecord {
  return { minutes: {}, day: 0, dayQueries: 0, dayUpdates: 0, dayBytes: 0, month: 0, monthQueries: 0, monthUpdates: 0, monthBytes: 0, totalRequests: 0, days: {} };
}

const dayOf = (ms: number) => Math.floor(ms / 86_400_000);
const monthOf = (ms: number) => { const d = new Date(ms); return d.getUTCFullYear() * 12 + d.getUTCMonth(); };

function p99(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)];
}

export class IndexStats {
  /** Latency samples of the current minute (p99 is computed from them; capped). */
  private samples: { minute: number; q: number[]; u: number[] } = { minute: 0, q: [], u: [] };
  dirty = false;

  constructor(readonly rec: StatsRecord) {}

  /** Roll day/month counters over (call before reading them for a quota check). */
  roll(now: number): void {
    const day = dayOf(now);
    if (this.rec.day !== day) { this.rec.day = day; this.rec.dayQueries = 0; this.rec.dayUpdates = 0; this.rec.dayBytes = 0; }
    const month = monthOf(now);
    if (this.rec.month !== month) { this.rec.month = month; this.rec.monthQueries = 0; this.rec.monthUpdates = 0; this.rec.monthBytes = 0; }
  }

  record(now: number, kind: 'query' | 'update', latencyMs: number, bytes: number, count = 1): void {
    this.roll(now);
    const minute = Math.floor(now / MINUTE);
    const b = (this.rec.minutes[minute] ??= [0, 0, 0, 0, 0, 0, 0, -1, -1]);
    if (this.samples.minute !== minute) this.samples = { minute, q: [], u: [] };
    if (kind === 'query') {
      b[0] += count; b[2] += latencyMs;
      if (this.samples.q.length < 2000) this.samples.q.push(latencyMs);
      b[5] = p99(this.samples.q);
      this.rec.dayQueries += count; this.rec.monthQueries += count;
    } else {
      b[1] += count; b[3] += latencyMs;
      if (this.samples.u.length < 2000) this.samples.u.push(latencyMs);
      b[6] = p99(this.samples.u);
      this.rec.dayUpdates += count; this.rec.monthUpdates += count;
    }
    b[4] += bytes;
    this.rec.dayBytes += bytes; this.rec.monthBytes += bytes;
    this.rec.totalRequests++;
    const d = (this.rec.days[dayOf(now)] ??= [0, 0, 0]);
    d[kind === 'query' ? 0 : 1] += count;
    d[2] += bytes;
    this.dirty = true;
  }

  /** Remember the document count and data size as of this minute (for the vector_count series). */
  size(now: number, docs: number, bytes: number): void {
    const minute = Math.floor(now / MINUTE);
    const b = (this.rec.minutes[minute] ??= [0, 0, 0, 0, 0, 0, 0, -1, -1]);
    b[7] = docs; b[8] = bytes;
    this.dirty = true;
  }

  prune(now: number): void {
    const oldest = Math.floor(now / MINUTE) - KEEP_MINUTES;
    for (const k of Object.keys(this.rec.minutes)) if (Number(k) < oldest) delete this.rec.minutes[k];
    const oldestDay = dayOf(now) - 31;
    for (const k of Object.keys(this.rec.days)) if (Number(k) < oldestDay) delete this.rec.days[k];
  }

  /**
   * `points` consecutive windows of `width` minutes ending now, each reduced by fn over its
   * buckets (oldest first).
   */
  series(now: number, points: number, width: number, fn: (bs: Bucket[], widthMin: number) => number): { x: string; y: number }[] {
    const end = Math.floor(now / MINUTE) + 1;
    const out: { x: string; y: number }[] = [];
    for (let p = points - 1; p >= 0; p--) {
      const to = end - p * width;
      const from = to - width;
      const bs: Bucket[] = [];
      for (let m = from; m < to; m++) { const b = this.rec.minutes[m]; if (b !== undefined) bs.push(b); }
      out.push({ x: timeText(from * MINUTE), y: fn(bs, width) });
    }
    return out;
  }

  /** The last known [docCount, dataSize] at or before minute `upTo` (-1 when unknown). */
  sizeAt(upToMinute: number): number[] {
    let best = -1;
    for (const k of Object.keys(this.rec.minutes)) {
      const m = Number(k);
      if (m <= upToMinute && m > best && this.rec.minutes[k][7] >= 0) best = m;
    }
    return best < 0 ? [0, 0] : [this.rec.minutes[best][7], this.rec.minutes[best][8]];
  }
}

/** Go's time.Time text as the service prints it: "2026-11-22 12:15:00.000 +0000 UTC". */
export function timeText(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-22T12:15:00.000Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} +0000 UTC`;
}

export const PERIODS: Record<string, { points: number; width: number }> = {
  '1h': { points: 60, width: 1 },
  '3h': { points: 60, width: 3 },
  '12h': { points: 60, width: 12 },
  '1d': { points: 60, width: 24 },
  '3d': { points: 60, width: 72 },
  '7d': { points: 60, width: 168 },
  '30d': { points: 240, width: 180 },
};

export const mean = (num: number, den: number) => (bs: Bucket[]) => {
  const n = bs.reduce((a, b) => a + b[den], 0);
  return n === 0 ? 0 : bs.reduce((a, b) => a + b[num], 0) / n;
};
/** The highest per-minute p99 in the window (an upper bound of the window's p99). */
export const maxOf = (i: number) => (bs: Bucket[]) => bs.reduce((a, b) => Math.max(a, b[i]), 0);
export const perSecond = (i: number) => (bs: Bucket[], width: number) => bs.reduce((a, b) => a + b[i], 0) / (width * 60);

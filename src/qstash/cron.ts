/**
 * Cron expressions of Upstash-Cron: five fields (minute hour day-of-month month day-of-week),
 * with *, lists, ranges, steps, month/day names, the @hourly-style macros and an optional
 * "CRON_TZ=UTC " prefix. Evaluated in UTC. nextRun(t) is the first matching minute after t.
 */

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};
const NAMES: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
  sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6,
};

export interface Cron {
  readonly min: boolean[]; readonly hour: boolean[]; readonly dom: boolean[]; readonly mon: boolean[]; readonly dow: boolean[];
  readonly domStar: boolean; readonly dowStar: boolean;
}

function field(src: string, lo: number, hi: number): boolean[] {
  const set = new Array<boolean>(hi + 1).fill(false);
  const num = (s: string) => {
    const n = /^\d+$/.test(s) ? Number(s) : NAMES[s.toLowerCase()];
    if (n === undefined || n < lo || n > hi + (hi === 6 ? 1 : 0)) throw new Error(`invalid cron field: ${src}`);
    return n;
  };
  for (const part of src.split(',')) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (m === null) throw new Error(`invalid cron field: ${src}`);
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (step < 1) throw new Error(`invalid cron step: ${src}`);
    let a: number; let b: number;
    if (m[1] === '*') { a = lo; b = hi; } else if (m[1].includes('-')) {
      const [x, y] = m[1].split('-');
      a = num(x); b = num(y);
      if (a > b) throw new Error(`invalid cron range: ${src}`);
    } else { a = num(m[1]); b = m[2] === undefined ? a : hi; }
    for (let v = a; v <= b; v += step) set[hi === 6 && v === 7 ? 0 : v] = true;
  }
  return set;
}

export function parseCron(expr: string): Cron {
  let s = expr.trim();
  const tz = /^CRON_TZ=(\S+)\s+/.exec(s);
  if (tz !== null) {
    if (tz[1] !== 'UTC' && tz[1] !== 'Etc/UTC') throw new Error(`unsupported cron time zone: ${tz[1]} (only UTC)`);
    s = s.slice(tz[0].length);
  }
  s = MACROS[s] ?? s;
  const f = s.split(/\s+/);
  if (f.length !== 5) throw new Error(`invalid cron expression: ${expr}`);
  return {
    min: field(f[0], 0, 59), hour: field(f[1], 0, 23), dom: field(f[2], 1, 31), mon: field(f[3], 1, 12), dow: field(f[4], 0, 6),
    domStar: f[2] === '*', dowStar: f[4] === '*',
  };
}

/** First matching minute strictly after `after` (ms), in UTC. */
export function nextRun(c: Cron, after: number): number {
  const d = new Date(Math.floor(after / 60_000) * 60_000 + 60_000);
  const limit = after + 5 * 366 * 86_400_000;
  while (d.getTime() < limit) {
    if (!c.mon[d.getUTCMonth() + 1]) { d.setUTCMonth(d.getUTCMonth() + 1, 1); d.setUTCHours(0, 0, 0, 0); continue; }
    const domOk = c.dom[d.getUTCDate()];
    const dowOk = c.dow[d.getUTCDay()];
    // Vixie cron: when both day fields are restricted, either may match.
    const dayOk = c.domStar || c.dowStar ? domOk && dowOk : domOk || dowOk;
    if (!dayOk) { d.setUTCDate(d.getUTCDate() + 1); d.setUTCHours(0, 0, 0, 0); continue; }
    if (!c.hour[d.getUTCHours()]) { d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0); continue; }
    if (!c.min[d.getUTCMinutes()]) { d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0); continue; }
    return d.getTime();
  }
  throw new Error('cron expression never matches');
}

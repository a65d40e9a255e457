/**
 * SLOWLOG and the latency monitor, as Redis 7.0 keeps them (slowlog.c, latency.c).
 *
 * The dispatcher already measures every call for INFO commandstats; it hands the duration
 * here only when it reaches `minUsec` (one comparison per command): the smaller of
 * slowlog-log-slower-than and latency-monitor-threshold, Infinity when both are off.
 */
import type { Argv } from '../resp/argv.js';
import type { Client } from './client.js';
import type { CommandDef } from './command.js';
import type { Engine } from './engine.js';
import { F } from './flags.js';
import { redactedArgs } from './monitor.js';

/** Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING. */
const MAX_ARGC = 32;
const MAX_STRING = 128;
/** Samples kept per latency event (LATENCY_TS_LEN). */
export const LATENCY_TS_LEN = 160;

export interface SlowlogEntry {
  id: number;
  time: number;
  usec: number;
  args: Buffer[];
  addr: string;
  name: string;
}

/** One latency event's samples: a ring of (second, ms), one per second at most (the worst). */
export class LatencySeries {
  readonly time = new Float64Array(LATENCY_TS_LEN);
  readonly ms = new Float64Array(LATENCY_TS_LEN);
  idx = 0;
  max = 0;

  add(now: number, ms: number): void {
    if (ms > this.max) this.max = ms;
    const prev = (this.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    if (this.time[prev] === now) {
      if (ms > this.ms[prev]) this.ms[prev] = ms;
      return;
    }
    this.time[this.idx] = now;
    this.ms[this.idx] = ms;
    this.idx = (this.idx + 1) % LATENCY_TS_LEN;
  }

  /** Samples oldest first. */
  samples(): [number, number][] {
    const out: [number, number][] = [];
    for (let j = 0; j < LATENCY_TS_LEN; j++) {
      const i = (this.idx + j) % LATENCY_TS_LEN;
      if (this.time[i] !== 0) out.push([this.time[i], this.ms[i]]);
    }
    return out;
  }

  last(): [number, number] {
    const i = (this.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    return [this.time[i], this.ms[i]];
  }
}

export class Slowlog {
  /** Newest first, at most slowlog-max-len. */
  entries: SlowlogEntry[] = [];
  nextId = 0;
  /** slowlog-log-slower-than in µs; Infinity when negative (off). */
  private slowerThan = 10000;
  private maxLen = 128;
  /** latency-monitor-threshold in ms; 0 = off. */
  private latencyMs = 0;
  /** Latency events by name ("command", "fast-command"...), in creation order. */
  readonly events = new Map<string, LatencySeries>();
  /** The dispatcher's single comparison: durations (µs) below it are not looked at. */
  minUsec = 10000;

  constructor(private readonly eng: Engine) {
    this.configure();
    eng.configListeners.push((name) => {
      if (name === 'slowlog-log-slower-than' || name === 'slowlog-max-len' || name === 'latency-monitor-threshold') this.configure();
    });
  }

  private configure(): void {
    const t = Number(this.eng.cfg('slowlog-log-slower-than') || 10000);
    this.slowerThan = t < 0 ? Infinity : t;
    this.maxLen = Number(this.eng.cfg('slowlog-max-len') || 128);
    this.latencyMs = Number(this.eng.cfg('latency-monitor-threshold') || 0);
    this.minUsec = Math.min(this.slowerThan, this.latencyMs > 0 ? this.latencyMs * 1000 : Infinity);
    if (this.entries.length > this.maxLen) this.entries.length = this.maxLen;
  }

  /** A call took `usec` (>= minUsec): log it where its thresholds say. */
  record(c: Client, def: CommandDef, argv: Argv, usec: number): void {
    const dur = Math.floor(usec);
    if (dur >= this.slowerThan && !(def.flags & F.SKIP_SLOWLOG) && this.maxLen > 0) this.push(c, argv, dur);
    const ms = Math.floor(dur / 1000);
    if (this.latencyMs > 0 && ms >= this.latencyMs) this.latency(def.flags & F.FAST ? 'fast-command' : 'command', ms);
  }

  /** latencyAddSampleIfNeeded for other events (expire-cycle...). */
  latency(event: string, ms: number): void {
    let s = this.events.get(event);
    if (s === undefined) this.events.set(event, (s = new LatencySeries()));
    s.add(Math.floor(Date.now() / 1000), ms);
  }

  get latencyEnabled(): boolean {
    return this.latencyMs > 0;
  }

  private push(c: Client, argv: Argv, usec: number): void {
    const n = Math.min(argv.count, MAX_ARGC);
    const redacted = redactedArgs(argv);
    const args: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      if (n === MAX_ARGC && i === MAX_ARGC - 1) {
        args.push(Buffer.from(`... (${argv.count - MAX_ARGC + 1} more arguments)`));
        break;
      }
      if (redacted(i)) {
        args.push(Buffer.from('(redacted)'));
        continue;
      }
      const len = argv.end[i] - argv.start[i];
      if (len > MAX_STRING) {
        args.push(Buffer.concat([
          Buffer.from(argv.buf.subarray(argv.start[i], argv.start[i] + MAX_STRING)),
          Buffer.from(`... (${len - MAX_STRING} more bytes)`),
        ]));
      } else {
        args.push(Buffer.from(argv.buf.subarray(argv.start[i], argv.end[i])));
      }
    }
    // Commands run by scripts come from Redis's Lua client: no address, no name.
    const script = c.transport.kind === 'internal';
    this.entries.unshift({
      id: this.nextId++, time: Math.floor(Date.now() / 1000), usec, args,
      addr: script ? '?:0' : c.addr, name: script ? '' : c.name ?? '',
    });
    if (this.entries.length > this.maxLen) this.entries.length = this.maxLen;
  }
}

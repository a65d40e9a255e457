/**
 * Differential testing: one script, two servers (ours and a real redis-server), every reply
 * compared byte for byte.
 *
 * A case file in cases/ default-exports an array of Scripts. A step is a command (array of
 * arguments) or an object with options:
 *   compare: 'bytes' (default) | 'sorted' (array elements compared as a multiset: KEYS,
 *            SMEMBERS...) | 'type' (only the reply type: RANDOMKEY, TIME...) | 'skip' |
 *            'hello' (bytes, with the connection id of a HELLO reply masked) | 'cmdstats' (INFO
 *            commandstats: times masked, lines as a multiset, since Redis lists them in hash order)
 *   sleep:   milliseconds to wait before the command (TTL tests)
 *   raw:     bytes to send instead of a command (protocol tests); `replies` says how many
 *            replies to read (default 1)
 */
import { RawClient, replyLength } from '../helpers/resp-client.js';

/** `idle`: integer replies (OBJECT IDLETIME) equal within 1 s (each server's LRU clock may tick between two commands); others byte for byte. */
export type Compare = 'bytes' | 'sorted' | 'type' | 'skip' | 'hello' | 'cmdstats' | 'idle';
export interface StepObject {
  cmd?: Array<string | Buffer>;
  raw?: Buffer | string;
  replies?: number;
  compare?: Compare;
  sleep?: number;
}
export type Step = Array<string | Buffer> | StepObject;
export interface Script {
  name: string;
  steps: Step[];
  /** Why this script is skipped (documented difference), if it is. */
  skip?: string;
  /** Why this script is skipped in the RESP3 pass only, if it is. */
  skip3?: string;
}

/**
 * Raw elements of an array, set or push reply (each element's exact bytes); of a map reply,
 * each key/value pair's bytes (a multiset of pairs when compared 'sorted').
 */
export function arrayElements(reply: Buffer): Buffer[] | null {
  const t = reply[0];
  if (t !== 0x2a && t !== 0x7e && t !== 0x3e && t !== 0x25) return null;
  const nl = reply.indexOf('\r\n');
  const n = Number(reply.toString('latin1', 1, nl));
  const per = t === 0x25 ? 2 : 1;
  const out: Buffer[] = [];
  let p = nl + 2;
  for (let i = 0; i < n; i++) {
    const s = p;
    for (let k = 0; k < per; k++) p += replyLength(reply, p);
    out.push(reply.subarray(s, p));
  }
  return out;
}

/** The text of a bulk, simple or integer reply (its framing removed). */
export function replyText(b: Buffer): string {
  return b.toString('latin1').replace(/^(\$\d+|[+:])\r?\n?|\r\n$/g, '');
}

/**
 * ACL LOG entries as "count=1 reason=key ..." without their times and client info (which name
 * ports and memory).
 */
export function aclLogEntries(reply: Buffer): string[] {
  return (arrayElements(reply) ?? []).map((e) => {
    const f = arrayElements(e)!.map(replyText);
    const keep: string[] = [];
    for (let i = 0; i < f.length; i += 2) if (f[i] !== 'age-seconds' && f[i] !== 'client-info') keep.push(`${f[i]}=${f[i + 1]}`);
    return keep.join(' ');
  });
}

function sortedKey(reply: Buffer): string {
  const els = arrayElements(reply);
  if (els === null) return reply.toString('latin1');
  return `${String.fromCharCode(reply[0])}${els.length}:` + els.map((e) => e.toString('latin1')).sort().join('|');
}

/** INFO commandstats without its times, lines sorted. */
function withinOneSecond(a: Buffer, b: Buffer): boolean {
  const int = (x: Buffer) => (/^:(\d+)\r\n$/.exec(x.toString('latin1')) ?? [])[1];
  const x = int(a);
  const y = int(b);
  if (x === undefined || y === undefined) return a.equals(b); // errors and the rest: byte for byte
  return Math.abs(Number(x) - Number(y)) <= 1;
}

function maskTimes(reply: Buffer): string {
  return reply.toString('latin1').replace(/^([$=])\d+/, '$1').replace(/usec=\d+,usec_per_call=[\d.]+/g, 'usec=*')
    .split('\r\n').sort().join('\n');
}

/** A HELLO reply with its connection id masked (ids depend on each server's connection count). */
function maskId(b: Buffer): string {
  return b.toString('latin1').replace(/\$2\r\nid\r\n:\d+\r\n/, '$2\r\nid\r\n:N\r\n');
}

function show(b: Buffer): string {
  return JSON.stringify(b.toString('latin1'));
}

export interface Mismatch {
  step: number;
  cmd: string;
  ours: string;
  redis: string;
}

/** Run one script on both connections; returns the first mismatch or null. */
export async function runScript(ours: RawClient, redis: RawClient, script: Script): Promise<Mismatch | null> {
  for (let i = 0; i < script.steps.length; i++) {
    const step = script.steps[i];
    const s: StepObject = Array.isArray(step) ? { cmd: step } : step;
    if (s.sleep) await new Promise((r) => setTimeout(r, s.sleep));
    const replies = s.raw !== undefined ? (s.replies ?? 1) : 1;
    const label = s.raw !== undefined ? `raw ${JSON.stringify(String(s.raw))}` : s.cmd!.map(String).join(' ');
    if (s.raw !== undefined) {
      ours.write(s.raw);
      redis.write(s.raw);
    } else if (s.cmd) {
      ours.write(encodeCmd(s.cmd));
      redis.write(encodeCmd(s.cmd));
    } else {
      continue;
    }
    for (let r = 0; r < replies; r++) {
      const [a, b] = await Promise.all([
        ours.next().catch((e: Error) => Buffer.from(`<${e.message}>`)),
        redis.next().catch((e: Error) => Buffer.from(`<${e.message}>`)),
      ]);
      const mode = s.compare ?? 'bytes';
      let same: boolean;
      // Both servers silent is not agreement: a step must get a reply (or a close) from each.
      if (a.toString().startsWith('<timeout')) same = false;
      else if (mode === 'skip') same = true;
      else if (mode === 'type') same = a[0] === b[0];
      else if (mode === 'sorted') same = sortedKey(a) === sortedKey(b);
      else if (mode === 'hello') same = maskId(a) === maskId(b);
      else if (mode === 'cmdstats') same = maskTimes(a) === maskTimes(b);
      else if (mode === 'idle') same = withinOneSecond(a, b);
      else same = a.equals(b);
      if (!same) return { step: i, cmd: label, ours: show(a), redis: show(b) };
    }
  }
  return null;
}

export function encodeCmd(args: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a) : a;
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

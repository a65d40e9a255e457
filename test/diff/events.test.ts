/**
 * Keyspace notifications, differentially: every script of test/diff/cases/*.ts is replayed on
 * our server and on a real redis-server with `notify-keyspace-events KEA`, while a third
 * connection on each is PSUBSCRIBEd to __key*__:*; the two event streams must be the same,
 * event by event. Replies are not compared here (diff.test.ts does that): every step is
 * replayed even where a reply differs.
 *
 * After each step a marker is published on a channel the pattern matches, so each event is
 * attributed to the step that caused it (a mismatch names its step). Events of active expiry
 * depend on timing: `expired` events are compared per script, not per step.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { arrayElements, encodeCmd, type Script, type StepObject } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const caseDir = path.join(here, 'cases');
const files = fs.readdirSync(caseDir).filter((f) => f.endsWith('.js')).sort();
const only = process.env.DIFF_ONLY;
const MARK = '__keymark__:step';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The classes compared: KEA as the issue asks, plus n (new keys) and m (key misses). */
const CLASSES = process.env.EVENT_CLASSES ?? 'KEAnm';

let ours: Proc;
let redis: Proc;

withBothServers((o, r) => { ours = o; redis = r; });

/** One server's side of a replay: the script's connection, a subscriber and a marker publisher. */
class Side {
  private events: string[] = [];
  private constructor(readonly main: RawClient, readonly sub: RawClient, readonly admin: RawClient) {}

  static async open(port: number): Promise<Side> {
    const admin = await RawClient.connect(port);
    await admin.call('FLUSHALL');
    await admin.call('CONFIG', 'SET', 'notify-keyspace-events', CLASSES);
    const sub = await RawClient.connect(port);
    await sub.call('PSUBSCRIBE', '__key*__:*');
    return new Side(await RawClient.connect(port), sub, admin);
  }

  /** The events published since the last call, up to the marker published now. */
  async collect(step: number): Promise<string[]> {
    await this.admin.call('PUBLISH', MARK, String(step));
    const got: string[] = [];
    for (;;) {
      const els = arrayElements(await this.sub.next())!.map((b) => b.toString('latin1', b.indexOf('\r\n') + 2, b.length - 2));
      if (els[2] === MARK) return got;
      got.push(`${els[2]} ${els[3]}`);
    }
  }

  async close(): Promise<void> {
    await this.admin.call('CONFIG', 'SET', 'notify-keyspace-events', '');
    this.main.close();
    this.sub.close();
    this.admin.close();
  }
}

/**
 * keymiss events of one step moved after its other events, in sorted order: their order
 * follows the iteration order of unordered collections (SORT BY over a set), not semantics.
 */
function missesLast(evs: string[]): string[] {
  const miss = (e: string) => e.endsWith(' keymiss') || e.includes('__:keymiss ');
  return [...evs.filter((e) => !miss(e)), ...evs.filter(miss).sort()];
}

async function replay(a: Side, b: Side, script: Script): Promise<string | null> {
  const evA: string[] = [];
  const evB: string[] = [];
  const expA: string[] = [];
  const expB: string[] = [];
  for (let i = 0; i < script.steps.length; i++) {
    const step = script.steps[i];
    const s: StepObject = Array.isArray(step) ? { cmd: step } : step;
    if (s.sleep) await new Promise((r) => setTimeout(r, s.sleep));
    let replies = 1;
    if (s.raw !== undefined) {
      replies = s.replies ?? 1;
      a.main.write(s.raw);
      b.main.write(s.raw);
    } else if (s.cmd) {
      a.main.write(encodeCmd(s.cmd));
      b.main.write(encodeCmd(s.cmd));
    } else continue;
    for (let r = 0; r < replies; r++) {
      await Promise.all([a.main.next().catch(() => null), b.main.next().catch(() => null)]);
    }
    const label = s.raw !== undefined ? `raw ${JSON.stringify(String(s.raw))}` : s.cmd!.map(String).join(' ');
    const [ea, eb] = (await Promise.all([a.collect(i), b.collect(i)])).map(missesLast);
    for (const [evs, all, exp] of [[ea, evA, expA], [eb, evB, expB]] as const) {
      for (const e of evs) {
        if (e.endsWith(' expired') || e.includes('__:expired ')) exp.push(e);
        else all.push(`step ${i} (${label.slice(0, 80)}): ${e}`);
      }
    }
    const n = Math.min(evA.length, evB.length);
    for (let k = 0; k < n; k++) {
      if (evA[k] !== evB[k]) return `event ${k}:\n  ours:  ${evA[k]}\n  redis: ${evB[k]}`;
    }
    if (evA.length !== evB.length) {
      const extra = evA.length > evB.length ? `ours extra:  ${evA.slice(n).join('\n    ')}` : `redis extra: ${evB.slice(n).join('\n    ')}`;
      return `event count differs after step ${i}:\n  ${extra}`;
    }
  }
  // Keys left to active expiry may expire just after the last step: give both servers time.
  if (expA.length !== expB.length) {
    await sleep(300);
    const [ea, eb] = await Promise.all([a.collect(-1), b.collect(-1)]);
    for (const [evs, exp] of [[ea, expA], [eb, expB]] as const) for (const e of evs) if (e.endsWith(' expired') || e.includes('__:expired ')) exp.push(e);
  }
  assert.deepEqual(expA.sort(), expB.sort(), 'expired events');
  return null;
}

for (const file of files) {
  const name = file.replace(/\.js$/, '');
  if (only && !only.split(',').includes(name)) continue;
  const scripts: Script[] = (await import(path.join(caseDir, file))).default;
  describe(`keyspace events: ${name}`, () => {
    for (const script of scripts) {
      // CLIENT KILL filters may close the subscriber's or the marker's own connection.
      const kills = script.steps.some((s) => Array.isArray(s) && /^client$/i.test(String(s[0])) && /^kill$/i.test(String(s[1])));
      it(script.name, { skip: script.skip ?? (kills ? 'CLIENT KILL would close the event connections' : undefined) }, async () => {
        const [a, b] = await Promise.all([Side.open(ours.port), Side.open(redis.port)]);
        try {
          const m = await replay(a, b, script);
          assert.equal(m, null, m ?? '');
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      });
    }
  });
}

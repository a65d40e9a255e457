/**
 * Lists, streams and JSON documents survive a restart (in process: an Engine plus Persistence
 * on a temporary directory, driven through the real command table, "restarted" by closing it
 * and opening a new Engine on the same directory), in both durability modes; and a write to a
 * 100,000-element list or stream costs a constant number of records, as on a small one.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { Resp2Shapes } from '../../dist/resp/reply-sink.js';
import { Persistence } from '../../dist/store/persistence.js';

class Capture extends Resp2Shapes {
  text = '';
  ok(): void { this.text += '+OK\r\n'; }
  simple(s: string): void { this.text += `+${s}\r\n`; }
  error(msg: string): void { this.text += `-${msg}\r\n`; }
  int(n: number | bigint): void { this.text += `:${n}\r\n`; }
  bulk(v: Buffer): void { this.text += `$${v.length}\r\n${v.toString('latin1')}\r\n`; }
  bulkLatin1(s: string): void { this.text += `$${s.length}\r\n${s}\r\n`; }
  bulkText(s: string): void { this.bulk(Buffer.from(s)); }
  nil(): void { this.text += '$-1\r\n'; }
  array(n: number): void { this.text += `*${n}\r\n`; }
  nilArray(): void { this.text += '*-1\r\n'; }
}

const transport: Transport = {
  kind: 'internal', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0,
};

type Mode = 'always' | 'everysec';

interface Node {
  eng: Engine;
  p: Persistence | null;
  run(...args: (string | number | Buffer)[]): string;
}

function arg(a: string | number | Buffer): Buffer {
  return Buffer.isBuffer(a) ? a : Buffer.from(String(a), 'latin1');
}

function node(eng: Engine, p: Persistence | null): Node {
  const out = new Capture();
  const c = new Client(eng, transport, out, '127.0.0.1:1', '127.0.0.1:2');
  return {
    eng,
    p,
    run(...args) {
      out.text = '';
      execute(c, Argv.of(args.map(arg)), out);
      return out.text;
    },
  };
}

function open(dir: string, mode: Mode): Node {
  const eng = new Engine(loadConfig(['--dir', dir, '--appendfsync', mode]), FAMILIES);
  return node(eng, Persistence.open(eng, { dir, mode }));
}

/** A server that never restarts (no persistence): the reference for layouts. */
function memoryOnly(): Node {
  return node(new Engine(loadConfig([]), FAMILIES), null);
}

async function restart(n: Node, dir: string, mode: Mode): Promise<Node> {
  await n.p!.close();
  return open(dir, mode);
}

/** Let batches and background deletion finish. */
async function settle(n: Node): Promise<void> {
  for (let i = 0; i < 400; i++) {
    await n.p!.idle();
    await new Promise((r) => setTimeout(r, 5));
    if (n.p!.info().includes('lmdb_gc_pending:0')) {
      await n.p!.idle();
      return;
    }
  }
  throw new Error('background deletion did not finish');
}

function itemCount(n: Node): number {
  return n.p!.store.items.getKeysCount({});
}

/** Records and bytes written by what `fn` does, once committed. */
async function cost(n: Node, fn: () => void): Promise<{ puts: number; dels: number; bytes: number }> {
  await n.p!.idle();
  const s = n.p!.store.stats;
  const p0 = s.puts;
  const d0 = s.dels;
  const b0 = s.bytes;
  fn();
  await n.p!.idle();
  return { puts: s.puts - p0, dels: s.dels - d0, bytes: s.bytes - b0 };
}

/** A seeded PRNG (mulberry32): the randomized tests replay the same way every run. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** LRANGE reply of a model list. */
function lrange(model: string[]): string {
  let s = `*${model.length}\r\n`;
  for (const e of model) s += `$${e.length}\r\n${e}\r\n`;
  return s;
}

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-types-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});
let seq = 0;
function freshDir(): string {
  const d = path.join(tmp, `d${seq++}`);
  fs.mkdirSync(d);
  return d;
}

// ---------------------------------------------------------------- lists

for (const mode of ['always', 'everysec'] as const) {
  describe(`lists survive a restart (appendfsync ${mode})`, () => {
    it('small and big lists after LPUSH RPUSH LPOP RPOP LSET LINSERT LREM LTRIM LMOVE RPOPLPUSH', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      const model = { small: [] as string[], big: [] as string[], dst: [] as string[] };
      const bin = Buffer.from([0, 255, 13, 10, 128]).toString('latin1');
      n.run('RPUSH', 'small', 'a', 'b', 'c', Buffer.from(bin, 'latin1'));
      model.small.push('a', 'b', 'c', bin);
      n.run('LPUSH', 'small', 'z');
      model.small.unshift('z');
      n.run('LSET', 'small', 1, 'A');
      model.small[1] = 'A';
      n.run('LINSERT', 'small', 'AFTER', 'b', 'b2');
      model.small.splice(3, 0, 'b2');
      for (let i = 0; i < 5000; i++) model.big.push(`e${i % 100}-${i}`);
      for (let i = 0; i < 5000; i += 500) n.run('RPUSH', 'big', ...model.big.slice(i, i + 500));
      n = await restart(n, dir, mode);
      assert.equal(n.run('LRANGE', 'small', 0, -1), lrange(model.small));
      assert.equal(n.run('LRANGE', 'big', 0, -1), lrange(model.big));
      assert.equal(n.run('OBJECT', 'ENCODING', 'small'), '$9\r\nquicklist\r\n'); // every list, as Redis 7.0
      assert.equal(n.run('OBJECT', 'ENCODING', 'big'), '$9\r\nquicklist\r\n');

      const ops: [string[], () => void][] = [
        [['LPUSH', 'big', 'h1', 'h2'], () => model.big.unshift('h2', 'h1')],
        [['RPUSH', 'big', 't1'], () => model.big.push('t1')],
        [['LPOP', 'big', '3'], () => model.big.splice(0, 3)],
        [['RPOP', 'big'], () => model.big.pop()],
        [['LSET', 'big', '10', 'set10'], () => { model.big[10] = 'set10'; }],
        [['LSET', 'big', '-10', 'setm10'], () => { model.big[model.big.length - 10] = 'setm10'; }],
        [['LINSERT', 'big', 'BEFORE', 'e50-50', 'ins-head-side'], () => model.big.splice(model.big.indexOf('e50-50'), 0, 'ins-head-side')],
        [['LINSERT', 'big', 'AFTER', 'e50-4950', 'ins-tail-side'], () => model.big.splice(model.big.indexOf('e50-4950') + 1, 0, 'ins-tail-side')],
        [['LREM', 'big', '2', 'e7-7'], () => model.big.splice(model.big.indexOf('e7-7'), 1)],
        [['LINSERT', 'big', 'BEFORE', 'e20-2020', 'dup'], () => model.big.splice(model.big.indexOf('e20-2020'), 0, 'dup')],
        [['LINSERT', 'big', 'BEFORE', 'e30-4030', 'dup'], () => model.big.splice(model.big.indexOf('e30-4030'), 0, 'dup')],
        [['LINSERT', 'big', 'BEFORE', 'e40-40', 'dup'], () => model.big.splice(model.big.indexOf('e40-40'), 0, 'dup')],
        [['LREM', 'big', '-1', 'dup'], () => model.big.splice(model.big.lastIndexOf('dup'), 1)],
        [['LREM', 'big', '1', 'dup'], () => model.big.splice(model.big.indexOf('dup'), 1)],
        [['LREM', 'big', '0', 'dup'], () => { model.big = model.big.filter((e) => e !== 'dup'); }],
        [['LTRIM', 'big', '100', '-200'], () => { model.big = model.big.slice(100, model.big.length - 199); }],
        [['LMOVE', 'big', 'big', 'LEFT', 'RIGHT'], () => model.big.push(model.big.shift()!)],
        [['LMOVE', 'big', 'big', 'RIGHT', 'LEFT'], () => model.big.unshift(model.big.pop()!)],
        [['LMOVE', 'big', 'dst', 'LEFT', 'LEFT'], () => model.dst.unshift(model.big.shift()!)],
        [['RPOPLPUSH', 'big', 'dst'], () => model.dst.unshift(model.big.pop()!)],
        [['LMPOP', '1', 'big', 'LEFT', 'COUNT', '2'], () => model.big.splice(0, 2)],
        [['LREM', 'small', '0', 'A'], () => { model.small = model.small.filter((e) => e !== 'A'); }],
        [['LTRIM', 'small', '1', '-1'], () => model.small.shift()],
      ];
      for (let i = 0; i < ops.length; i++) {
        const [cmd, apply] = ops[i];
        const r = n.run(...cmd);
        assert.ok(!r.startsWith('-'), `${cmd.join(' ')}: ${r}`);
        apply();
        // Restart after every command: a later command (an LREM shifting everything after it)
        // must not hide a range this one forgot to write.
        {
          n = await restart(n, dir, mode);
          for (const k of ['small', 'big', 'dst'] as const) assert.equal(n.run('LRANGE', k, 0, -1), lrange(model[k]), `${k} after ${cmd.join(' ')}`);
        }
      }
      n = await restart(n, dir, mode);
      for (const k of ['small', 'big', 'dst'] as const) assert.equal(n.run('LRANGE', k, 0, -1), lrange(model[k]), k);
      await settle(n);
      assert.equal(itemCount(n), model.big.length, 'one record per element of the big list, nothing left over');
      await n.p!.close();
    });

    it('randomized: the list equals a model after every restart, with no stray records', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      const rnd = prng(mode === 'always' ? 1 : 2);
      let model: string[] = [];
      // 24-byte elements: 600 of them are past one listpack node, so the list is stored as
      // records (a list that fits one node is stored whole, as its listpack).
      for (let i = 0; i < 600; i++) model.push(('i' + i).padEnd(24, '.'));
      n.run('RPUSH', 'l', ...model);
      let next = 0;
      for (let round = 0; round < 12; round++) {
        for (let k = 0; k < 40; k++) {
          const len = model.length;
          const v = ('v' + next++).padEnd(24, '.');
          let op = rnd(10);
          // LREM shifts much of the list: rarely, so that it does not hide what others wrote.
          if (op === 6 && rnd(3) !== 0) op = 4;
          switch (op === 9 ? 5 : op) {
            case 0: n.run('LPUSH', 'l', v); model.unshift(v); break;
            case 1: n.run('RPUSH', 'l', v); model.push(v); break;
            case 2: if (len > 0) { n.run('LPOP', 'l'); model.shift(); } break;
            case 3: if (len > 0) { n.run('RPOP', 'l'); model.pop(); } break;
            case 4: if (len > 0) { const i = rnd(len); n.run('LSET', 'l', i, v); model[i] = v; } break;
            case 5: if (len > 0) {
              const i = rnd(len);
              const pivot = model[i];
              const after = rnd(2) === 1;
              n.run('LINSERT', 'l', after ? 'AFTER' : 'BEFORE', pivot, v);
              model.splice(model.indexOf(pivot) + (after ? 1 : 0), 0, v);
            } break;
            case 6: if (len > 0) {
              const target = model[rnd(len)];
              const count = rnd(3) - 1; // -1, 0 or 1
              n.run('LREM', 'l', count, target);
              if (count === 0) model = model.filter((e) => e !== target);
              else if (count > 0) model.splice(model.indexOf(target), 1);
              else model.splice(model.lastIndexOf(target), 1);
            } break;
            case 7: if (len > 20) {
              const a = rnd(5);
              const b = rnd(5);
              n.run('LTRIM', 'l', a, -1 - b);
              model = model.slice(a, len - b);
            } break;
            case 8: if (len > 0) { n.run('LMOVE', 'l', 'l', 'RIGHT', 'LEFT'); model.unshift(model.pop()!); } break;
          }
          // Refill so that the list stays big enough to be stored as records.
          if (model.length < 200) {
            const more = Array.from({ length: 300 }, (_, j) => `r${next}-${j}`.padEnd(24, '.'));
            next++;
            n.run('RPUSH', 'l', ...more);
            model.push(...more);
          }
        }
        assert.equal(n.run('LRANGE', 'l', 0, -1), lrange(model), `round ${round} before the restart`);
        n = await restart(n, dir, mode);
        assert.equal(n.run('LRANGE', 'l', 0, -1), lrange(model), `round ${round} after the restart`);
        await settle(n);
        assert.equal(itemCount(n), model.length, `round ${round}: records = elements`);
      }
      await n.p!.close();
    });
  });
}

// ---------------------------------------------------------------- streams

/** The reply with absolute times (ms since the epoch) replaced: for comparing two servers. */
function noTimes(r: string): string {
  return r.replace(/:1\d{12}\r\n/g, ':T\r\n').replace(/\$\d+\r\n1\d{12}-\d+\r\n/g, '$ID\r\n');
}

/** Everything a client can see of a stream whose state does not depend on the clock. */
function streamView(n: Node, key: string): string {
  const groups = n.run('XINFO', 'GROUPS', key);
  // DUMP: deleted entries keep their contents across a restart, as in Redis's listpacks.
  let out = n.run('XINFO', 'STREAM', key, 'FULL', 'COUNT', '0') + groups + n.run('XRANGE', key, '-', '+') + n.run('XREVRANGE', key, '+', '-', 'COUNT', '7') + n.run('DUMP', key);
  for (const m of groups.matchAll(/\$4\r\nname\r\n\$\d+\r\n([^\r]*)\r\n/g)) out += n.run('XPENDING', key, m[1]);
  return out;
}

function streamOps(n: Node, rnd: (n: number) => number, count: number, tag: string): void {
  for (let i = 0; i < count; i++) {
    const fields = rnd(10) === 0 ? ['other', `o${i}`, 'x', 'y'] : ['f', `${tag}${i}`, 'n', String(i)];
    n.run('XADD', 's', '*', ...fields);
  }
}

for (const mode of ['always', 'everysec'] as const) {
  describe(`streams survive a restart (appendfsync ${mode})`, () => {
    it('entries, trims, XDEL, groups with pending entries, consumers, ids and entries-read: XINFO STREAM FULL identical', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      const rnd = prng(7);
      streamOps(n, rnd, 3000, 'a');
      n.run('XADD', 'small', '1-1', 'a', '1');
      n.run('XADD', 'small', '2-1', 'b', '2');
      n.run('XGROUP', 'CREATE', 'small', 'sg', '0');
      n.run('XREADGROUP', 'GROUP', 'sg', 'c1', 'STREAMS', 'small', '>');
      n.run('XGROUP', 'CREATE', 'empty', 'g', '$', 'MKSTREAM');
      // Deletes in the middle and at the head, exact and approximate trims.
      const ids = n.run('XRANGE', 's', '-', '+', 'COUNT', '400').match(/\d+-\d+/g)!;
      n.run('XDEL', 's', ids[0], ids[5], ids[150], ids[151], ids[399]);
      n.run('XTRIM', 's', 'MAXLEN', '~', '2800');
      n.run('XTRIM', 's', 'MAXLEN', '2750');
      // Groups: one fully read, one partly, one with entries-read set, consumers, claims.
      n.run('XGROUP', 'CREATE', 's', 'g1', '0');
      n.run('XGROUP', 'CREATE', 's', 'g2', '0', 'ENTRIESREAD', '10');
      n.run('XGROUP', 'CREATE', 's', 'g3', '$');
      n.run('XREADGROUP', 'GROUP', 'g1', 'alice', 'COUNT', '100', 'STREAMS', 's', '>');
      n.run('XREADGROUP', 'GROUP', 'g1', 'bob', 'COUNT', '50', 'STREAMS', 's', '>');
      n.run('XREADGROUP', 'GROUP', 'g1', 'carol', 'COUNT', '5', 'NOACK', 'STREAMS', 's', '>');
      n.run('XREADGROUP', 'GROUP', 'g2', 'dave', 'COUNT', '30', 'STREAMS', 's', '>');
      n.run('XGROUP', 'CREATECONSUMER', 's', 'g3', 'idle-one');
      const pend = n.run('XPENDING', 's', 'g1', '-', '+', '20').match(/\d+-\d+/g)!;
      n.run('XACK', 's', 'g1', pend[0], pend[1], pend[2]);
      n.run('XCLAIM', 's', 'g1', 'bob', '0', pend[3], pend[4], 'RETRYCOUNT', '7');
      n.run('XCLAIM', 's', 'g1', 'erin', '0', pend[5], 'FORCE', 'JUSTID');
      n.run('XREADGROUP', 'GROUP', 'g1', 'alice', 'STREAMS', 's', '0'); // history: delivery counts
      n.run('XDEL', 's', pend[6]); // pending entry whose entry is gone
      const before1 = streamView(n, 's') + streamView(n, 'small') + streamView(n, 'empty');
      n = await restart(n, dir, mode);
      assert.equal(streamView(n, 's') + streamView(n, 'small') + streamView(n, 'empty'), before1);
      assert.equal(n.run('TYPE', 's'), '+stream\r\n');

      // More changes on the reloaded values, each committed on its own so that each goes
      // through the change log (not a full rewrite), then again.
      const step = async (...a: string[]) => {
        const r = n.run(...a);
        assert.ok(!r.startsWith('-'), `${a.join(' ')}: ${r}`);
        await n.p!.idle();
        return r;
      };
      streamOps(n, rnd, 500, 'b');
      await n.p!.idle();
      const pend2 = n.run('XPENDING', 's', 'g1', '-', '+', '30').match(/\d+-\d+/g)!;
      await step('XACK', 's', 'g1', pend2[0], pend2[1]);
      await step('XCLAIM', 's', 'g1', 'gina', '0', ids[390], 'FORCE');
      await step('XAUTOCLAIM', 's', 'g1', 'frank', '0', '0-0', 'COUNT', '10');
      await step('XREADGROUP', 'GROUP', 'g1', 'alice', 'COUNT', '3', 'STREAMS', 's', '0');
      await step('XGROUP', 'CREATECONSUMER', 's', 'g1', 'henry');
      await step('XGROUP', 'DELCONSUMER', 's', 'g1', 'bob');
      await step('XGROUP', 'SETID', 's', 'g2', '$', 'ENTRIESREAD', '3');
      await step('XREADGROUP', 'GROUP', 'g3', 'idle-one', 'COUNT', '2', 'STREAMS', 's', '>');
      await step('XGROUP', 'DESTROY', 's', 'g3');
      await step('XGROUP', 'CREATE', 's', 'g4', '$');
      await step('XGROUP', 'CREATE', 's', 'g3', '0');
      await step('XREADGROUP', 'GROUP', 'g3', 'new', 'COUNT', '3', 'STREAMS', 's', '>');
      await step('XTRIM', 's', 'MINID', ids[300]);
      // The first 150 live entries: every live entry of the first node (at most 100), which goes.
      await step('XDEL', 's', ...n.run('XRANGE', 's', '-', '+', 'COUNT', '150').match(/\d+-\d+/g)!);
      await step('XTRIM', 's', 'MAXLEN', String(Number(n.run('XLEN', 's').slice(1)) - 3));
      const last = n.run('XREVRANGE', 's', '+', '-', 'COUNT', '1').match(/\d+-\d+/g)![0];
      const [ms] = last.split('-');
      await step('XSETID', 's', `${BigInt(ms) + 5n}-0`, 'ENTRIESADDED', '99999', 'MAXDELETEDID', `${ms}-0`);
      await step('XADD', 'small', '3-1', 'c', '3');
      await step('XACK', 'small', 'sg', '1-1');
      const before2 = streamView(n, 's') + streamView(n, 'small');
      n = await restart(n, dir, mode);
      assert.equal(streamView(n, 's') + streamView(n, 'small'), before2);
      // No stray records: a full rewrite (COPY) writes exactly as many as the log kept.
      await settle(n);
      const kept = itemCount(n);
      n.run('COPY', 's', 's-copy');
      await settle(n);
      assert.equal(itemCount(n), 2 * kept, 'records of the stream = records of a fresh copy');
      await n.p!.close();
    });

    it('an entry re-added live after XSETID, behind its own tombstone, is the one written', async () => {
      // The store walks its log of ids in order and takes the next entry of the node when it
      // is the next id: here that entry is the tombstone, and the live entry after it (same id)
      // is the one to write (as Stream.locate answers).
      const dir = freshDir();
      let n = open(dir, mode);
      for (let i = 1; i <= 40; i++) n.run('XADD', 's', `1-${i}`, 'f', `v${i}`);
      await n.p!.idle(); // records on disk: the next batch writes from the change log
      n.run('XADD', 's', '2-1', 'f', 'x');
      n.run('XADD', 's', '2-2', 'f', 'dead');
      n.run('XDEL', 's', '2-2');
      assert.equal(n.run('XSETID', 's', '2-1'), '+OK\r\n');
      n.run('XADD', 's', '2-2', 'f', 'live');
      n.run('XADD', 's', '2-3', 'f', 'y');
      const before = n.run('XRANGE', 's', '-', '+');
      assert.match(before, /live/);
      n = await restart(n, dir, mode);
      assert.equal(n.run('XRANGE', 's', '-', '+'), before);
      assert.equal(n.run('XLEN', 's'), ':43\r\n');
      await n.p!.close();
    });

    it('appended entries are written when the node they began in goes, or is trimmed, before the write', async () => {
      // The change log keeps appends as a position (a node and an index): XDEL and trimming
      // remove that node here between two writes, with entries appended after it in later nodes.
      const dir = freshDir();
      let n = open(dir, mode);
      n.run('CONFIG', 'SET', 'stream-node-max-entries', '4');
      for (let i = 1; i <= 38; i++) n.run('XADD', 's', `1-${i}`, 'f', `v${i}`);
      await n.p!.idle(); // records on disk; the last node holds 2 entries
      const ids: string[] = [];
      for (let i = 39; i <= 46; i++) ids.push(n.run('XADD', 's', '*', 'f', `v${i}`).split('\r\n')[1]);
      // The last node of the 38 (its 2 old entries and 2 new ones) goes by XDEL.
      assert.equal(n.run('XDEL', 's', '1-37', '1-38', ids[0], ids[1]), ':4\r\n');
      n.run('XADD', 's', '*', 'f', 'after-xdel');
      let before = streamView(n, 's');
      n = await restart(n, dir, mode);
      assert.equal(streamView(n, 's'), before);
      // Appends, then an exact trim that removes the node they began in.
      n.run('XADD', 's', '*', 'f', 'a');
      n.run('XADD', 's', '*', 'f', 'b');
      n.run('XADD', 's', '*', 'f', 'c');
      n.run('XADD', 's', '*', 'f', 'd');
      n.run('XADD', 's', '*', 'f', 'e');
      assert.equal(n.run('XTRIM', 's', 'MAXLEN', '2'), ':46\r\n');
      n.run('XADD', 's', '*', 'f', 'after-trim');
      // `*` after an id past 2^53 ms (made from the id string, not numbers), then a small one.
      assert.equal(n.run('XSETID', 's', '9007199254740993-5'), '+OK\r\n');
      n.run('XADD', 's', '*', 'f', 'big');
      n.run('XADD', 's', '9007199254740994-0', 'f', 'big2');
      n.run('XADD', 's', '*', 'f', 'big3');
      before = streamView(n, 's');
      assert.match(n.run('XRANGE', 's', '-', '+'), /9007199254740993-6\r\n[^]*9007199254740994-1\r\n/);
      n = await restart(n, dir, mode);
      assert.equal(streamView(n, 's'), before);
      assert.equal(n.run('XLEN', 's'), ':6\r\n');
      await n.p!.close();
    });

    it('node boundaries and radix-tree counts are those of a server that never restarted', async () => {
      const dir = freshDir();
      let n = open(dir, mode);
      const ref = memoryOnly();
      const both = (...a: (string | number)[]) => {
        const x = n.run(...a);
        assert.equal(noTimes(x), noTimes(ref.run(...a)), a.join(' '));
      };
      const rnd = prng(11);
      let id = 1;
      // Values big enough that stream-node-max-bytes (not -entries) closes nodes, and deletes
      // near the end: the last node's size, tombstones included, decides where the next starts.
      for (let round = 0; round < 12; round++) {
        for (let i = 0; i < 150; i++) {
          const v = 'x'.repeat(20 + rnd(100));
          both('XADD', 's', `${id++}-0`, ...(rnd(5) === 0 ? ['g', v] : ['f', v]));
          if (rnd(8) === 0) both('XDEL', 's', `${id - 1 - rnd(10)}-0`);
        }
        if (round % 3 === 2) both('XTRIM', 's', 'MAXLEN', '~', String(600 + round * 50));
        n = await restart(n, dir, mode);
        both('XINFO', 'STREAM', 's', 'FULL', 'COUNT', '0');
      }
      await n.p!.close();
    });
  });
}

// ---------------------------------------------------------------- JSON

describe('JSON documents survive a restart', () => {
  it('every value kind, big and float numbers, unicode, deep nesting', async () => {
    const dir = freshDir();
    let n = open(dir, 'always');
    const doc = '{"null":null,"t":true,"f":false,"int":42,"neg":-7,"big":18446744073709551615,"i64min":-9223372036854775808,'
      + '"beyond53":9007199254740993,"float":1.0,"small":1.5e-7,"huge":1e300,"negzero":-0.0,"pi":3.141592653589793,'
      + '"str":"h\\u00e9llo \\"q\\" \\\\ \\n \\u0000 \\ud83d\\ude00","empty":"","arr":[1,[2,[3,[]]],{}],"obj":{"z":1,"a":2,"m":{"k":[true,null]}}}';
    assert.equal(n.run('JSON.SET', 'doc', '$', doc), '+OK\r\n');
    n.run('JSON.SET', 'scalar', '$', '"just a string"');
    n.run('JSON.SET', 'num', '$', '12345678901234567890');
    // Nest deeper than one argument may (128): JSON.SET at a deep path.
    let deep = '[]';
    for (let i = 0; i < 100; i++) deep = `[${deep}]`;
    n.run('JSON.SET', 'deep', '$', deep);
    assert.equal(n.run('JSON.SET', 'deep', '$' + '[0]'.repeat(100), deep), '+OK\r\n');
    n.run('JSON.NUMINCRBY', 'doc', '$.int', '1');
    n.run('JSON.ARRAPPEND', 'doc', '$.arr', '"appended"');
    n.run('JSON.DEL', 'doc', '$.obj.a');
    const view = (x: Node) => ['doc', 'scalar', 'num', 'deep'].map((k) => x.run('JSON.GET', k) + x.run('JSON.TYPE', k, '$..*') + x.run('TYPE', k)).join('')
      + x.run('JSON.GET', 'doc', '$.big', '$.float', '$.negzero', '$.small') + x.run('OBJECT', 'ENCODING', 'doc');
    const before1 = view(n);
    assert.match(before1, /18446744073709551615/);
    n = await restart(n, dir, 'always');
    assert.equal(view(n), before1);
    assert.equal(n.run('JSON.NUMINCRBY', 'doc', '$.int', '1'), '$4\r\n[44]\r\n');
    n.run('JSON.SET', 'doc', '$.obj.new', '{"x":[1.25]}');
    const before2 = view(n);
    n = await restart(n, dir, 'everysec');
    assert.equal(view(n), before2);
    await n.p!.close();
  });
});

// ---------------------------------------------------------------- write cost

describe('a write costs the same on a 100,000-element value as on a small one', () => {
  it('LPUSH RPOP LSET, XADD XREADGROUP XACK write O(1) records', async () => {
    const dir = freshDir();
    const n = open(dir, 'everysec');
    const N = 100_000;
    const batch: string[] = [];
    for (let i = 0; i < N; i++) {
      batch.push('element-' + i);
      if (batch.length === 1000) n.run('RPUSH', 'biglist', ...batch.splice(0));
    }
    // 200 elements of 60 bytes: past one listpack node (stored as records, not whole).
    n.run('RPUSH', 'smalllist', ...Array.from({ length: 200 }, (_, i) => ('element-' + i).padEnd(60, '.')));
    for (let i = 1; i <= N; i++) n.run('XADD', 'bigstream', `${i}-0`, 'field', 'value-' + i);
    for (let i = 1; i <= 150; i++) n.run('XADD', 'smallstream', `${i}-0`, 'field', 'value-' + i);
    for (const k of ['bigstream', 'smallstream']) n.run('XGROUP', 'CREATE', k, 'g', '0');
    await n.p!.idle();
    assert.ok(itemCount(n) > 2 * N);
    const report: string[] = [];
    for (const [big, small] of [['biglist', 'smalllist'], ['bigstream', 'smallstream']]) {
      const isList = big === 'biglist';
      const steps: [string, (k: string) => (string | number)[], number, number][] = isList
        ? [
          // command, argv, records put, records deleted (meta record included)
          ['LPUSH', (k) => ['LPUSH', k, 'new-head'], 2, 0],
          ['RPOP', (k) => ['RPOP', k], 1, 1],
          ['LSET', (k) => ['LSET', k, 77, 'changed'], 2, 0],
          ['LMOVE (rotate)', (k) => ['LMOVE', k, k, 'LEFT', 'RIGHT'], 2, 1],
        ]
        : [
          ['XADD', (k) => ['XADD', k, '*', 'field', 'v'], 2, 0],
          ['XREADGROUP', (k) => ['XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 3, 'STREAMS', k, '>'], 6, 0], // meta, group, consumer, 3 pending
          ['XACK', (k) => ['XACK', k, 'g', '1-0', '2-0'], 1, 2],
          ['XDEL', (k) => ['XDEL', k, '50-0'], 2, 0], // a tombstone and the meta record
        ];
      for (const [name, argv, puts, dels] of steps) {
        const cb = await cost(n, () => n.run(...argv(big)));
        const cs = await cost(n, () => n.run(...argv(small)));
        report.push(`${name}: big ${cb.puts}/${cb.dels}/${cb.bytes}B small ${cs.puts}/${cs.dels}/${cs.bytes}B`);
        assert.equal(cb.puts, puts, `${name} on ${big}: records put`);
        assert.equal(cb.dels, dels, `${name} on ${big}: records deleted`);
        assert.equal(cs.puts, puts, `${name} on ${small}: records put`);
        assert.equal(cs.dels, dels, `${name} on ${small}: records deleted`);
        assert.ok(cb.bytes <= cs.bytes + 16 && cb.bytes < 600, `${name}: ${cb.bytes} bytes on the big value, ${cs.bytes} on the small one`);
      }
    }
    // The same counters are visible in INFO persistence.
    const info = n.run('INFO', 'persistence');
    assert.match(info, /lmdb_records_put:\d+\r\n/);
    assert.match(info, /lmdb_bytes_written:\d+\r\n/);
    await n.p!.close();
  });
});

// ---------------------------------------------------------------- keyspace operations

describe('DEL, RENAME, MOVE, FLUSHDB, COPY of big lists and streams', () => {
  it('are O(1) writes, leave no records behind, and survive a restart', async () => {
    const dir = freshDir();
    let n = open(dir, 'always');
    const fill = (prefix: string) => {
      n.run('RPUSH', prefix + 'list', ...Array.from({ length: 3000 }, (_, i) => prefix + i));
      for (let i = 1; i <= 1000; i++) n.run('XADD', prefix + 'stream', `${i}-1`, 'f', prefix + i);
      n.run('XGROUP', 'CREATE', prefix + 'stream', 'g', '0');
      n.run('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', '10', 'STREAMS', prefix + 'stream', '>');
    };
    for (const p of ['del-', 'ren-', 'mov-', 'fl-', 'cp-']) fill(p);
    await n.p!.idle();
    const st = n.p!.store.stats;
    const w0 = st.puts + st.dels;
    n.run('DEL', 'del-list', 'del-stream');
    n.run('RENAME', 'ren-list', 'renamed-list');
    n.run('RENAME', 'ren-stream', 'renamed-stream');
    n.run('MOVE', 'mov-list', '3');
    n.run('MOVE', 'mov-stream', '3');
    n.run('SWAPDB', '0', '5');
    await n.p!.idle();
    // Metadata only (a background deletion step of at most 1000 records may join in).
    assert.ok(st.puts + st.dels - w0 < 1100, `DEL RENAME MOVE SWAPDB wrote ${st.puts + st.dels - w0} records`);
    n.run('SELECT', '5');
    n.run('COPY', 'cp-list', 'copied-list');
    n.run('COPY', 'cp-stream', 'copied-stream', 'DB', '7');
    n.run('SELECT', '5');
    const viewOf = (db: number, key: string) => {
      n.run('SELECT', String(db));
      return key.endsWith('list') ? n.run('LRANGE', key, 0, -1) : n.run('XINFO', 'STREAM', key, 'FULL', 'COUNT', '0');
    };
    const keys: [number, string][] = [[5, 'renamed-list'], [5, 'renamed-stream'], [3, 'mov-list'], [3, 'mov-stream'], [5, 'fl-list'], [5, 'cp-list'], [5, 'copied-list'], [7, 'copied-stream']];
    const before1 = keys.map(([d, k]) => viewOf(d, k));
    n.run('SELECT', '5');
    n.run('FLUSHDB'); // db 5 now: renamed-*, fl-*, cp-*, copied-list
    n.run('SELECT', '0');
    await settle(n);
    n = await restart(n, dir, 'always');
    assert.equal(viewOf(3, 'mov-list'), before1[2]);
    assert.equal(viewOf(3, 'mov-stream'), before1[3]);
    assert.equal(viewOf(7, 'copied-stream'), before1[7]);
    n.run('SELECT', '5');
    assert.equal(n.run('DBSIZE'), ':0\r\n');
    n.run('SELECT', '0');
    assert.equal(n.run('DBSIZE'), ':0\r\n');
    // Left on disk: mov-list (3000) + mov-stream and copied-stream (1000 entries, 1 group, 1 consumer, 10 pending each).
    await settle(n);
    assert.equal(itemCount(n), 3000 + 2 * 1012);
    await n.p!.close();
  });
});

/**
 * Listpack sorted sets imported from an RDB file are held as their listpack bytes until first
 * used (ZSet `packed`, src/engine/ds/zset.ts; decode.ts readChecked). Every kind of first use
 * must see what a set built at once shows:
 *  - in process: each access first on an imported (packed) set and on the same listpack
 *    RESTOREd (built at once by readValue), every reply compared, then the set read whole;
 *  - against redis-server loading the same file: each access first, replies compared;
 *  - ours restarted from its data directory after the import (the store wrote the sets first).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startOurs, startRedis } from '../helpers/server.js';
import { len, payload, str } from './fixtures.js';
import { bothLoad, scratch } from './both-load.js';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { RespWriter } from '../../dist/resp/writer.js';
import { importRdb } from '../../dist/rdb/cli.js';
import { LpWriter } from '../../dist/rdb/listpack.js';

const { tmp, procs, clients } = scratch('rs-packed-zset-');

const ZSET_LISTPACK = 17;

/** A listpack of `items` as Redis writes one (canonical integers as integer entries); `raw`: all as string entries. */
function lpOf(items: string[], raw = false): Buffer {
  const w = new LpWriter().start();
  for (const x of items) {
    if (raw) (w as unknown as { rawText(v: string): void }).rawText(x);
    else w.str(x);
  }
  return Buffer.from(w.finish());
}

const pad = (s: string, n: number): string => s.padEnd(n, '-');

/** Sorted sets as listpacks: member, score, member, score... in zset order (as Redis keeps them). */
const SHAPES: Record<string, Buffer> = {
  ints: lpOf(['1', '1', '2', '2', '3', '3']),
  mixed: lpOf(['a', '1', 'b', '2.5', 'c', '19']),
  tie: lpOf(['a', '5', 'b', '5', 'c', '5']),
  inf: lpOf(['lo', '-inf', 'mid', '0', 'hi', 'inf']),
  floats: lpOf(['x', '0.1', 'y', '1e300']),
  int64: lpOf(['x', '-9007199254740993', 'y', '9007199254740993']),
  intmembers: lpOf(['-70000', '1', '7', '2', '300', '3']),
  one: lpOf(['only', '-2']),
  '7bit': lpOf(['\x00\xff', '1', 'é', '2']),
  many20: lpOf(Array.from({ length: 20 }, (_, i) => [`m${i}`, String(i + 0.5)]).flat()),
  long128: lpOf(Array.from({ length: 128 }, (_, i) => [pad(`m${String(i).padStart(3, '0')}`, 64), String(i)]).flat()),
  // Not listpack-sized here: built at once, as before (checks that they are not packed).
  // A 65-byte member: kept a listpack by its count, as Redis 7.0 loads it, but not packed.
  member65: lpOf(['a', '1', pad('b', 65), '2']),
  big129: lpOf(Array.from({ length: 129 }, (_, i) => [`m${String(i).padStart(3, '0')}`, String(i)]).flat()),
};
/** Sets held packed after the import. */
const PACKED = ['ints', 'mixed', 'tie', 'inf', 'floats', 'int64', 'intmembers', 'one', '7bit', 'many20', 'long128', 'negzero', 'unordered', 'textints'];

/**
 * Ours only: listpacks Redis does not write (a -0 score, pairs out of order, integers as text,
 * no count in the header).
 */
const OURS_ONLY: Record<string, Buffer> = {
  negzero: lpOf(['a', '-0', 'b', '0', 'c', '0.0']),
  unordered: lpOf(['b', '2', 'a', '1', 'd', '1', 'c', '3']),
  textints: lpOf(['5', '1', '6', '2'], true),
  nocount: (() => {
    const b = lpOf(['a', '1', 'b', '2']);
    b.writeUInt16LE(65535, 4);
    return b;
  })(),
};

/** The first and the last member of a shape's listpack (an element the accesses name). */
function members(lp: Buffer): { first: string; last: string } {
  // Walk the listpack: string entries (6- and 12-bit lengths) or integers; text of each.
  const out: string[] = [];
  let p = 6;
  while (lp[p] !== 0xff) {
    const c = lp[p];
    let text: string;
    let l: number;
    if (c < 0x80) { text = String(c); l = 1; }
    else if (c < 0xc0) { l = 1 + (c & 0x3f); text = lp.toString("latin1", p + 1, p + l); }
    else if (c < 0xe0) { let v = ((c & 0x1f) << 8) | lp[p + 1]; if (v >= 4096) v -= 8192; text = String(v); l = 2; }
    else if (c < 0xf0) { const n = ((c & 0x0f) << 8) | lp[p + 1]; l = 2 + n; text = lp.toString("latin1", p + 2, p + l); }
    else if (c === 0xf1) { text = String(lp.readInt16LE(p + 1)); l = 3; }
    else if (c === 0xf2) { text = String(lp.readIntLE(p + 1, 3)); l = 4; }
    else if (c === 0xf3) { text = String(lp.readInt32LE(p + 1)); l = 5; }
    else { text = String(lp.readBigInt64LE(p + 1)); l = 9; }
    out.push(text);
    p += l + (l <= 127 ? 1 : 2);
  }
  return { first: out[0], last: out[out.length - 2] };
}

type Cmd = string[];
/** K: the set's key; F / L: its first / last member (as listed). */
const ACCESSES: Record<string, Cmd[]> = {
  zrange: [['ZRANGE', 'K', '0', '-1', 'WITHSCORES']],
  zrevrangebyscore: [['ZREVRANGEBYSCORE', 'K', '+inf', '-inf', 'WITHSCORES', 'LIMIT', '0', '2']],
  zrangebylex: [['ZRANGEBYLEX', 'K', '-', '+']],
  zscore: [['ZSCORE', 'K', 'F']],
  zmscore: [['ZMSCORE', 'K', 'L', 'nope', 'F']],
  zrank: [['ZRANK', 'K', 'L']],
  zrevrank: [['ZREVRANK', 'K', 'F']],
  zcard: [['ZCARD', 'K']],
  zcount: [['ZCOUNT', 'K', '(0', '+inf']],
  zadd: [['ZADD', 'K', '7', 'new']],
  zaddxx: [['ZADD', 'K', 'XX', 'CH', '4', 'F']],
  zincrby: [['ZINCRBY', 'K', '1.5', 'L']],
  zrem: [['ZREM', 'K', 'F']],
  zpopmin: [['ZPOPMIN', 'K']],
  zpopmax: [['ZPOPMAX', 'K', '2']],
  zremrangebyrank: [['ZREMRANGEBYRANK', 'K', '0', '0']],
  zscan: [['ZSCAN', 'K', '0', 'COUNT', '1000']],
  dump: [['DUMP', 'K']],
  digest: [['DEBUG', 'DIGEST-VALUE', 'K']],
  encoding: [['OBJECT', 'ENCODING', 'K']],
  memory: [['MEMORY', 'USAGE', 'K']],
  type: [['TYPE', 'K']],
  copy: [['COPY', 'K', 'K.copy'], ['ZADD', 'K.copy', '9', 'F'], ['ZRANGE', 'K.copy', '0', '-1', 'WITHSCORES']],
  rename: [['RENAME', 'K', 'K.ren'], ['ZRANGE', 'K.ren', '0', '-1', 'WITHSCORES'], ['RENAME', 'K.ren', 'K']],
  zunionstore: [['ZUNIONSTORE', 'K.u', '2', 'K', 'K'], ['ZRANGE', 'K.u', '0', '-1', 'WITHSCORES']],
  zinter: [['ZINTER', '1', 'K', 'WITHSCORES']],
  zrangestore: [['ZRANGESTORE', 'K.s', 'K', '0', '-1'], ['ZRANGE', 'K.s', '0', '-1', 'WITHSCORES']],
  sort: [['SORT', 'K', 'BY', 'nosort']],
  sortalpha: [['SORT', 'K', 'ALPHA', 'DESC']],
};
/** After each access: the set read whole. */
const AFTER: Cmd[] = [['ZRANGE', 'K', '0', '-1', 'WITHSCORES'], ['ZCARD', 'K'], ['OBJECT', 'ENCODING', 'K'], ['DEBUG', 'DIGEST-VALUE', 'K']];

function fill(cmd: Cmd, key: string, lp: Buffer): string[] {
  const { first, last } = members(lp);
  return cmd.map((a) => a === 'K' ? key : a.startsWith('K.') ? key + a.slice(1) : a === 'F' ? first : a === 'L' ? last : a);
}

/** An RDB (version 10) of zset listpack records in db 0, checksum disabled (as Redis accepts). */
function rdbOf(recs: Array<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [Buffer.from('REDIS0010'), Buffer.from([0xfe]), len(0)];
  for (const [key, lp] of recs) parts.push(Buffer.from([ZSET_LISTPACK]), str(key), str(lp));
  parts.push(Buffer.from([0xff]), Buffer.alloc(8));
  return Buffer.concat(parts);
}

const key = (shape: string, access: string): string => `${shape}|${access}`;

describe('RDB import: listpack sorted sets held as their bytes until first used', () => {
  it('in process: every first access on an imported set replies as on the same listpack RESTOREd (built at once)', () => {
    const INTERNAL: Transport = { kind: 'internal', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0 };
    const shapes = { ...SHAPES, ...OURS_ONLY };
    const recs: Array<[string, Buffer]> = [];
    // (L: and E: keys: the same length, so that MEMORY USAGE's key charge is the same.)
    for (const s of Object.keys(shapes)) for (const a of Object.keys(ACCESSES)) recs.push([`L:${key(s, a)}`, shapes[s]]);
    for (const s of Object.keys(shapes)) recs.push([`S:${s}`, shapes[s]]); // for the store alone (below)
    const file = path.join(tmp, 'inproc.rdb');
    fs.writeFileSync(file, rdbOf(recs));
    const eng = new Engine(loadConfig(['--enable-debug-command', 'yes'], {}), FAMILIES);
    const out = new RespWriter();
    const c = new Client(eng, INTERNAL, out, '127.0.0.1:1', '127.0.0.1:2');
    const run = (a: Array<string | Buffer>): string => {
      execute(c, Argv.of(a), out);
      return out.take().toString('latin1');
    };
    assert.match(importRdb(eng, file), new RegExp(`Imported ${recs.length} keys`));
    // Held packed: the listpack-sized sets, and no others.
    const packed = (k: string): boolean => (c.db.map.get(k)!.v as unknown as { packed: string | null }).packed !== null;
    for (const s of Object.keys(shapes)) assert.equal(packed(`L:${key(s, 'zrange')}`), PACKED.includes(s), `${s} packed`);
    // The same listpacks built at once (RESTORE reads them with readValue).
    for (const s of Object.keys(shapes)) {
      for (const a of Object.keys(ACCESSES)) {
        assert.equal(run(['RESTORE', `E:${key(s, a)}`, '0', payload(ZSET_LISTPACK, str(shapes[s]), 10)]), '+OK\r\n');
      }
    }
    for (const s of Object.keys(shapes)) {
      for (const [a, cmds] of Object.entries(ACCESSES)) {
        for (const cmd of [...cmds, ...AFTER]) {
          const lazy = run(fill(cmd, `L:${key(s, a)}`, shapes[s]));
          const built = run(fill(cmd, `E:${key(s, a)}`, shapes[s]));
          assert.equal(lazy, built, `${s}, ${a} first: ${cmd.join(' ')}`);
        }
      }
    }
    assert.equal(packed(`L:${key('mixed', 'zcard')}`), false, 'read whole after');
    // The store's whole form (zsetCodec) of a set not used yet: the same bytes as the built set's;
    // written from its bytes it stays packed (unless its pairs are out of order: then built).
    for (const s of Object.keys(shapes)) {
      const lazy = c.db.map.get(`S:${s}`)!.v as unknown as { storeWhole(): Buffer | null };
      const built = c.db.map.get(`E:${key(s, 'type')}`)!.v as unknown as { storeWhole(): Buffer | null };
      const bytes = lazy.storeWhole();
      assert.deepEqual(bytes === null ? null : Buffer.from(bytes), built.storeWhole() === null ? null : Buffer.from(built.storeWhole()!), `${s}: store's whole form`);
      assert.equal(packed(`S:${s}`), PACKED.includes(s) && s !== 'unordered', `${s} packed after the store wrote it`);
    }
    // A listpack-sized set holds -0 as 0 (as a listpack stores it), built at once or not.
    assert.equal(run(['ZSCORE', `L:${key('negzero', 'type')}`, 'a']), '$1\r\n0\r\n');
  });

  it('against redis-server loading the same file: every first access replies the same', async () => {
    const recs: Array<[string, Buffer]> = [];
    for (const s of Object.keys(SHAPES)) for (const a of Object.keys(ACCESSES)) recs.push([key(s, a), SHAPES[s]]);
    const file = path.join(tmp, 'both.rdb');
    fs.writeFileSync(file, rdbOf(recs));
    const { rc, oc } = await bothLoad(file, tmp, procs, clients);
    const reply = async (cl: Redis, cmd: string[]): Promise<unknown> => {
      try {
        return await cl.callBuffer(cmd[0], ...cmd.slice(1));
      } catch (e) {
        return `error: ${(e as Error).message}`;
      }
    };
    assert.equal(await oc.dbsize(), recs.length);
    for (const s of Object.keys(SHAPES)) {
      for (const [a, cmds] of Object.entries(ACCESSES)) {
        for (const cmd of [...cmds, ...AFTER]) {
          // (MEMORY USAGE is an estimate here, by sampling: compared with the set built at once
          // in process, above.)
          if (cmd[0] === 'MEMORY') continue;
          // (redis-server's ZSCAN of a listpack set replies each score as the file holds it,
          // "1e300" or 2^53 + 1; ours replies the double, as before.)
          if (a === 'zscan' && (s === 'floats' || s === 'int64') && cmd[0] === 'ZSCAN') continue;
          const c = fill(cmd, key(s, a), SHAPES[s]);
          const mine = await reply(oc, c);
          if (a === 'dump' && cmd[0] === 'DUMP') {
            // Our DUMP writes the scores as Redis 7.0 prints them (not the file's bytes): what it
            // restores to in redis-server is compared.
            assert.equal(await rc.call('RESTORE', `dumped:${s}`, '0', mine as Buffer), 'OK');
            assert.deepEqual(await rc.call('ZRANGE', `dumped:${s}`, '0', '-1', 'WITHSCORES'), await rc.call('ZRANGE', key(s, a), '0', '-1', 'WITHSCORES'), `${s} DUMP`);
            await rc.del(`dumped:${s}`);
            continue;
          }
          let theirs = await reply(rc, c);
          if (cmd[0] === 'ZSCAN' && s === 'big129') {
            // (A skiplist set's ZSCAN goes in its hash table's order: compared as pairs.)
            const pairs = (r: unknown): string[] => {
              const [cursor, flat] = r as [Buffer, Buffer[]];
              return [String(cursor), ...Array.from({ length: flat.length / 2 }, (_, i) => `${flat[2 * i]} ${flat[2 * i + 1]}`).sort()];
            };
            assert.deepEqual(pairs(mine), pairs(theirs), `${s} ZSCAN`);
            continue;
          }
          assert.deepEqual(mine, theirs, `${s}, ${a} first: ${c.join(' ')}`);
        }
      }
    }
    assert.equal(String(await oc.call('DEBUG', 'DIGEST')), String(await rc.call('DEBUG', 'DIGEST')));
  });

  it('persistence: imported into a data directory and restarted from it, the sets are as redis-server loads them', async () => {
    const recs: Array<[string, Buffer]> = Object.entries(SHAPES).map(([s, lp]) => [`p|${s}`, lp]);
    const file = path.join(tmp, 'persist.rdb');
    fs.writeFileSync(file, rdbOf(recs));
    if (process.env.KEEP_PERSIST_RDB) fs.copyFileSync(file, process.env.KEEP_PERSIST_RDB);
    const dir = fs.mkdtempSync(path.join(tmp, 'ours-'));
    const first = await startOurs(['--appendfsync', 'everysec', '--import-rdb', file], {}, { dir });
    // The port takes connections before the import is over, and SIGTERM is handled only after
    // it: a command's reply says that start-up is over.
    const fc = new Redis(first.port, { maxRetriesPerRequest: 0 });
    assert.equal(await fc.ping(), 'PONG');
    fc.disconnect();
    assert.equal(await first.stop(), 0, first.output());
    const ours = await startOurs(['--appendfsync', 'everysec', '--enable-debug-command', 'yes'], {}, { dir });
    procs.push(ours);
    const rdir = fs.mkdtempSync(path.join(tmp, 'redis-'));
    fs.copyFileSync(file, path.join(rdir, 'dump.rdb'));
    const r = await startRedis(['--dir', rdir, '--dbfilename', 'dump.rdb', '--enable-debug-command', 'yes']);
    procs.push(r);
    const rc = new Redis(r.port, { maxRetriesPerRequest: 0 });
    const oc = new Redis(ours.port, { maxRetriesPerRequest: 0 });
    clients.push(rc, oc);
    assert.equal(await oc.dbsize(), recs.length);
    for (const [k] of recs) {
      for (const cmd of AFTER) {
        const c = fill(cmd, k, SHAPES[k.slice(2)]);
        assert.deepEqual(await oc.callBuffer(c[0], ...c.slice(1)), await rc.callBuffer(c[0], ...c.slice(1)), c.join(' '));
      }
    }
    assert.equal(String(await oc.call('DEBUG', 'DIGEST')), String(await rc.call('DEBUG', 'DIGEST')));
  });
});

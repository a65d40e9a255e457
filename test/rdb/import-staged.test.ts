/**
 * RDB import of plain-string records kept as bytes (src/rdb/file.ts StagedStrings: no JS string
 * per key or value; Db.importStringBytes puts them into the compact tier from those bytes).
 * Every encoding a string record can take (raw with 6- and 14-bit lengths, integer-encoded,
 * LZF), the length limits around the compact tier's 255 bytes, binary bytes, integers held as
 * such or not: one hand-written file loaded by redis-server 7.0.15 and imported by us, values
 * and encodings compared. Then, in process: file order across staged and other records (a key
 * given twice), LFU and LRU data, and damaged staged records refused with their offset.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { bothLoad as loadBoth, scratch } from './both-load.js';
import { len, str, intStr, intset, listpackStrings } from './fixtures.js';
import { lzfCompress } from './lzf-oracle.js';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { RespWriter } from '../../dist/resp/writer.js';
import { importRdb } from '../../dist/rdb/cli.js';
import { LpWriter } from '../../dist/rdb/listpack.js';

const { tmp, procs, clients } = scratch('rs-staged-');

/** An LZF-encoded RDB string (RDB_ENC_LZF) of `v`. */
function lzfStr(v: Buffer): Buffer {
  const c = lzfCompress(new Uint8Array(v), v.length - 1);
  assert.ok(c !== null, 'compressible');
  return Buffer.concat([Buffer.from([0xc3]), len(c.length), len(v.length), c]);
}

type Rec = { key: Buffer; value: Buffer; type?: number; exp?: number; idle?: number };

/** An RDB (version 10) of records per db, checksum disabled (8 zero bytes, which Redis accepts). */
function rdbFile(dbs: Array<[number, Rec[]]>): Buffer {
  const parts: Buffer[] = [Buffer.from('REDIS0010')];
  for (const [db, recs] of dbs) {
    parts.push(Buffer.from([0xfe]), len(db));
    for (const r of recs) {
      if (r.exp !== undefined) {
        const e = Buffer.alloc(9);
        e[0] = 0xfc;
        e.writeBigUInt64LE(BigInt(r.exp), 1);
        parts.push(e);
      }
      if (r.idle !== undefined) parts.push(Buffer.from([0xf8]), len(r.idle));
      parts.push(Buffer.from([r.type ?? 0]), str(r.key), r.value);
    }
  }
  parts.push(Buffer.from([0xff]), Buffer.alloc(8));
  return Buffer.concat(parts);
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');
const rec = (key: string | Buffer, value: Buffer, more: Partial<Rec> = {}): Rec => ({ key: typeof key === 'string' ? b(key) : key, value, ...more });
const later = Date.now() + 3_600_000;

/** Records of every string encoding and limit (db 0), and some in db 2. */
const DB0: Rec[] = [
  rec('raw', str('hello')),
  rec('int-raw', str('123')),
  rec('int-neg', str('-45')),
  rec('zero', str('0')),
  rec('noncanon', str('0123')),
  rec('negzero', str('-0')),
  rec('plus', str('+1')),
  rec('int16digits', str('1234567890123456')),
  rec('i8', intStr(-7)),
  rec('i16', intStr(3000)),
  rec('i32', intStr(-2000000000)),
  rec('empty', str('')),
  rec(Buffer.from([0, 0xff, 0x80, 0x0d, 0x0a]), str(Buffer.from(Array.from({ length: 255 }, (_, i) => i)))),
  rec('v255', str('x'.repeat(255))),
  rec('v256', str('y'.repeat(256))),
  rec('lzf', lzfStr(b('abc'.repeat(40)))),
  rec('lzf255', lzfStr(b('q'.repeat(255)))),
  rec('lzf256', lzfStr(b('r'.repeat(256)))),
  rec('k'.repeat(70), str('14-bit key length')),
  rec('m'.repeat(255), str('longest compact key')),
  rec('n'.repeat(256), str('key too long for the compact tier')),
  rec('list', Buffer.concat([len(2), str('a'), str('b')]), { type: 1 }),
  rec('ttl', str('with a TTL'), { exp: later }),
  rec('after-list', str('last')),
];
const DB2: Rec[] = [rec('raw', str('db two')), rec('x', intStr(5)), rec('y', lzfStr(b('z'.repeat(60))))];

async function describeKeys(c: Redis, db: number): Promise<Record<string, unknown>> {
  await c.select(db);
  const out: Record<string, unknown> = { dbsize: await c.dbsize() };
  for (const k of ((await c.call('KEYS', '*')) as string[]).sort()) {
    const key = b(k);
    const type = await c.type(key);
    out[key.toString('hex')] = [
      type,
      type === 'string' ? ((await c.getBuffer(key)) as Buffer).toString('hex') : await c.lrange(key, 0, -1),
      await c.call('OBJECT', 'ENCODING', key),
      (await c.pttl(key)) > 0,
    ];
  }
  return out;
}

/**
 * `n` records of every kind the import inserts by its own path (staged raw, integer and LZF
 * strings; strings with a TTL; lists, sets and hashes as Entries), keys binary, integer-looking
 * and plain, values big and small: enough keys that the import's bitset of key hashes
 * (Db.beginImport) has false positives, so both of its answers are taken.
 */
function manyRecords(n: number, tag: string): Rec[] {
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const key = i % 9 === 0 ? b(String(i)) : i % 9 === 1 ? Buffer.from([0, 0xff, i & 0xff, (i >> 8) & 0xff, 0x80, 0x0d]) : b(`${tag}:${i}`);
    const m = i % 10;
    const value =
      m === 0 ? intStr(i - 5000)
        : m === 1 ? lzfStr(i % 3 === 0 ? Buffer.alloc(30 + (i % 220), i & 0xff) : i % 3 === 1 ? b('7'.repeat(21 + (i % 30))) : b(`${tag}-${i}-`.padEnd(40 + (i % 200), 'x')))
          : m === 2 ? str(Buffer.from(Array.from({ length: i % 256 }, (_, j) => (i + j) & 0xff)))
            : m === 3 ? str(String(i * 7))
              : str(`${tag}-${i}`.repeat(1 + (i % 40)));
    if (m === 4) out.push(rec(key, Buffer.concat([len(3), str('a'), str(String(i)), str(`${tag}${i}`)]), { type: 1 }));
    else if (m === 5) out.push(rec(key, Buffer.concat([len(2), str(String(i)), str(`${tag}-m`)]), { type: 2 }));
    else if (m === 6) out.push(rec(key, Buffer.concat([len(2), str('f'), str(String(i)), str('g'), str(tag)]), { type: 4 }));
    else if (m === 7) out.push(rec(key, value, { exp: later + i }));
    else out.push(rec(key, value));
  }
  return out;
}

/** redis-server loading `file` at start-up and ours importing it (DEBUG enabled on both): a client of each. */
function bothLoad(file: string): Promise<{ rc: Redis; oc: Redis }> {
  return loadBoth(file, tmp, procs, clients);
}

/** Both servers load `file`: db 0 has `n` keys, the same DEBUG DIGEST, and `keys` the same DIGEST-VALUE. */
async function sameDigest(file: string, n: number, keys: string[]): Promise<{ rc: Redis; oc: Redis }> {
  const { rc, oc } = await bothLoad(file);
  assert.equal(await rc.dbsize(), n);
  assert.equal(await oc.dbsize(), n);
  const digest = String(await rc.call('DEBUG', 'DIGEST'));
  assert.notEqual(digest, '0'.repeat(40));
  assert.equal(String(await oc.call('DEBUG', 'DIGEST')), digest);
  for (const k of keys) assert.deepEqual(await oc.call('DEBUG', 'DIGEST-VALUE', k), await rc.call('DEBUG', 'DIGEST-VALUE', k), k);
  return { rc, oc };
}

describe('RDB import of plain strings as bytes', () => {
  it('every string encoding and limit: the same keys, values and encodings as redis-server loading the file', async () => {
    const file = path.join(tmp, 'strings.rdb');
    fs.writeFileSync(file, rdbFile([[0, DB0], [2, DB2]]));
    const { rc, oc } = await bothLoad(file);
    for (const db of [0, 2]) {
      const want = await describeKeys(rc, db);
      assert.equal(want.dbsize, db === 0 ? DB0.length : DB2.length);
      assert.deepEqual(await describeKeys(oc, db), want, `db ${db}`);
    }
  });

  it('listpack hashes, sorted sets and one-node lists (checked by the parse, built in bucket order by the insert) among staged strings: the same DEBUG DIGEST as redis-server', async () => {
    const lpRec = (key: string, i: number, exp?: number): Rec => {
      const m = i % 3;
      const items = Array.from({ length: 1 + (i % 7) }, (_, j) => [`${m === 0 ? 'f' : 'm'}${j}-${i}`, m === 1 ? String((i * 7 + j) / 4) : `v${i}:${j}`]).flat();
      const body = m === 2 ? Buffer.concat([len(1), len(2), str(listpackStrings(items))]) : str(listpackStrings(items));
      return rec(key, body, { type: m === 0 ? 16 : m === 1 ? 17 : 18, exp });
    };
    const recs = (n: number, tag: string): Rec[] => {
      const out: Rec[] = [];
      for (let i = 0; i < n; i++) {
        if (i % 4 === 0) out.push(rec(`${tag}:${i}`, str(`staged ${i}`)));
        else out.push(lpRec(`${tag}:${i}`, i, i % 5 === 0 ? later + i : undefined));
      }
      return out;
    };
    const file = path.join(tmp, 'listpacks.rdb');
    fs.writeFileSync(file, rdbFile([[0, recs(6000, 'k')], [5, recs(1500, 'five')]]));
    const sample = ['k:0', 'k:1', 'k:2', 'k:3', 'k:5', 'k:6', 'k:7'];
    const { rc, oc } = await sameDigest(file, 6000, sample);
    for (const k of sample) {
      assert.equal(await oc.call('OBJECT', 'ENCODING', k), await rc.call('OBJECT', 'ENCODING', k), k);
      assert.equal(await oc.pttl(k) > 0, await rc.pttl(k) > 0, k);
    }
  });

  it('twenty thousand keys of every record path, binary and integer-looking: the same DEBUG DIGEST as redis-server loading the file', async () => {
    const file = path.join(tmp, 'many.rdb');
    fs.writeFileSync(file, rdbFile([[0, manyRecords(20000, 'k')], [3, manyRecords(3000, 'db3')]]));
    await sameDigest(file, 20000, ['0', '9', 'k:2', 'k:17', 'k:13']);
  });

  describe('in process', () => {
    const INTERNAL: Transport = { kind: 'internal', close() {}, requestFlush() {}, resume() {}, outputBytes: () => 0, inputBytes: () => 0 };

    function load(recs: Array<[number, Rec[]]>, args: string[] = []) {
      const file = path.join(tmp, `inproc-${Math.random().toString(36).slice(2)}.rdb`);
      fs.writeFileSync(file, rdbFile(recs));
      const eng = new Engine(loadConfig(args, {}), FAMILIES);
      const out = new RespWriter();
      const c = new Client(eng, INTERNAL, out, '127.0.0.1:1', '127.0.0.1:2');
      const run = (...a: Array<string | Buffer>): string => {
        execute(c, Argv.of(a), out);
        return out.take().toString('latin1');
      };
      return { eng, c, run, imp: () => importRdb(eng, file) };
    }

    it('a key given twice: the later record wins, across staged strings, TTL strings and other types, per db', () => {
      const { c, run, imp } = load([
        [0, [
          rec('a', str('staged first')), rec('a', str('then a TTL'), { exp: later }),
          rec('b', str('TTL first'), { exp: later }), rec('b', str('then staged')),
          rec('c', str('staged')), rec('c', Buffer.concat([len(1), str('l')]), { type: 1 }), rec('c', intStr(9)),
          rec('d', lzfStr(b('d'.repeat(50)))), rec('d', str('raw again')),
          // None staged (the insert reorders these by table bucket): the last still wins.
          rec('f', Buffer.concat([len(1), str('first list')]), { type: 1 }), rec('f', str('a TTL string'), { exp: later }),
          rec('f', Buffer.concat([len(1), str('last list')]), { type: 1 }),
        ]],
        [1, [rec('a', str('db1 a')), rec('z', str('db1 z'))]],
        [0, [rec('e', str('back in db 0')), rec('a', str('db0 a, last'))]],
      ]);
      assert.match(imp(), /Imported 16 keys/);
      assert.equal(c.db.map.compactSize, 5); // read before the commands below move keys into the table
      assert.equal(run('DBSIZE'), ':6\r\n');
      assert.equal(run('LRANGE', 'f', '0', '-1'), '*1\r\n$9\r\nlast list\r\n');
      assert.equal(run('TTL', 'f'), ':-1\r\n');
      assert.equal(run('GET', 'a'), '$11\r\ndb0 a, last\r\n');
      assert.equal(run('TTL', 'a'), ':-1\r\n');
      assert.equal(run('GET', 'b'), '$11\r\nthen staged\r\n');
      assert.equal(run('TTL', 'b'), ':-1\r\n');
      assert.equal(run('GET', 'c'), '$1\r\n9\r\n');
      assert.equal(run('OBJECT', 'ENCODING', 'c'), '$3\r\nint\r\n');
      assert.equal(run('GET', 'd'), '$9\r\nraw again\r\n');
      assert.equal(run('GET', 'e'), '$12\r\nback in db 0\r\n');
      assert.equal(run('SELECT', '1'), '+OK\r\n');
      assert.equal(run('DBSIZE'), ':2\r\n');
      assert.equal(run('GET', 'a'), '$5\r\ndb1 a\r\n');
    });

    it('thousands of keys, some given twice across record kinds, then a second import into the filled db: the later record wins', () => {
      const first = manyRecords(20000, 'k');
      // Every 13th key again, as another kind of record (staged, TTL string, list) with a new value.
      const again: Rec[] = [];
      for (let i = 0; i < first.length; i += 13) {
        const kind = i % 3;
        again.push(kind === 0 ? rec(first[i].key, str(`again ${i}`)) : kind === 1 ? rec(first[i].key, str(`again ${i}`), { exp: later }) : rec(first[i].key, Buffer.concat([len(1), str(`again ${i}`)]), { type: 1 }));
      }
      const { eng, run, imp } = load([[0, [...first.slice(0, 10000), ...again.slice(0, 300), ...first.slice(10000), ...again.slice(300)]]]);
      assert.match(imp(), new RegExp(`Imported ${first.length + again.length} keys`));
      assert.equal(run('DBSIZE'), `:${first.length}\r\n`);
      const get = (k: Buffer): string => run('GET', k);
      for (let i = 0; i < first.length; i += 13) {
        const want = `again ${i}`;
        if (i % 3 === 2) assert.equal(run('TYPE', first[i].key), '+list\r\n', `key ${i}`);
        else assert.equal(get(first[i].key), `$${want.length}\r\n${want}\r\n`, `key ${i}`);
      }
      // Keys given once keep their value (sampled over every kind).
      for (let i = 1; i < 200; i++) {
        if (i % 13 === 0 || i % 10 !== 3) continue;
        const v = String(i * 7);
        assert.equal(get(first[i].key), `$${v.length}\r\n${v}\r\n`, `key ${i}`);
      }
      // A second import into the db that now has keys (no bitset: every key looked up).
      const file = path.join(tmp, 'second.rdb');
      fs.writeFileSync(file, rdbFile([[0, [rec(first[3].key, str('replaced')), rec('brand-new', str('new')), rec(first[4].key, str('not a list now'), { exp: later })]]]));
      assert.match(importRdb(eng, file), /Imported 3 keys/);
      assert.equal(run('DBSIZE'), `:${first.length + 1}\r\n`);
      assert.equal(get(first[3].key), '$8\r\nreplaced\r\n');
      assert.equal(get(first[4].key), '$14\r\nnot a list now\r\n');
      assert.equal(run('GET', 'brand-new'), '$3\r\nnew\r\n');
    });

    it('under an LFU policy the strings become Entries; with LRU idle times in the file, the others stay compact', () => {
      const lfu = load([[0, [rec('s', str('v')), rec('i', intStr(12))]]], ['--maxmemory-policy', 'allkeys-lfu']);
      lfu.imp();
      assert.equal(lfu.c.db.map.compactSize, 0);
      assert.equal(lfu.run('GET', 's'), '$1\r\nv\r\n');
      assert.equal(lfu.run('GET', 'i'), '$2\r\n12\r\n');
      const lru = load([[0, [rec('old', str('idle'), { idle: 5000 }), rec('s', str('v')), rec('t', str('w'))]]]);
      lru.imp();
      assert.equal(lru.c.db.map.compactSize, 2); // s, t
      assert.match(lru.run('OBJECT', 'IDLETIME', 'old'), /^:(499\d|50\d\d)\r\n$/);
      assert.equal(lru.run('GET', 's'), '$1\r\nv\r\n');
    });

    it('listpack sorted sets (only checked by the parse, built by the insert): good ones load, damaged ones are refused with the value offset', () => {
      // member, score, member, score... as a listpack of strings; as an RDB string (its length first).
      const zlp = (items: string[]): Buffer => str(listpackStrings(items));
      const many = (n: number): string[] => Array.from({ length: n }, (_, i) => [`m${i}`, String(i + 0.5)]).flat();
      const good = [
        rec('z3', zlp(['a', '1', 'b', '2.5', 'c', '-3']), { type: 17 }),
        rec('z20', zlp(many(20)), { type: 17 }),
        rec('zttl', zlp(['x', 'inf']), { type: 17, exp: later }),
      ];
      const { run, imp } = load([[0, [rec('s', str('v')), ...good]]]);
      assert.match(imp(), /Imported 4 keys/);
      assert.equal(run('ZRANGE', 'z3', '0', '-1', 'WITHSCORES'), '*6\r\n$1\r\nc\r\n$2\r\n-3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n2.5\r\n');
      assert.equal(run('ZCARD', 'z20'), ':20\r\n');
      assert.equal(run('ZSCORE', 'z20', 'm19'), '$4\r\n19.5\r\n');
      assert.equal(run('ZSCORE', 'zttl', 'x'), '$3\r\ninf\r\n');
      assert.equal(run('OBJECT', 'ENCODING', 'z20'), '$8\r\nlistpack\r\n');
      const dup20 = many(20);
      dup20[30] = 'm3';
      const cases: Array<[string, string[], RegExp]> = [
        ['duplicate (small)', ['a', '1', 'b', '2', 'a', '3'], /key "bad": duplicate sorted set member at offset (\d+)/],
        ['duplicate (large)', dup20, /key "bad": duplicate sorted set member at offset (\d+)/],
        ['bad score', ['a', '1', 'b', 'x1'], /key "bad": bad sorted set score at offset (\d+)/],
        ['NaN score', ['a', 'nan'], /key "bad": sorted set NaN score at offset (\d+)/],
        ['odd count', ['a', '1', 'b'], /key "bad": odd sorted set element count at offset (\d+)/],
        ['empty', [], /key "bad": empty sorted set at offset (\d+)/],
      ];
      for (const [name, items, re] of cases) {
        checkBad(name, zlp(items), re);
      }
      // Integer members and scores (the parse's small-set check compares them without text),
      // and a damaged back-length in a set that check takes.
      // Numbers as integer entries, strings as string entries (even when they read as integers).
      const lpOf = (items: Array<string | number>): Buffer => {
        const w = new LpWriter().start();
        const raw = w as unknown as { rawText(v: string): void };
        for (const x of items) if (typeof x === 'number') w.int(x); else raw.rawText(x);
        return Buffer.from(w.finish());
      };
      const ints = load([[0, [rec('zi', str(lpOf([7, 1, 300, 2, -70000, 3])), { type: 17 }), rec('zm', str(lpOf([5, 1, 'x', 2])), { type: 17 })]]]);
      assert.match(ints.imp(), /Imported 2 keys/);
      assert.equal(ints.run('ZRANGE', 'zi', '0', '-1'), '*3\r\n$1\r\n7\r\n$3\r\n300\r\n$6\r\n-70000\r\n');
      assert.equal(ints.run('ZSCORE', 'zm', 'x'), '$1\r\n2\r\n');
      checkBad('duplicate member, integer scores', str(lpOf(['ab', 1, 'b', 2, 'ab', 3])), /key "bad": duplicate sorted set member at offset (\d+)/);
      checkBad('duplicate integer member', str(lpOf([7, 1, 8, 2, 7, 3])), /key "bad": duplicate sorted set member at offset (\d+)/);
      checkBad('integer and text member alike', str(lpOf([7, 1, '7', 2])), /key "bad": duplicate sorted set member at offset (\d+)/);
      const badBack = lpOf(['a', 1, 'b', 2]);
      badBack[6 + 2] = 9; // the first entry's back-length
      checkBad('bad back-length', str(badBack), /key "bad": listpack bad back-length at offset (\d+)/);
      function checkBad(name: string, value: Buffer, re: RegExp): void {
        const recs = [...good, rec('bad', value, { type: 17 }), rec('after', str('x'))];
        const { eng, imp: bad } = load([[0, recs]]);
        let msg = '';
        assert.throws(bad, (e: Error) => ((msg = e.message), re.test(e.message)), name);
        // The offset is the bad value's: after its type byte and key.
        const whole = rdbFile([[0, recs]]);
        const at = whole.indexOf(Buffer.concat([Buffer.from([17]), str('bad')])) + 1 + str('bad').length;
        assert.equal(Number(re.exec(msg)![1]), at, name);
        assert.equal(eng.dbs[0].size, 0, name);
      }
    });

    it('strings with a TTL, intsets and small plain sets (only checked by the parse): good ones load, damaged ones are refused with readValue\'s words and offset', () => {
      // A plain set (RDB_TYPE_SET, 2): its count, then each member as a string.
      const plainSet = (members: Buffer[]): Buffer => Buffer.concat([len(members.length), ...members]);
      const good = [
        rec('t-raw', str('short'), { exp: later }),
        rec('t-long', str('y'.repeat(300)), { exp: later }),
        rec('t-lzf', lzfStr(b('z'.repeat(90))), { exp: later }),
        rec('t-int', intStr(77), { exp: later }),
        rec('i16', str(intset(2, [-5, 1, 300])), { type: 11 }),
        rec('i32', str(intset(4, [-70000, 2, 70000])), { type: 11 }),
        rec('i64', str(intset(8, [1, 2, 2 ** 40])), { type: 11 }),
        rec('s3', plainSet([str('a'), str('b'), str('ab')]), { type: 2 }),
        rec('s-int', plainSet([str('x'), intStr(5)]), { type: 2 }),
        rec('s9', plainSet(Array.from({ length: 9 }, (_, i) => str(`m${i}`))), { type: 2 }),
      ];
      const { run, imp } = load([[0, [rec('s', str('v')), ...good]]]);
      assert.match(imp(), /Imported 11 keys/);
      assert.equal(run('GET', 't-raw'), '$5\r\nshort\r\n');
      assert.equal(run('STRLEN', 't-long'), ':300\r\n');
      assert.equal(run('GET', 't-lzf'), `$90\r\n${'z'.repeat(90)}\r\n`);
      assert.equal(run('GET', 't-int'), '$2\r\n77\r\n');
      for (const k of ['t-raw', 't-long', 't-lzf', 't-int']) assert.match(run('PTTL', k), /^:3\d{6}\r\n$/, k);
      assert.equal(run('SMEMBERS', 'i16'), '*3\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n300\r\n');
      assert.equal(run('SISMEMBER', 'i32', '-70000'), ':1\r\n');
      assert.equal(run('SISMEMBER', 'i64', String(2 ** 40)), ':1\r\n');
      assert.equal(run('OBJECT', 'ENCODING', 'i16'), '$6\r\nintset\r\n');
      assert.equal(run('SCARD', 's3'), ':3\r\n');
      assert.equal(run('SISMEMBER', 's3', 'ab'), ':1\r\n');
      assert.equal(run('SISMEMBER', 's-int', '5'), ':1\r\n');
      assert.equal(run('SCARD', 's9'), ':9\r\n');
      // LZF data whose back reference points before the output's start (at its compressed bytes).
      const badLzf = Buffer.concat([Buffer.from([0xc3]), len(3), len(20), Buffer.from([0x20, 0x05, 0x00])]);
      const cases: Array<[string, Buffer, number, RegExp, number]> = [
        ['TTL string, invalid LZF', badLzf, 0, /key "bad": invalid LZF data at offset (\d+)/, 3],
        ['TTL string, LZF lengths', Buffer.concat([Buffer.from([0xc3]), len(3), len(0), Buffer.from([1, 2, 3])]), 0, /key "bad": bad LZF lengths at offset (\d+)/, 3],
        ['intset not sorted', str(intset(2, [1, 3, 2])), 11, /key "bad": intset not sorted at offset (\d+)/, 0],
        ['intset repeated', str(intset(4, [1, 1])), 11, /key "bad": intset not sorted at offset (\d+)/, 0],
        ['intset length', str(Buffer.concat([intset(2, [1, 2]), Buffer.from([0])])), 11, /key "bad": intset length mismatch at offset (\d+)/, 0],
        ['intset empty', str(intset(2, [])), 11, /key "bad": empty intset at offset (\d+)/, 0],
        ['intset width', str(intset(2, [1]).fill(3, 0, 1)), 11, /key "bad": intset bad encoding at offset (\d+)/, 0],
        ['set duplicate', plainSet([str('a'), str('b'), str('a')]), 2, /key "bad": duplicate set member at offset (\d+)/, 0],
        ['set duplicate (2)', plainSet([str('ab'), str('ab')]), 2, /key "bad": duplicate set member at offset (\d+)/, 0],
        ['set empty', plainSet([]), 2, /key "bad": empty set at offset (\d+)/, 0],
      ];
      for (const [name, value, type, re, past] of cases) {
        const recs = [...good, rec('bad', value, { type, exp: type === 0 ? later : undefined }), rec('after', str('x'))];
        const { eng, imp: bad } = load([[0, recs]]);
        let msg = '';
        assert.throws(bad, (e: Error) => ((msg = e.message), re.test(e.message)), name);
        // The offset is the bad value's (after its type byte and key), or `past` bytes into it.
        const whole = rdbFile([[0, recs]]);
        const at = whole.indexOf(Buffer.concat([Buffer.from([type]), str('bad')])) + 1 + str('bad').length + past;
        assert.equal(Number(re.exec(msg)![1]), at, name);
        assert.equal(eng.dbs[0].size, 0, name);
      }
    });

    it('a damaged staged record is refused with its offset; nothing is imported', () => {
      const good = [rec('ok', str('fine'))];
      // LZF data whose back reference points before the output's start.
      const badLzf = Buffer.concat([Buffer.from([0xc3]), len(3), len(20), Buffer.from([0x20, 0x05, 0x00])]);
      const cases: Array<[string, Rec[], RegExp]> = [
        ['invalid LZF', [...good, rec('bad', badLzf)], /key "bad": invalid LZF data at offset \d+/],
        ['LZF lengths', [...good, rec('bad', Buffer.concat([Buffer.from([0xc3]), len(3), len(0), Buffer.from([1, 2, 3])]))], /key "bad": bad LZF lengths at offset \d+/],
      ];
      for (const [name, recs, re] of cases) {
        const { eng, imp } = load([[0, recs]]);
        assert.throws(imp, re, name);
        assert.equal(eng.dbs[0].size, 0, name);
      }
      // Truncated inside a staged value (raw, then LZF): the end of data is found, not staged.
      for (const value of [str('truncated value'), lzfStr(b('t'.repeat(80)))]) {
        const whole = rdbFile([[0, [...good, rec('cut', value)]]]);
        const file = path.join(tmp, 'cut.rdb');
        fs.writeFileSync(file, whole.subarray(0, whole.length - 9 - 4));
        const eng = new Engine(loadConfig([], {}), FAMILIES);
        assert.throws(() => importRdb(eng, file), /unexpected end of data at offset \d+; nothing was imported/);
        assert.equal(eng.dbs[0].size, 0);
      }
    });
  });
});

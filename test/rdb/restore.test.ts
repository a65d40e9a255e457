/**
 * RESTORE against redis-server 7.0: error texts and options (differential, byte for byte),
 * and payloads in every old encoding, built byte by byte (test/rdb/fixtures.ts), restored on
 * both servers and compared (DEBUG DIGEST-VALUE on the Redis side after a trip through us).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { runScript, type Step } from '../diff/harness.js';
import { RdbReader } from '../../dist/rdb/reader.js';
import { asciiDouble, intStr, intset, len, listpackStrings, payload, str, ziplist, zipmap } from './fixtures.js';

let ours: Proc;
let redis: Proc;
let o: Redis;
let r: Redis;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no', '--enable-debug-command', 'yes']), startRedis(['--enable-debug-command', 'yes'])]);
  o = new Redis(ours.port, { maxRetriesPerRequest: 0 });
  r = new Redis(redis.port, { maxRetriesPerRequest: 0 });
});
after(async () => {
  o?.disconnect();
  r?.disconnect();
  await Promise.all([ours?.stop(), redis?.stop()]);
});

async function diff(steps: Step[]): Promise<void> {
  await Promise.all([o.flushall(), r.flushall()]);
  const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
  try {
    const m = await runScript(a, b, { name: 'x', steps });
    assert.equal(m, null, m ? `step ${m.step} (${m.cmd}):\n  ours:  ${m.ours}\n  redis: ${m.redis}` : '');
  } finally {
    a.close();
    b.close();
  }
}

const good = payload(0, str('hello'), 10);
const corrupt = Buffer.from(good);
corrupt[2] ^= 1;

describe('RESTORE: errors and options, differential', () => {
  it('error texts and their order', async () => {
    await diff([
      ['SET', 'k', 'v'],
      ['RESTORE', 'k', '0', good], // BUSYKEY before anything else is checked
      ['RESTORE', 'k', 'x', good], ['RESTORE', 'n', 'x', good], ['RESTORE', 'n', '-1', good],
      ['RESTORE', 'n', '0', corrupt], ['RESTORE', 'n', '0', 'short'], ['RESTORE', 'n', '0', ''],
      ['RESTORE', 'n', '0', payload(0, str('hello'), 13)], // version from the future (we take up to 12, 7.4's)
      ['RESTORE', 'n', '0', payload(1, len(0))], // an empty list
      ['RESTORE', 'n', '0', payload(0, Buffer.from([0x85]))], // truncated string
      ['RESTORE', 'n', '0', payload(200, str('x'))], // unknown type
      ['RESTORE', 'n', '0', payload(7, Buffer.alloc(16))], // module value
      ['RESTORE', 'n', '0', good, 'IDLETIME', '-1'], ['RESTORE', 'n', '0', good, 'IDLETIME', 'x'],
      ['RESTORE', 'n', '0', good, 'FREQ', '256'], ['RESTORE', 'n', '0', good, 'FREQ', '-1'],
      ['RESTORE', 'n', '0', good, 'FREQ', '1', 'IDLETIME', '1'], ['RESTORE', 'n', '0', good, 'IDLETIME', '1', 'FREQ', '1'],
      ['RESTORE', 'n', '0', good, 'BOGUS'], ['RESTORE', 'n', '0', good, 'IDLETIME'], ['RESTORE', 'n', '0'],
      ['EXISTS', 'n'], ['GET', 'k'],
    ]);
  });

  it('REPLACE, TTL, ABSTTL, TTL in the past, IDLETIME', async () => {
    await diff([
      ['SET', 'k', 'old'], ['RESTORE', 'k', '0', good, 'REPLACE'], ['GET', 'k'], ['TTL', 'k'],
      ['RESTORE', 'k', '100000', good, 'REPLACE'], ['TTL', 'k'],
      ['RESTORE', 'k', '4102444800000', good, 'REPLACE', 'ABSTTL'], ['PEXPIRETIME', 'k'],
      ['RESTORE', 'k', '1', good, 'REPLACE', 'ABSTTL'], ['EXISTS', 'k'], // already expired: OK, nothing created, old value gone
      ['RESTORE', 'k2', '0', good, 'IDLETIME', '1000'], { cmd: ['OBJECT', 'IDLETIME', 'k2'], compare: 'idle' },
      ['RESTORE', 'k3', '0', good, 'FREQ', '100', 'REPLACE', 'ABSTTL'], ['GET', 'k3'],
      ['restore', 'k4', '0', good, 'replace', 'absttl', 'idletime', '5'], { cmd: ['OBJECT', 'IDLETIME', 'k4'], compare: 'idle' },
    ]);
  });

  it('FREQ and IDLETIME as OBJECT FREQ / IDLETIME report them, under LFU, LRU and no policy', async () => {
    try {
      await diff([
        ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lfu'],
        ['RESTORE', 'f1', '0', good, 'FREQ', '100'], ['OBJECT', 'FREQ', 'f1'],
        ['RESTORE', 'f2', '0', good, 'IDLETIME', '1000'], ['OBJECT', 'FREQ', 'f2'], // ignored: a new key's counter
        ['RESTORE', 'f3', '0', good, 'FREQ', '0'], ['OBJECT', 'FREQ', 'f3'],
        ['RESTORE', 'f1', '0', good, 'FREQ', '255', 'REPLACE'], ['OBJECT', 'FREQ', 'f1'],
        { cmd: ['OBJECT', 'IDLETIME', 'f1'], compare: 'idle' },
        ['RESTORE', 'f1', '0', good, 'REPLACE'], ['OBJECT', 'FREQ', 'f1'], // a new key's counter, not 255
        ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru'],
        ['RESTORE', 'l1', '0', good, 'FREQ', '100'], { cmd: ['OBJECT', 'IDLETIME', 'l1'], compare: 'idle' }, // ignored
        ['RESTORE', 'l2', '0', good, 'IDLETIME', '500'], { cmd: ['OBJECT', 'IDLETIME', 'l2'], compare: 'idle' }, ['OBJECT', 'FREQ', 'l2'],
        ['RESTORE', 'l2', '0', good, 'REPLACE'], { cmd: ['OBJECT', 'IDLETIME', 'l2'], compare: 'idle' }, // idle 0 again
        ['SET', 'l3', '12345'], ['OBJECT', 'ENCODING', 'l3'], ['RESTORE', 'l3', '0', good, 'REPLACE'], ['OBJECT', 'ENCODING', 'l3'],
        ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction'],
        ['RESTORE', 'n1', '0', good, 'IDLETIME', '300'], { cmd: ['OBJECT', 'IDLETIME', 'n1'], compare: 'idle' },
      ]);
    } finally {
      await Promise.all([o.config('SET', 'maxmemory-policy', 'noeviction'), r.config('SET', 'maxmemory-policy', 'noeviction')]);
    }
  });

  it('RESTORE-ASKING behaves as RESTORE', async () => {
    await diff([['RESTORE-ASKING', 'k', '0', good], ['GET', 'k'], ['RESTORE-ASKING', 'k', '0', good]]);
  });

  it('keys whose TTL has passed: REPLACE deletes them as they are, a plain RESTORE expires them (events as Redis)', async () => {
    const [ev, rv] = await Promise.all([pastTtlEvents(ours.port), pastTtlEvents(redis.port)]);
    assert.deepEqual(ev, rv);
    assert.ok(rv.includes('expired c') && !rv.includes('expired a'), rv.join(', '));
  });
});

/**
 * With active expiry off, keys whose TTL has just passed, then RESTORE over them: REPLACE with
 * no TTL, REPLACE with a past TTL, plain RESTORE. The replies, then the keyevent notifications.
 */
async function pastTtlEvents(port: number): Promise<string[]> {
  const c = new Redis(port, { maxRetriesPerRequest: 0 });
  const sub = new Redis(port, { maxRetriesPerRequest: 0 });
  const got: string[] = [];
  try {
    await c.flushall();
    await c.call('DEBUG', 'SET-ACTIVE-EXPIRE', '0');
    await c.config('SET', 'notify-keyspace-events', 'KEAn');
    let marked: () => void = () => {};
    /** Every event published so far has arrived (a marker published after them has). */
    const sync = async (): Promise<void> => {
      const seen = new Promise<void>((res) => { marked = res; });
      await c.publish('__keyevent@0__:mark', 'x');
      await seen;
    };
    sub.on('pmessage', (_p: string, ch: string, msg: string) => {
      if (ch.endsWith(':mark')) marked();
      else got.push(`${ch.slice(ch.indexOf(':') + 1)} ${msg}`);
    });
    await sub.psubscribe('__keyevent@0__:*');
    for (const k of ['a', 'b', 'c']) await c.set(k, 'old', 'PX', 1);
    await sync();
    got.length = 0;
    await new Promise((r) => setTimeout(r, 20));
    const replies = [
      await c.call('RESTORE', 'a', '0', good, 'REPLACE'), await c.call('RESTORE', 'b', '1', good, 'REPLACE', 'ABSTTL'),
      await c.call('RESTORE', 'c', '0', good), await c.exists('a', 'b', 'c'),
    ];
    await sync();
    return [...replies.map(String), ...got];
  } finally {
    await c.call('DEBUG', 'SET-ACTIVE-EXPIRE', '1');
    await c.config('SET', 'notify-keyspace-events', '');
    c.disconnect();
    sub.disconnect();
  }
}

/** A value as replies show it (order-free where Redis's order is unspecified). */
async function valueText(c: Redis, key: string): Promise<string> {
  const type = await c.type(key);
  let v: unknown;
  if (type === 'string') v = (await c.getBuffer(key))!.toString('hex');
  else if (type === 'hash') v = Object.entries(await c.hgetall(key)).sort();
  else if (type === 'list') v = await c.lrange(key, 0, -1);
  else if (type === 'set') v = (await c.smembers(key)).sort();
  else if (type === 'zset') v = await c.zrange(key, '0', '-1', 'WITHSCORES');
  else if (type === 'stream') v = await c.call('XINFO', 'STREAM', key, 'FULL');
  return JSON.stringify([type, v]);
}

/** Restore `p` on both servers; same value, and our DUMP of it restores to the same digest. */
async function both(p: Buffer): Promise<void> {
  await Promise.all([o.del('k'), r.del('k', 'k2')]);
  assert.equal(await r.restore('k', 0, p), 'OK');
  assert.equal(await o.restore('k', 0, p), 'OK');
  assert.equal(await valueText(o, 'k'), await valueText(r, 'k'));
  await r.restore('k2', 0, (await o.dumpBuffer('k'))!);
  assert.deepEqual(await r.call('DEBUG', 'DIGEST-VALUE', 'k2'), await r.call('DEBUG', 'DIGEST-VALUE', 'k'));
}

const big = 'b'.repeat(100);
const nums = Array.from({ length: 20 }, (_, i) => i * 1000 - 7000);

describe('RESTORE: every old encoding, byte-built, on both servers', () => {
  it('strings: raw, INT8/16/32, and LZF written by hand', async () => {
    await both(payload(0, str('plain')));
    for (const v of [-100, 1000, -70000, 2147483647]) await both(payload(0, intStr(v)));
    // LZF: 4 literals "abcd" then a back-reference of 20 bytes at offset 4 ("abcd" x 6).
    const lz = Buffer.from([3, 0x61, 0x62, 0x63, 0x64, (7 << 5) | 0, 20 - 2 - 7, 3]);
    await both(payload(0, Buffer.concat([Buffer.from([0xc3]), len(lz.length), len(24), lz])));
  });

  it('lists: linked list, ziplist, quicklist 1 (ziplists), quicklist 2 (listpack and plain nodes)', async () => {
    await both(payload(1, Buffer.concat([len(3), str('a'), intStr(12), str(big)])));
    await both(payload(10, str(ziplist(['a', 1, 300, -70000, 5000000000, big, ...nums]))));
    await both(payload(14, Buffer.concat([len(2), str(ziplist(['x', 'y'])), str(ziplist([1, 2, big]))]), 8));
    const lp = listpackStrings(['p', 'q']);
    await both(payload(18, Buffer.concat([len(2), len(2), str(lp), len(1), str('plain-node')]), 10));
  });

  it('sets: plain, intset (16/32/64-bit)', async () => {
    await both(payload(2, Buffer.concat([len(3), str('a'), str('b'), intStr(5)])));
    await both(payload(11, str(intset(2, [-5, 1, 300]))));
    await both(payload(11, str(intset(4, [-70000, 1, 70000]))));
    await both(payload(11, str(intset(8, [-5000000000, 1, 5000000000]))));
  });

  it('sorted sets: plain (ASCII doubles), zset2, ziplist', async () => {
    await both(payload(3, Buffer.concat([len(4), str('a'), asciiDouble(1.5), str('b'), asciiDouble(-Infinity), str('c'), asciiDouble(Infinity), str('d'), asciiDouble(0)])));
    const d = Buffer.alloc(8);
    d.writeDoubleLE(2.25, 0);
    await both(payload(5, Buffer.concat([len(2), str('x'), d, str('y'), d])));
    await both(payload(12, str(ziplist(['a', 1, 'b', '2.5', 'c', 3]))));
  });

  it('hashes: plain, zipmap, ziplist', async () => {
    await both(payload(4, Buffer.concat([len(2), str('f'), str('v'), str('g'), intStr(7)])));
    await both(payload(9, str(zipmap([['f', 'v'], ['long', big.slice(0, 60)]], 3)), 6));
    await both(payload(13, str(ziplist(['f', 'v', 'n', 12, 'big', big]))));
  });

  it('hashes and sorted sets as listpacks or ziplists keep that encoding by their count alone (a value past *-max-listpack-value stays), as Redis 7.0 loads them', async () => {
    // Listpack payloads made by redis-server itself while its limit was higher.
    await Promise.all([r.config('SET', 'hash-max-listpack-value', '200'), r.config('SET', 'zset-max-listpack-value', '200')]);
    let ph: Buffer, pz: Buffer;
    try {
      await r.del('h', 'z');
      await r.hset('h', 'f', 'v', 'long', big);
      await r.zadd('z', 1, big, 2, 'a');
      [ph, pz] = [(await r.dumpBuffer('h'))!, (await r.dumpBuffer('z'))!];
    } finally {
      await Promise.all([r.config('SET', 'hash-max-listpack-value', '64'), r.config('SET', 'zset-max-listpack-value', '64')]);
    }
    const steps: Step[] = [];
    for (const [k, p] of [['h', ph], ['hz', payload(13, str(ziplist(['f', 'v', 'long', big])))]] as const) {
      steps.push(['RESTORE', k, '0', p], ['OBJECT', 'ENCODING', k], ['DUMP', k], ['HGET', k, 'long'], ['HSET', k, 'g', 'w'],
        ['OBJECT', 'ENCODING', k], ['DUMP', k], ['HDEL', k, 'f'], ['HGETALL', k], ['HSTRLEN', k, 'long'], ['DUMP', k],
        ['HSET', k, 'x', big], ['OBJECT', 'ENCODING', k]);
    }
    for (const [k, p] of [['z', pz], ['zz', payload(12, str(ziplist([big, 1, 'a', 2])))]] as const) {
      steps.push(['RESTORE', k, '0', p], ['OBJECT', 'ENCODING', k], ['DUMP', k], ['ZSCORE', k, big], ['ZADD', k, '3', 'b'],
        ['OBJECT', 'ENCODING', k], ['DUMP', k], ['ZRANGE', k, '0', '-1', 'WITHSCORES'], ['ZREM', k, 'a'], ['DUMP', k],
        ['ZADD', k, '4', `${big}x`], ['OBJECT', 'ENCODING', k]);
    }
    await diff(steps);
  });

  it('zipmap hashes: turned into a hashtable by a field or value past hash-max-listpack-value, kept as listpack past 128 pairs, as Redis 7.0 loads them', async () => {
    const many = Array.from({ length: 129 }, (_, i): [string, string] => [`f${i}`, 'v']);
    const cases: Array<[string, Buffer]> = [
      ['zlong', payload(9, str(zipmap([['f', 'v'], ['long', big]])), 6)],
      ['zkey', payload(9, str(zipmap([[big, 'v']])), 6)],
      ['z64', payload(9, str(zipmap([['f', 'x'.repeat(64)]])), 6)],
      ['z65', payload(9, str(zipmap([['f', 'x'.repeat(65)]])), 6)],
      ['z128', payload(9, str(zipmap(many.slice(0, 128))), 6)],
      ['z129', payload(9, str(zipmap(many)), 6)],
    ];
    const steps: Step[] = [];
    for (const [k, p] of cases) steps.push(['RESTORE', k, '0', p], ['OBJECT', 'ENCODING', k], ['HLEN', k], { cmd: ['HGETALL', k], compare: 'sorted' });
    // DUMP bytes only where both keep the listpack: a hashtable's order follows Redis's
    // per-process hash seed.
    for (const k of ['z64', 'z128', 'z129']) steps.push(['DUMP', k]);
    await diff(steps);
  });

  it('hash listpacks: kept byte for byte, rebuilt when not encoded as lpAppend would, refused when corrupt', async () => {
    // Redis's own payload comes back from our DUMP unchanged.
    await r.del('h');
    await r.hset('h', 'a', '1', 'b', 'two', 'c', '-300', 'd', 'x'.repeat(63), '12', 'twelve');
    const theirs = (await r.dumpBuffer('h'))!;
    await o.del('h');
    await o.restore('h', 0, theirs);
    assert.deepEqual(await o.dumpBuffer('h'), theirs);
    await both(theirs);
    // Entries in wider encodings than Redis writes: the string "5", the integer 7 in 16 bits,
    // "abc" with a 12-bit length, 100 in 32 bits. Both servers read them; we look them up.
    const odd = payload(16, str(rawListpack([
      Buffer.from([0x81, 0x35]), Buffer.from([0xf1, 7, 0]), Buffer.from([0xe0, 3, 0x61, 0x62, 0x63]),
      Buffer.from([0xf3, 100, 0, 0, 0]), Buffer.from([0x81, 0x78]), Buffer.from([0x81, 0x79]),
    ])), 10);
    await both(odd);
    const lookups: Step[] = [['HGET', 'k', '5'], ['HGET', 'k', 'abc'], ['HGET', 'k', 'x'], ['HGETALL', 'k'], ['HSET', 'k', '5', '6'], ['HGETALL', 'k']];
    await diff([['RESTORE', 'k', '0', odd], ...lookups]);
    // Corrupt or duplicate: refused (Redis with sanitize-dump-payload yes, as we always are).
    const lp = (entries: Buffer[], fix?: (b: Buffer) => void) => {
      const b = rawListpack(entries);
      fix?.(b);
      return payload(16, str(b), 10);
    };
    const a = Buffer.from([0x81, 0x61]);
    const one = Buffer.from([1]);
    const bad = [
      lp([a, one, a, Buffer.from([2])]), // duplicate field
      lp([Buffer.from([0x81, 0x35]), one, Buffer.from([5]), one]), // "5" twice, one as a string
      lp([a, one, a]), // odd count
      lp([a, one], (b) => b.writeUInt16LE(4, 4)), // count
      lp([a, one], (b) => (b[b.length - 1] = 0xfe)), // end byte
      lp([a, one], (b) => (b[8] = 3)), // back-length
      lp([a, one], (b) => (b[6] = 0x85)), // string past the end
      lp([a, one], (b) => b.writeUInt32LE(99, 0)), // total bytes
      lp([]), // empty
    ];
    try {
      await r.config('SET', 'sanitize-dump-payload', 'yes');
      await diff(bad.flatMap((p): Step[] => [['RESTORE', 'k', '0', p], ['EXISTS', 'k']]));
    } finally {
      await r.config('SET', 'sanitize-dump-payload', 'no');
    }
  });

  it('hash listpacks: duplicate fields found wherever they are (declared count, count 65535, more fields than the check table takes)', async () => {
    // Our listpack check looks for equal fields in the same pass, in a table sized from the
    // declared count (at most 8,192 fields; past that a second pass): each way, on both servers.
    const field = (i: number) => {
      const t = Buffer.from(`f${i.toString(36)}`);
      return Buffer.concat([Buffer.from([0x80 | t.length]), t]);
    };
    const hash = (fields: number, dupOf: number, count?: number) => {
      const e: Buffer[] = [];
      for (let i = 0; i < fields; i++) e.push(i === fields - 1 && dupOf >= 0 ? field(dupOf) : field(i), Buffer.from([i & 127]));
      return payload(16, str(rawListpack(e, count ?? e.length)), 10);
    };
    const cases: Buffer[] = [];
    for (const n of [100, 9000]) {
      for (const count of [undefined, 65535]) cases.push(hash(n, -1, count), hash(n, 3, count), hash(n, n - 2, count));
    }
    const steps: Step[] = [['CONFIG', 'SET', 'hash-max-listpack-entries', '20000']];
    for (const p of cases) steps.push(['RESTORE', 'k', '0', p, 'REPLACE'], ['HLEN', 'k'], ['HGET', 'k', 'f3'], ['DEL', 'k']);
    try {
      await r.config('SET', 'sanitize-dump-payload', 'yes');
      await diff(steps);
    } finally {
      await Promise.all([r.config('SET', 'sanitize-dump-payload', 'no'), r.config('SET', 'hash-max-listpack-entries', '128'), o.config('SET', 'hash-max-listpack-entries', '128')]);
    }
  });

  it('streams: listpacks v1 derived from a v2 payload (no first id, max deleted id, entries added, entries read)', async () => {
    await r.del('s');
    await r.xadd('s', '1-1', 'a', '1', 'b', '2');
    await r.xadd('s', '1-2', 'a', '3', 'b', '4');
    await r.xadd('s', '2-0', 'c', '5');
    await r.xgroup('CREATE', 's', 'g', '0');
    await r.xreadgroup('GROUP', 'g', 'alice', 'COUNT', '2', 'STREAMS', 's', '>');
    const v2 = (await r.dumpBuffer('s'))!;
    await both(v2);
    await both(streamV1(v2));
  });
});

describe('RESTORE: encodings newer than Redis 7.0 (RDB 11, Redis 7.2)', () => {
  it('set listpack and stream listpacks v3 are accepted', async () => {
    await o.del('k', 's3');
    assert.equal(await o.restore('k', 0, payload(20, str(listpackStrings(['a', 'b', 'c'])), 11)), 'OK');
    assert.deepEqual((await o.smembers('k')).sort(), ['a', 'b', 'c']);
    await r.del('s');
    await r.xadd('s', '5-1', 'f', 'v');
    await r.xgroup('CREATE', 's', 'g', '0');
    await r.xreadgroup('GROUP', 'g', 'bob', 'STREAMS', 's', '>');
    assert.equal(await o.restore('s3', 0, streamV3((await r.dumpBuffer('s'))!)), 'OK');
    const info = await o.call('XINFO', 'STREAM', 's3', 'FULL') as unknown[];
    assert.match(JSON.stringify(info), /bob/);
    assert.deepEqual(await o.xrange('s3', '-', '+'), [['5-1', ['f', 'v']]]);
  });
});

/** Offsets of the parts of a stream v2 payload (walked with our reader). */
function streamParts(p: Buffer) {
  const rd = new RdbReader(p, 1, p.length - 10);
  const nodes = rd.len();
  for (let i = 0; i < nodes; i++) { rd.string(); rd.string(); }
  const nodesEnd = rd.p;
  rd.len(); rd.lenBig(); rd.lenBig(); // length, last id
  const metaV1End = rd.p;
  rd.lenBig(); rd.lenBig(); rd.lenBig(); rd.lenBig(); rd.lenBig(); // first id, max deleted, entries added
  const groupsAt = rd.p;
  return { rd, nodesEnd, metaV1End, groupsAt };
}

function walkGroups(p: Buffer, rd: RdbReader, v3: boolean, dropEntriesRead: boolean): Buffer {
  const out: Buffer[] = [];
  let from = rd.p;
  const groups = rd.len();
  for (let g = 0; g < groups; g++) {
    rd.string(); rd.lenBig(); rd.lenBig();
    if (dropEntriesRead) { out.push(p.subarray(from, rd.p)); rd.lenBig(); from = rd.p; } else rd.lenBig();
    const pel = rd.len();
    for (let i = 0; i < pel; i++) { rd.bytes(16); rd.ms(); rd.lenBig(); }
    const consumers = rd.len();
    for (let c = 0; c < consumers; c++) {
      rd.string(); rd.ms();
      if (v3) { out.push(p.subarray(from, rd.p), Buffer.alloc(8)); from = rd.p; } // active-time
      const n = rd.len();
      for (let i = 0; i < n; i++) rd.bytes(16);
    }
  }
  out.push(p.subarray(from, rd.p));
  return Buffer.concat(out);
}

/** RDB_TYPE_STREAM_LISTPACKS (v1) from a v2 payload. */
function streamV1(p: Buffer): Buffer {
  const { rd, metaV1End, groupsAt } = streamParts(p);
  void groupsAt;
  const head = p.subarray(1, metaV1End);
  const groups = walkGroups(p, rd, false, true);
  return payload(15, Buffer.concat([head, groups]), 9);
}

/** RDB_TYPE_STREAM_LISTPACKS_3 (7.2: consumers' active-time) from a v2 payload. */
function streamV3(p: Buffer): Buffer {
  const { rd, groupsAt } = streamParts(p);
  const head = p.subarray(1, groupsAt);
  const groups = walkGroups(p, rd, true, false);
  return payload(21, Buffer.concat([head, groups]), 11);
}

/** A listpack from raw entries (encoding + data bytes; the back-length is added), count as given. */
function rawListpack(entries: (Buffer | number[])[], count = entries.length): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const l = e.length;
    if (l > 16383) throw new Error('entries of up to 16383 bytes only');
    const bl = l <= 127 ? [l] : [l >>> 7, (l & 127) | 128];
    parts.push(Buffer.from(e), Buffer.from(bl));
  }
  const body = Buffer.concat(parts);
  const hdr = Buffer.alloc(6);
  hdr.writeUInt32LE(6 + body.length + 1, 0);
  hdr.writeUInt16LE(count, 4);
  return Buffer.concat([hdr, body, Buffer.from([0xff])]);
}

/** A one-node quicklist 2 payload (RDB_TYPE_LIST_QUICKLIST_2, a packed node). */
function oneNode(lp: Buffer): Buffer {
  return payload(18, Buffer.concat([len(1), len(2), str(lp)]), 10);
}

describe('RESTORE: one-node quicklist 2 lists, kept as their listpack', () => {
  it('valid but unusual listpacks (non-canonical integers, unknown count) come back byte for byte, and edit as Redis', async () => {
    const s12 = [0x82, 0x31, 0x32]; // "12" as a string
    const wide5 = [0xf4, 5, 0, 0, 0, 0, 0, 0, 0]; // 5 as a 64-bit integer
    const neg = [0xf1, 0xfe, 0xff]; // -2 as a 16-bit integer
    for (const lp of [rawListpack([s12, wide5, neg]), rawListpack([s12, wide5], 65535), rawListpack([[0x7f], [0xc0 | 0x1f, 0xff]])]) {
      const p = oneNode(lp);
      await both(p);
      assert.ok((await o.dumpBuffer('k'))!.equals((await r.dumpBuffer('k'))!), `DUMP after RESTORE of ${lp.toString('hex')}`);
      for (const c of [o, r]) {
        await c.rpush('k', '7', 'x');
        await c.lset('k', 1, 'changed');
        await c.lpop('k');
      }
      assert.ok((await o.dumpBuffer('k'))!.equals((await r.dumpBuffer('k'))!), `DUMP after edits of ${lp.toString('hex')}`);
    }
  });

  it('corrupt listpacks are refused as redis-server refuses them (sanitize-dump-payload yes), nothing stored', async () => {
    await r.config('SET', 'sanitize-dump-payload', 'yes');
    try {
      const ok = rawListpack([[0x81, 0x61], [0x05]]);
      const variants: [string, Buffer][] = [
        ['1-byte back-length with its continuation bit', (() => { const b = Buffer.from(ok); b[8] |= 0x80; return b; })()],
        ['count in the header wrong', (() => { const b = Buffer.from(ok); b[4] = 3; return b; })()],
        ['total bytes wrong', (() => { const b = Buffer.from(ok); b[0]++; return b; })()],
        ['no end byte', (() => { const b = Buffer.from(ok); b[b.length - 1] = 0xfe; return b; })()],
        ['string past the end', rawListpack([[0x85, 0x61]])],
        ['unknown encoding', rawListpack([[0xf5]])],
        ['back-length too long for the entry', (() => { const b = Buffer.from(ok); b[8] = 3; return b; })()],
        ['32-bit string length past the end', rawListpack([[0xf0, 0xff, 0xff, 0xff, 0x7f, 0x61]])],
        ['empty node', rawListpack([])],
      ];
      for (const [what, lp] of variants) {
        const p = oneNode(lp);
        await Promise.all([o.del('bad'), r.del('bad')]);
        const [eo, er] = await Promise.all([o.restore('bad', 0, p).catch((e) => String(e)), r.restore('bad', 0, p).catch((e) => String(e))]);
        assert.equal(eo, er, what);
        assert.match(String(eo), /Bad data format/, what);
        assert.equal(await o.exists('bad'), 0, what);
      }
    } finally {
      await r.config('SET', 'sanitize-dump-payload', 'no');
    }
  });

  it('back-lengths are read as lpDecodeBacklen reads them (backwards, on into the entry): hash and list listpacks', async () => {
    // A back-length byte with its continuation bit makes Redis read the byte before it too: the
    // listpack passes (sanitize-dump-payload yes) only when that byte adds nothing (0).
    const short = (last: number) => {
      const b = rawListpack([[0x81, last], [0x05]]);
      b[8] |= 0x80; // the 1-byte back-length (2) of the first entry, with bit 7
      return b;
    };
    const long = (last: number) => {
      const data = Buffer.alloc(126, 0x78);
      data[125] = last;
      const b = rawListpack([Buffer.concat([Buffer.from([0xe0, 126]), data]), [0x05]]);
      b[6 + 128] |= 0x80; // the first byte of its 2-byte back-length (128 = 0x01 0x80)
      return b;
    };
    const lps = [short(0x61), short(0), long(0x61), long(0), long(0x80)];
    const steps: Step[] = [];
    for (const lp of lps) {
      steps.push(['RESTORE', 'h', '0', payload(16, str(lp), 10), 'REPLACE'], ['HGETALL', 'h'], ['DEL', 'h']);
      steps.push(['RESTORE', 'l', '0', oneNode(lp), 'REPLACE'], ['LRANGE', 'l', '0', '-1'], ['RPOP', 'l'], ['LRANGE', 'l', '0', '-1'], ['DEL', 'l']);
    }
    await r.config('SET', 'sanitize-dump-payload', 'yes');
    try {
      await diff(steps);
    } finally {
      await r.config('SET', 'sanitize-dump-payload', 'no');
    }
  });
});

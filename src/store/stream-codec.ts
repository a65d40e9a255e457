/**
 * Persistence of streams (the CollectionCodec of Stream; see codec.ts for the contract).
 *
 * Item records (sub-keys start with a kind byte, so the kinds load in this order):
 *   0x01 [entry id: 128 bits BE]          one per entry, tombstones included:
 *        [flags u8] then
 *          MASTER (the first entry of a node): [varint n][field]... the node's master fields
 *          DEAD:  [varint listpack bytes]       (a tombstone keeps its id and size)
 *          live:  SAME ([value]... the master fields') or [varint n]([field][value])...
 *        (byte strings are [varint length][bytes])
 *   0x02 [gid u32 BE]                      a consumer group: [last-delivered-id 16][entries-read
 *                                          i64][name]
 *   0x03 [gid u32 BE][consumer name]       a consumer: [seen-time f64]
 *   0x04 [gid u32 BE][entry id 16]         a pending entry: [delivery time f64][delivery count
 *                                          u64][consumer name]
 * Header (in the metadata record): [last-generated-id 16][recorded-first-entry-id 16]
 * [max-deleted-entry-id 16][entries-added u64][last gid u32].
 *
 * Entries keep their nodes (a MASTER record opens one; the entries that follow in id order
 * belong to it) and tombstones their sizes, so node boundaries, XINFO's radix-tree counts and
 * future `~` trims are the same after a restart. XADD writes one entry record, XACK one record
 * per acknowledged id, XREADGROUP one per delivered entry plus its group and consumer.
 * A small stream (one node of at most WHOLE_MAX_ENTRIES entries and WHOLE_MAX_BYTES bytes,
 * and few group records) is stored whole: the same records packed in the metadata record.
 *
 * Known difference: after XSETID moved the last id below a deleted entry, XADD can append
 * entries below that tombstone. Such a node is restored in id order, a tombstone whose id is
 * above the next node's master is restored in that next node, and a tombstone shadowed by a
 * live entry of the same id is lost. Live entries, ids and counters are unaffected.
 */
import { T } from '../engine/db.js';
import {
  Consumer, ConsumerGroup, Stream, StreamNode, nodeHeaderBytes, recordSpan, type Nack, type StreamId,
} from '../engine/ds/stream.js';
import type { CollectionCodec, ItemWriter, RecordBuilder } from './codec.js';
import { ByteWriter, packWhole, putVarint, unpackWhole, varintSize } from './pack.js';

const K_ENTRY = 0x01;
const K_GROUP = 0x02;
const K_CONSUMER = 0x03;
const K_PENDING = 0x04;

const F_MASTER = 1;
const F_DEAD = 2;
const F_SAME = 4;
/** With F_DEAD: the tombstone's fields and values follow as a live entry's (else its size). */
const F_KEPT = 8;

const WHOLE_MAX_ENTRIES = 32;
const WHOLE_MAX_BYTES = 4096;
const WHOLE_MAX_GROUP_RECORDS = 32;

function writeId(b: Buffer, o: number, id: StreamId): void {
  for (let i = 0; i < 8; i++) {
    const c = id.charCodeAt(i);
    b[o + 2 * i] = c >>> 8;
    b[o + 2 * i + 1] = c & 0xff;
  }
}

function readId(b: Buffer, o: number): StreamId {
  return String.fromCharCode(
    (b[o] << 8) | b[o + 1], (b[o + 2] << 8) | b[o + 3], (b[o + 4] << 8) | b[o + 5], (b[o + 6] << 8) | b[o + 7],
    (b[o + 8] << 8) | b[o + 9], (b[o + 10] << 8) | b[o + 11], (b[o + 12] << 8) | b[o + 13], (b[o + 14] << 8) | b[o + 15],
  );
}

// Entry records are parsed with a module-level cursor (a million of them load at start-up:
// no reader object per record).
let at = 0;

function rdVarint(b: Buffer): number {
  let n = 0;
  let mul = 1;
  for (;;) {
    if (at >= b.length) throw new Error('truncated stream record');
    const x = b[at++];
    n += (x & 0x7f) * mul;
    if (x < 0x80) return n;
    mul *= 128;
  }
}

function rdBytes(b: Buffer): Buffer {
  const n = rdVarint(b);
  if (at + n > b.length) throw new Error('truncated stream record');
  at += n;
  return b.subarray(at - n, at);
}

// Sub-key scratch buffers: the store copies sub-keys as it queues a write.
const entrySub = Buffer.allocUnsafe(17);
entrySub[0] = K_ENTRY;
const groupSub = Buffer.allocUnsafe(5);
groupSub[0] = K_GROUP;
const pendingSub = Buffer.allocUnsafe(21);
pendingSub[0] = K_PENDING;

function entryKey(id: StreamId): Buffer {
  writeId(entrySub, 1, id);
  return entrySub;
}

/** entryKey() of entry i of node n, from the node's id words. */
function entryKeyAt(n: StreamNode, i: number): Buffer {
  const b = entrySub;
  for (let k = 0; k < 4; k++) {
    const v = n.idWord(i, k);
    b[1 + 4 * k] = v >>> 24;
    b[2 + 4 * k] = (v >>> 16) & 0xff;
    b[3 + 4 * k] = (v >>> 8) & 0xff;
    b[4 + 4 * k] = v & 0xff;
  }
  return b;
}

function groupKey(gid: number): Buffer {
  groupSub.writeUInt32BE(gid, 1);
  return groupSub;
}

function consumerKey(gid: number, name: string): Buffer {
  const b = Buffer.allocUnsafe(5 + name.length);
  b[0] = K_CONSUMER;
  b.writeUInt32BE(gid, 1);
  b.latin1Write(name, 5);
  return b;
}

function pendingKey(gid: number, id: StreamId): Buffer {
  pendingSub.writeUInt32BE(gid, 1);
  writeId(pendingSub, 5, id);
  return pendingSub;
}

// ---------------------------------------------------------------- record values

/**
 * The record of entry i, its elements copied as the node holds them (the node's record and this
 * record write byte strings alike, [varint length][bytes]; the node knows whether the fields
 * are the master's). perf: one Buffer per record, where entryValueOf() makes an Array, a view
 * per element, a ByteWriter and a copy (BullMQ's four XADDs a job, written by every everysec
 * batch).
 */
function entryValue(node: StreamNode, i: number): Buffer {
  const h = node.rawRecord(i);
  if (h < 0) return entryValueOf(node, i);
  const same = (h & 1) === 1;
  let flags = i === 0 ? F_MASTER : 0;
  if (!node.isLive(i)) flags |= F_DEAD | F_KEPT;
  if (same) flags |= F_SAME;
  const { from, to } = recordSpan;
  const mf = node.masterFields;
  let size = 1 + to - from + (same ? 0 : varintSize(h >>> 1));
  if (i === 0) {
    size += varintSize(mf.length);
    for (const f of mf) size += varintSize(f.length) + f.length;
  }
  const b = recordBuffer(size);
  b[0] = flags;
  let p = 1;
  if (i === 0) {
    p = putVarint(b, p, mf.length);
    for (const f of mf) {
      p = putVarint(b, p, f.length);
      p += f.copy(b, p);
    }
  }
  if (!same) p = putVarint(b, p, h >>> 1);
  const d = node.data;
  // (Buffer#copy of part of a Buffer allocates a view: a loop for the usual few bytes.)
  if (to - from > 64) d.copy(b, p, from, to);
  else for (let k = from; k < to; k++) b[p++] = d[k];
  return b;
}

/**
 * A Buffer of `size` bytes for a record: a view of one scratch, cached per size up to 512
 * (writers copy values at once: ItemWriter). perf: a Buffer per record was ~100 B of young
 * garbage, four per BullMQ job.
 */
function recordBuffer(size: number): Buffer {
  if (size > RECORD_VIEWS) return Buffer.allocUnsafe(size);
  return (recordViews[size] ??= recordScratch.subarray(0, size));
}
const RECORD_VIEWS = 512;
const recordScratch = Buffer.allocUnsafe(RECORD_VIEWS);
const recordViews: Buffer[] = [];

/** entryValue() from the entry's contents (a pushSized tombstone: its size only). */
function entryValueOf(node: StreamNode, i: number): Buffer {
  const w = new ByteWriter(64);
  const fv = node.contents(i);
  let flags = i === 0 ? F_MASTER : 0;
  let size = 0;
  if (!node.isLive(i)) {
    flags |= F_DEAD;
    if (fv !== null) flags |= F_KEPT;
    else size = node.tombSize(i) ?? 0;
  }
  const mf = node.masterFields;
  let same = false;
  if (fv !== null && fv.length === 2 * mf.length) {
    same = true;
    for (let k = 0; same && k < mf.length; k++) if (!mf[k].equals(fv[2 * k])) same = false;
    if (same) flags |= F_SAME;
  }
  w.u8(flags);
  if (flags & F_MASTER) {
    w.varint(mf.length);
    for (const f of mf) w.lenBytes(f);
  }
  if (fv === null) {
    w.varint(size);
  } else if (same) {
    for (let k = 1; k < fv.length; k += 2) w.lenBytes(fv[k]);
  } else {
    w.varint(fv.length >> 1);
    for (const b of fv) w.lenBytes(b);
  }
  return w.done();
}

function groupValue(g: ConsumerGroup): Buffer {
  const b = Buffer.allocUnsafe(24 + g.name.length);
  writeId(b, 0, g.lastId);
  b.writeBigInt64BE(BigInt.asIntN(64, g.entriesRead), 16);
  b.latin1Write(g.name, 24);
  return b;
}

function consumerValue(c: Consumer): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeDoubleLE(c.seenTime, 0);
  return b;
}

function pendingValue(n: Nack): Buffer {
  const name = n.consumer.name;
  const b = Buffer.allocUnsafe(16 + name.length);
  b.writeDoubleLE(n.deliveryTime, 0);
  b.writeBigUInt64BE(BigInt.asUintN(64, BigInt(n.deliveryCount)), 8);
  b.latin1Write(name, 16);
  return b;
}

// ---------------------------------------------------------------- writing

function writeGroupAll(g: ConsumerGroup, w: ItemWriter): void {
  w.put(groupKey(g.gid), groupValue(g));
  for (const c of g.consumers.values()) w.put(consumerKey(g.gid, c.name), consumerValue(c));
  for (const id of g.pel.keys()) w.put(pendingKey(g.gid, id), pendingValue(g.pel.get(id)!));
}

function writeAll(s: Stream, w: ItemWriter): void {
  for (const n of s.nodes) {
    for (let i = 0; i < n.count; i++) w.put(entryKey(n.id(i)), entryValue(n, i));
  }
  for (const g of s.groups.values()) writeGroupAll(g, w);
}

function writeChanges(s: Stream, w: ItemWriter): void {
  const log = s.log;
  if (log === null) return;
  let at: ReturnType<Stream['locate']> = null;
  for (const id of log.entries) {
    const found = s.locateAfter(id, at);
    if (found === null) {
      w.del(entryKey(id));
    } else {
      at = found;
      w.put(entryKey(id), entryValue(at.node, at.index));
    }
  }
  // The appended entries (a tombstone among them may be written twice: the same record).
  const tail = log.tail;
  if (tail !== null) {
    const nodes = s.nodes;
    let k = nodes.length - 1;
    while (k >= 0 && nodes[k] !== tail) k--;
    // (logNodeGone() clears `tail` when its node goes; if it were ever missing, all entries.)
    const from = k >= 0 ? log.tailFrom : 0;
    if (k < 0) k = 0;
    for (let ni = k; ni < nodes.length; ni++) {
      const n = nodes[ni];
      for (let i = ni === k ? from : 0; i < n.count; i++) w.put(entryKeyAt(n, i), entryValue(n, i));
    }
  }
  const live = (g: ConsumerGroup) => s.groups.get(g.name) === g;
  for (const g of log.groups) {
    if (live(g)) w.put(groupKey(g.gid), groupValue(g));
    else w.del(groupKey(g.gid));
  }
  for (const [g, names] of log.consumers) {
    const alive = live(g);
    for (const name of names) {
      const c = alive ? g.consumers.get(name) : undefined;
      if (c !== undefined) w.put(consumerKey(g.gid, name), consumerValue(c));
      else w.del(consumerKey(g.gid, name));
    }
  }
  for (const [g, ids] of log.pel) {
    const alive = live(g);
    for (const id of ids) {
      const n = alive ? g.pel.get(id) : undefined;
      if (n !== undefined) w.put(pendingKey(g.gid, id), pendingValue(n));
      else w.del(pendingKey(g.gid, id));
    }
  }
}

// ---------------------------------------------------------------- loading

/** A stream from its records (entries in id order, then groups, consumers, pending entries). */
function loadBegin(header: Buffer): RecordBuilder<Stream> {
  const s = new Stream();
  s.lastId = readId(header, 0);
  s.firstId = readId(header, 16);
  s.maxDeletedId = readId(header, 32);
  s.entriesAdded = header.readBigUInt64BE(48);
  s.gidSeq = header.readUInt32BE(56);
  let node: StreamNode | null = null;
  const groups = new Map<number, ConsumerGroup>();
  const add = (sub: Buffer, value: Buffer): void => {
    switch (sub[0]) {
      case K_ENTRY: {
        const id = readId(sub, 1);
        at = 1;
        const flags = value[0];
        if (flags & F_MASTER) {
          const fields: Buffer[] = [];
          for (let k = rdVarint(value); k > 0; k--) fields.push(rdBytes(value));
          if (node !== null) node.seal();
          node = new StreamNode(id, fields);
          node.fixed = nodeHeaderBytes(fields);
          s.nodes.push(node);
        }
        if (node === null) throw new Error('stream entry record before any node');
        if ((flags & (F_DEAD | F_KEPT)) === F_DEAD) {
          // Written before tombstones kept their contents: only the size.
          node.pushSized(id, rdVarint(value));
        } else {
          const fv: Buffer[] = [];
          if (flags & F_SAME) {
            for (const f of node.masterFields) fv.push(f, rdBytes(value));
          } else {
            for (let k = 2 * rdVarint(value); k > 0; k--) fv.push(rdBytes(value));
          }
          node.push(id, fv, (flags & F_DEAD) !== 0);
          if ((flags & F_DEAD) === 0) s.length++;
        }
        break;
      }
      case K_GROUP: {
        const gid = sub.readUInt32BE(1);
        const g = s.restoreGroup(gid, value.latin1Slice(24, value.length), readId(value, 0), value.readBigInt64BE(16));
        groups.set(gid, g);
        break;
      }
      case K_CONSUMER: {
        // A record of a group that is gone (never written that way; skipped, not fatal).
        const g = groups.get(sub.readUInt32BE(1));
        if (g === undefined) break;
        const name = sub.latin1Slice(5, sub.length);
        g.consumers.set(name, new Consumer(name, value.readDoubleLE(0)));
        break;
      }
      case K_PENDING: {
        const g = groups.get(sub.readUInt32BE(1));
        if (g === undefined) break;
        const id = readId(sub, 5);
        const name = value.latin1Slice(16, value.length);
        let c = g.consumers.get(name);
        if (c === undefined) {
          c = new Consumer(name, 0);
          g.consumers.set(name, c);
        }
        const count = value.readBigUInt64BE(8);
        const n: Nack = {
          consumer: c,
          deliveryTime: value.readDoubleLE(0),
          deliveryCount: count <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(count) : count,
        };
        g.pel.set(id, n);
        c.pel.set(id, n);
        break;
      }
      default:
        throw new Error(`unknown stream record kind ${sub[0]}`);
    }
  };
  return { add, end: () => s };
}

// ---------------------------------------------------------------- the codec

export const streamCodec: CollectionCodec<Stream> = {
  type: T.STREAM,

  encodeWhole(s) {
    const nodes = s.nodes;
    if (nodes.length > 1) return null;
    if (nodes.length === 1 && (nodes[0].count > WHOLE_MAX_ENTRIES || nodes[0].bytes > WHOLE_MAX_BYTES)) return null;
    let records = 0;
    for (const g of s.groups.values()) {
      records += 1 + g.consumers.size + g.pel.size;
      if (records > WHOLE_MAX_GROUP_RECORDS) return null;
    }
    return packWhole(streamCodec, s);
  },

  size: (s) => s.length,

  header(s) {
    const b = Buffer.allocUnsafe(60);
    writeId(b, 0, s.lastId);
    writeId(b, 16, s.firstId);
    writeId(b, 32, s.maxDeletedId);
    b.writeBigUInt64BE(BigInt.asUintN(64, s.entriesAdded), 48);
    b.writeUInt32BE(s.gidSeq, 56);
    return b;
  },

  writeRecords(s, w, all) {
    if (all) writeAll(s, w);
    else writeChanges(s, w);
    s.log = null;
  },

  decodeWhole: (b) => unpackWhole(streamCodec, b),

  loadBegin: (header) => loadBegin(header),
};

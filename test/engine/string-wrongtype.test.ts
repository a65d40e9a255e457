/**
 * String commands on paths the differential tests cannot reach yet: keys holding another type
 * (no command of ours creates one so far, so a TypedValue is planted directly) and the
 * proto-max-bulk-len limit on APPEND/SETRANGE (needs a small limit). Expected replies were
 * taken from redis-server 7.0.15 (LPUSH l a, then the same commands).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../../dist/engine/engine.js';
import { Client, type Transport } from '../../dist/engine/client.js';
import { execute } from '../../dist/engine/dispatch.js';
import { FAMILIES } from '../../dist/engine/commands/index.js';
import { loadConfig } from '../../dist/config.js';
import { Argv } from '../../dist/resp/argv.js';
import { T, type TypedValue } from '../../dist/engine/db.js';
import { Resp2Shapes } from '../../dist/resp/reply-sink.js';

/** Collects replies as RESP2 text. */
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

function setup(args: string[] = []) {
  const eng = new Engine(loadConfig(args, {}), FAMILIES);
  const out = new Capture();
  const c = new Client(eng, transport, out, '127.0.0.1:1', '127.0.0.1:2');
  const run = (...args: Array<string | Buffer>): string => {
    out.text = '';
    execute(c, Argv.of(args), out);
    return out.text;
  };
  return { eng, c, run };
}

const LIST: TypedValue = { type: T.LIST, encoding: () => 'quicklist' };
const WT = '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n';

describe('string commands on a key of another type', () => {
  const { c, run } = setup();
  const plant = () => c.db.set('l', LIST);

  it('replies like redis-server', () => {
    plant();
    const cases: Array<[string[], string]> = [
      [['GET', 'l'], WT],
      [['SET', 'l', 'v', 'GET'], WT],
      [['SET', 'l', 'v', 'NX', 'GET'], WT],
      [['SET', 'l', 'v', 'XX', 'GET'], WT],
      [['SET', 'l', 'v', 'GET', 'EX', 'abc'], '-ERR value is not an integer or out of range\r\n'],
      [['SET', 'l', 'v', 'GET', 'EX', '0'], "-ERR invalid expire time in 'set' command\r\n"],
      [['SET', 'l', 'v', 'GET', 'FOO'], '-ERR syntax error\r\n'],
      [['GETEX', 'l', 'EX', 'abc'], WT],
      [['GETEX', 'l', 'FOO'], '-ERR syntax error\r\n'],
      [['GETEX', 'l'], WT],
      [['GETDEL', 'l'], WT],
      [['GETSET', 'l', 'x'], WT],
      [['MGET', 'l', 'nokey'], '*2\r\n$-1\r\n$-1\r\n'],
      [['SETNX', 'l', 'x'], ':0\r\n'],
      [['MSETNX', 'l', 'x', 'm', 'y'], ':0\r\n'],
      [['APPEND', 'l', 'x'], WT],
      [['STRLEN', 'l'], WT],
      [['GETRANGE', 'l', 'a', 'b'], '-ERR value is not an integer or out of range\r\n'],
      [['GETRANGE', 'l', '0', '1'], WT],
      [['SUBSTR', 'l', '0', '1'], WT],
      [['SETRANGE', 'l', '0', 'x'], WT],
      [['SETRANGE', 'l', '-1', 'x'], '-ERR offset is out of range\r\n'],
      [['SETRANGE', 'l', '0', ''], WT],
      [['INCR', 'l'], WT],
      [['DECR', 'l'], WT],
      [['INCRBY', 'l', 'x'], '-ERR value is not an integer or out of range\r\n'],
      [['INCRBY', 'l', '1'], WT],
      [['DECRBY', 'l', '-9223372036854775808'], '-ERR decrement would overflow\r\n'],
      [['DECRBY', 'l', '1'], WT],
      [['INCRBYFLOAT', 'l', 'x'], WT],
      [['INCRBYFLOAT', 'l', '1'], WT],
      [['LCS', 'l', 'a'], '-ERR The specified keys must contain string values\r\n'],
      [['LCS', 'a', 'l', 'FOO'], '-ERR The specified keys must contain string values\r\n'],
    ];
    for (const [cmd, want] of cases) assert.equal(run(...cmd), want, cmd.join(' '));
    // None of the failed commands replaced the list.
    assert.equal(c.db.get('l')?.value, LIST);
  });

  it('plain SET, MSET and SETEX overwrite it', () => {
    plant();
    assert.equal(run('SET', 'l', 'v'), '+OK\r\n');
    assert.equal(run('GET', 'l'), '$1\r\nv\r\n');
    plant();
    assert.equal(run('MSET', 'l', 'w'), '+OK\r\n');
    assert.equal(run('GET', 'l'), '$1\r\nw\r\n');
    plant();
    assert.equal(run('SETEX', 'l', '100', 'x'), '+OK\r\n');
    assert.equal(run('GET', 'l'), '$1\r\nx\r\n');
    plant();
    assert.equal(run('SET', 'l', 'y', 'XX'), '+OK\r\n');
    assert.equal(run('GET', 'l'), '$1\r\ny\r\n');
  });
});

describe('proto-max-bulk-len limits APPEND and SETRANGE', () => {
  const { run } = setup(['--proto-max-bulk-len', '1mb']);
  const TOO_BIG = '-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n';

  it('refuses a result over the limit and accepts one at it', () => {
    assert.equal(run('SET', 'k', Buffer.alloc(1024 * 1024 - 1, 97)), '+OK\r\n');
    assert.equal(run('APPEND', 'k', 'xy'), TOO_BIG);
    assert.equal(run('APPEND', 'k', 'x'), ':1048576\r\n');
    assert.equal(run('APPEND', 'k', ''), ':1048576\r\n');
    assert.equal(run('APPEND', 'k', 'x'), TOO_BIG);
    assert.equal(run('SETRANGE', 'k', '1048576', 'x'), TOO_BIG);
    assert.equal(run('SETRANGE', 'k', '1048575', 'z'), ':1048576\r\n');
    assert.equal(run('SETRANGE', 'k', '1048576', ''), ':1048576\r\n');
    assert.equal(run('SETRANGE', 'n', '1048576', 'x'), TOO_BIG);
    assert.equal(run('SETRANGE', 'n', '1048575', 'x'), ':1048576\r\n');
    assert.equal(run('STRLEN', 'n'), ':1048576\r\n');
    assert.equal(run('GETRANGE', 'k', '-2', '-1'), '$2\r\naz\r\n');
  });

  it('limits the LCS table', () => {
    // (512+1)*(512+1)*4 bytes > 1 MB
    run('SET', 'a', Buffer.alloc(512, 97));
    run('SET', 'b', Buffer.alloc(512, 97));
    assert.equal(run('LCS', 'a', 'b', 'LEN'), '-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n');
    run('SET', 'b', Buffer.alloc(500, 97));
    assert.equal(run('LCS', 'a', 'b', 'LEN'), ':500\r\n');
  });
});

describe('APPEND growable blocks never change a value another key still holds', () => {
  const { c, run } = setup();

  it('copies when the value does not end at the block end', () => {
    run('SET', 'a', Buffer.alloc(300, 97));
    run('APPEND', 'a', 'b'); // a now lives in a growable block
    const shared = c.db.get('a')!.value as Buffer;
    c.db.set('b', shared); // as a COPY that shares the immutable Buffer would
    run('APPEND', 'a', 'XYZ');
    run('APPEND', 'b', '123'); // must not overwrite the bytes a wrote
    assert.equal(run('GETRANGE', 'a', '-4', '-1'), '$4\r\nbXYZ\r\n');
    assert.equal(run('GETRANGE', 'b', '-4', '-1'), '$4\r\nb123\r\n');
    assert.equal(shared.length, 301);
    assert.equal(shared[300], 98);
    run('APPEND', 'a', '!');
    assert.equal(run('GETRANGE', 'a', '-5', '-1'), '$5\r\nbXYZ!\r\n');
    assert.equal(run('STRLEN', 'a'), ':305\r\n');
  });

  it('marks APPEND and SETRANGE results raw, and SET/INCR results not raw', () => {
    run('SET', 'r', 'x');
    assert.equal(c.db.get('r')!.raw, false);
    run('APPEND', 'r', 'y');
    assert.equal(c.db.get('r')!.raw, true);
    run('SET', 'r', '1');
    run('SETRANGE', 'r', '0', '2');
    assert.equal(c.db.get('r')!.raw, true);
    run('INCR', 'r');
    assert.equal(c.db.get('r')!.raw, false);
    run('SETRANGE', 's', '2', 'x');
    assert.equal(c.db.get('s')!.raw, true);
    run('APPEND', 't', 'new');
    assert.equal(c.db.get('t')!.raw, false);
  });
});

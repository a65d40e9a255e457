/**
 * Restart tests on real server processes: what a client wrote is there after a graceful stop
 * (SIGTERM) and after SIGKILL, in both durability modes; appendfsync no stores nothing; a
 * second process on the same directory refuses to start.
 *
 * Commands that other branches bring (EXPIRE, FLUSHDB, SWAPDB, MOVE, RENAME...) are tested
 * when the server knows them and skipped, saying so, when it does not yet.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dataDirs, startOurs, runOursToExit, type Proc } from '../helpers/server.js';
import { RawClient, encode } from '../helpers/resp-client.js';

const newDir = dataDirs('rs-restart-');

async function start(dir: string, mode: string): Promise<{ proc: Proc; c: RawClient }> {
  const proc = await startOurs(['--appendfsync', mode], {}, { dir });
  const c = await RawClient.connect(proc.port);
  return { proc, c };
}

async function stop(s: { proc: Proc; c: RawClient }, signal: NodeJS.Signals): Promise<void> {
  s.c.close();
  await s.proc.stop(signal);
}

const text = (b: Buffer) => b.toString('latin1');

/** True when the server answers "unknown command" for `name`. */
async function lacks(c: RawClient, ...args: string[]): Promise<boolean> {
  const r = text(await c.call(...args));
  return r.startsWith('-ERR unknown command');
}

for (const mode of ['always', 'everysec'] as const) {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    describe(`appendfsync ${mode}, restart after ${signal}`, () => {
      it('keeps strings of every database, binary-safe, with deletes and FLUSHALL applied', async () => {
        const dir = newDir();
        let s = await start(dir, mode);
        const bin = Buffer.from([0, 0xff, 13, 10, 0x80]);
        assert.equal(text(await s.c.call('SET', 'gone', 'x')), '+OK\r\n');
        assert.equal(text(await s.c.call('FLUSHALL')), '+OK\r\n');
        assert.equal(text(await s.c.call('SET', 'a', '1')), '+OK\r\n');
        assert.equal(text(await s.c.call('SET', Buffer.from('k\x00\xff', 'latin1'), bin)), '+OK\r\n');
        assert.equal(text(await s.c.call('SET', 'del', 'x')), '+OK\r\n');
        assert.equal(text(await s.c.call('DEL', 'del')), ':1\r\n');
        assert.equal(text(await s.c.call('SELECT', '9')), '+OK\r\n');
        assert.equal(text(await s.c.call('SET', 'a', 'nine')), '+OK\r\n');
        if (mode === 'everysec' && signal === 'SIGKILL') await new Promise((r) => setTimeout(r, 1200));
        await stop(s, signal);
        s = await start(dir, mode);
        assert.equal(text(await s.c.call('GET', 'a')), '$1\r\n1\r\n');
        assert.deepEqual(await s.c.call('GET', Buffer.from('k\x00\xff', 'latin1')), Buffer.concat([Buffer.from('$5\r\n'), bin, Buffer.from('\r\n')]));
        assert.equal(text(await s.c.call('GET', 'del')), '$-1\r\n');
        assert.equal(text(await s.c.call('GET', 'gone')), '$-1\r\n');
        assert.equal(text(await s.c.call('DBSIZE')), ':2\r\n');
        await s.c.call('SELECT', '9');
        assert.equal(text(await s.c.call('GET', 'a')), '$4\r\nnine\r\n');
        await stop(s, 'SIGTERM');
      });
    });
  }
}

describe('appendfsync always: the write-ahead journal', () => {
  it('replays acknowledged writes LMDB had not applied yet, ignoring a torn last frame; a graceful stop leaves no journal', async () => {
    const dir = newDir();
    let s = await start(dir, 'always');
    // Pipelined, then killed at once: the journal has them all, LMDB maybe not.
    const n = 300;
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) parts.push(Buffer.from(`*3\r\n$3\r\nSET\r\n$${String(i).length + 2}\r\nk:${i}\r\n$3\r\nv${String(i % 10)}x\r\n`));
    s.c.write(Buffer.concat(parts));
    for (let i = 0; i < n; i++) assert.equal(text(await s.c.next(10_000)), '+OK\r\n');
    assert.equal(text(await s.c.call('DEL', 'k:0')), ':1\r\n');
    await stop(s, 'SIGKILL');
    const journals = fs.readdirSync(dir).filter((f) => f.startsWith('journal.')).sort();
    assert.ok(journals.length > 0, 'a killed server leaves its journal');
    // A frame torn by the kill: a plausible header, then too few bytes, then garbage.
    const torn = Buffer.alloc(64, 0xab);
    torn.writeUInt32LE(0x314a5352, 0);
    torn.writeUInt32LE(1000, 4);
    fs.appendFileSync(path.join(dir, journals[journals.length - 1]), torn);
    s = await start(dir, 'always');
    assert.equal(text(await s.c.call('DBSIZE')), `:${n - 1}\r\n`);
    assert.equal(text(await s.c.call('GET', 'k:0')), '$-1\r\n');
    assert.equal(text(await s.c.call('GET', `k:${n - 1}`)), `$3\r\nv${(n - 1) % 10}x\r\n`);
    // Writes go on after the replay, and survive another kill.
    assert.equal(text(await s.c.call('SET', 'after', 'replay')), '+OK\r\n');
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always');
    assert.equal(text(await s.c.call('GET', 'after')), '$6\r\nreplay\r\n');
    assert.equal(text(await s.c.call('DBSIZE')), `:${n}\r\n`);
    await stop(s, 'SIGTERM');
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('journal.')), [], 'LMDB has everything: the journal is gone');
    // And everysec reads what always left (same store).
    s = await start(dir, 'everysec');
    assert.equal(text(await s.c.call('DBSIZE')), `:${n}\r\n`);
    await stop(s, 'SIGTERM');
  });
});

describe('appendfsync always: held replies', () => {
  it('a pipelining client whose input keeps arriving while its replies wait gets every reply, in order; request-reply clients alongside too', async () => {
    const dir = newDir();
    let s = await start(dir, 'always');
    const others = await Promise.all([0, 1, 2].map(() => RawClient.connect(s.proc.port)));
    // Megabytes of pipelined commands: the server reads them over several event-loop turns,
    // so input keeps arriving while the replies of what it read first wait for their journal
    // write (the connection then stops reading until they are released).
    const chunks = 4;
    const per = 25_000;
    const chunk = Buffer.concat(Array.from({ length: per }, () => encode(['INCR', 'piped'])));
    const sending = (async () => {
      for (let i = 0; i < chunks; i++) {
        s.c.write(chunk);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const rr = others.map(async (c, j) => {
      for (let i = 1; i <= 100; i++) assert.equal(text(await c.call('INCR', `rr:${j}`)), `:${i}\r\n`);
    });
    for (let i = 1; i <= chunks * per; i++) assert.equal(text(await s.c.next(10_000)), `:${i}\r\n`);
    await sending;
    await Promise.all(rr);
    for (const c of others) c.close();
    // Every reply meant durable: all of it survives a kill.
    await stop(s, 'SIGKILL');
    s = await start(dir, 'always');
    assert.equal(text(await s.c.call('GET', 'piped')), `$6\r\n${chunks * per}\r\n`);
    for (let j = 0; j < others.length; j++) assert.equal(text(await s.c.call('GET', `rr:${j}`)), '$3\r\n100\r\n');
    await stop(s, 'SIGTERM');
  });
});

describe('keyspace commands of other families persist (skipped while absent from this build)', () => {
  const mode = 'always';

  it('EXPIRE / PEXPIRE / PERSIST: TTLs survive, keys that expired while down are gone', async (t) => {
    const dir = newDir();
    let s = await start(dir, mode);
    if (await lacks(s.c, 'PEXPIRE', 'nokey', '100')) {
      await stop(s, 'SIGTERM');
      t.skip('PEXPIRE not in this build yet');
      return;
    }
    await s.c.call('SET', 'long', 'v');
    await s.c.call('PEXPIRE', 'long', '100000');
    await s.c.call('SET', 'short', 'v');
    await s.c.call('PEXPIRE', 'short', '300');
    await s.c.call('SET', 'p', 'v');
    await s.c.call('PEXPIRE', 'p', '100000');
    await s.c.call('PERSIST', 'p');
    await stop(s, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 400));
    s = await start(dir, mode);
    const pttl = Number(text(await s.c.call('PTTL', 'long')).slice(1));
    assert.ok(pttl > 90_000 && pttl <= 100_000, `PTTL ${pttl}`);
    assert.equal(text(await s.c.call('EXISTS', 'short')), ':0\r\n');
    assert.equal(text(await s.c.call('PTTL', 'p')), ':-1\r\n');
    await stop(s, 'SIGTERM');
  });

  it('FLUSHDB, SWAPDB, MOVE and RENAME survive', async (t) => {
    const dir = newDir();
    let s = await start(dir, mode);
    for (const cmd of [['FLUSHDB'], ['SWAPDB', '0', '0'], ['MOVE', 'nokey', '1'], ['RENAME', 'nokey', 'x']]) {
      if (await lacks(s.c, ...cmd)) {
        await stop(s, 'SIGTERM');
        t.skip(`${cmd[0]} not in this build yet`);
        return;
      }
    }
    await s.c.call('SELECT', '1');
    await s.c.call('SET', 'one', '1');
    await s.c.call('FLUSHDB');
    await s.c.call('SET', 'after', '1');
    await s.c.call('SELECT', '0');
    await s.c.call('SET', 'zero', '0');
    await s.c.call('SET', 'mv', 'm');
    await s.c.call('MOVE', 'mv', '2');
    await s.c.call('SET', 'old', 'r');
    await s.c.call('RENAME', 'old', 'new');
    await s.c.call('SWAPDB', '0', '1');
    await stop(s, 'SIGKILL');
    s = await start(dir, mode);
    assert.equal(text(await s.c.call('GET', 'after')), '$1\r\n1\r\n');
    assert.equal(text(await s.c.call('GET', 'one')), '$-1\r\n');
    await s.c.call('SELECT', '1');
    assert.equal(text(await s.c.call('GET', 'zero')), '$1\r\n0\r\n');
    assert.equal(text(await s.c.call('GET', 'new')), '$1\r\nr\r\n');
    assert.equal(text(await s.c.call('EXISTS', 'old')), ':0\r\n');
    await s.c.call('SELECT', '2');
    assert.equal(text(await s.c.call('GET', 'mv')), '$1\r\nm\r\n');
    await stop(s, 'SIGTERM');
  });
});

describe('appendfsync no', () => {
  it('writes nothing to the data directory and keeps nothing across a restart', async () => {
    const dir = newDir();
    let s = await start(dir, 'no');
    await s.c.call('SET', 'a', '1');
    await stop(s, 'SIGTERM');
    // The keyspace store wrote nothing (the REST tokens, search indexes and queue keep their
    // own files, whatever appendfsync says).
    const others = new Set(['rest-tokens.json', 'search', 'qstash']);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => !others.has(f)), []);
    s = await start(dir, 'no');
    assert.equal(text(await s.c.call('GET', 'a')), '$-1\r\n');
    await stop(s, 'SIGTERM');
  });
});

describe('one owner per data directory', () => {
  it('a second process on the same directory refuses to start with a clear message', async () => {
    const dir = newDir();
    const s = await start(dir, 'always');
    const r = await runOursToExit(['--appendfsync', 'always'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.output, new RegExp(`data directory ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another server process \\(pid ${s.proc.proc.pid}\\)`));
    // The owner is unaffected.
    assert.equal(text(await s.c.call('SET', 'k', 'v')), '+OK\r\n');
    await stop(s, 'SIGKILL');
    // A lock left by a killed owner is stale: the next start takes it over.
    const s2 = await start(dir, 'always');
    assert.equal(text(await s2.c.call('GET', 'k')), '$1\r\nv\r\n');
    await stop(s2, 'SIGTERM');
    assert.equal(fs.existsSync(path.join(dir, 'redstash.lock')), false, 'lock released on a clean stop');
  });
});

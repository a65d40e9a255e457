/**
 * maxmemory-clients (client eviction) against redis-server 7.0.15: the same scenario on both
 * servers (a query buffer left holding most of a big command, a MULTI queue growing, CLIENT
 * NO-EVICT) must close the same connections and count them alike in INFO evicted_clients.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { encodeCmd } from '../diff/harness.js';

let ours: Proc;
let redis: Proc;

withBothServers((o, r) => { ours = o; redis = r; });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A socket that records whether the server closed it. */
function socket(port: number): Promise<{ s: net.Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const s = net.connect(port, '127.0.0.1', () => resolve({ s, closed: () => closed }));
    s.on('close', () => { closed = true; });
    s.on('error', () => {});
    s.on('data', () => {});
    s.once('error', reject);
  });
}

async function stat(admin: RawClient, name: string): Promise<string> {
  const info = (await admin.call('INFO', 'stats')).toString('latin1');
  return new RegExp(`${name}:(\\d+)`).exec(info)![1];
}

async function waitClosed(x: { closed: () => boolean }): Promise<boolean> {
  for (let i = 0; i < 30 && !x.closed(); i++) await sleep(50);
  return x.closed();
}

async function scenario(port: number): Promise<string[]> {
  const seen: string[] = [];
  const admin = await RawClient.connect(port);
  await admin.call('CONFIG', 'RESETSTAT');
  seen.push(String(await admin.call('CLIENT', 'NO-EVICT', 'on')));
  seen.push(String(await admin.call('CONFIG', 'SET', 'maxmemory-clients', '1mb')));

  // A client whose query buffer holds 1.5 MB of an unfinished SET is evicted.
  const a = await socket(port);
  a.s.write('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n');
  a.s.write(Buffer.alloc(1_500_000, 0x61));
  seen.push(`query buffer: ${await waitClosed(a) ? 'evicted' : 'kept'}`);
  seen.push(`evicted_clients:${await stat(admin, 'evicted_clients')}`);

  // A MULTI queue of 8 x 200 KB: evicted while queueing.
  const m = await socket(port);
  m.s.write(encodeCmd(['MULTI']));
  for (let i = 0; i < 8; i++) m.s.write(encodeCmd(['SET', `m${i}`, Buffer.alloc(200_000, 0x62)]));
  seen.push(`multi queue: ${await waitClosed(m) ? 'evicted' : 'kept'}`);
  seen.push(`evicted_clients:${await stat(admin, 'evicted_clients')}`);

  // CLIENT NO-EVICT on: kept with the same big query buffer, and finishes its command.
  const b = await socket(port);
  b.s.write(encodeCmd(['CLIENT', 'NO-EVICT', 'on']));
  b.s.write('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n');
  b.s.write(Buffer.alloc(1_500_000, 0x61));
  await sleep(300);
  seen.push(`no-evict: ${b.closed() ? 'evicted' : 'kept'}`);
  b.s.write(Buffer.alloc(500_000, 0x61));
  b.s.write('\r\n');
  await sleep(200);
  seen.push(`strlen after: ${String(await admin.call('STRLEN', 'k')).trim()}`);
  seen.push(`evicted_clients:${await stat(admin, 'evicted_clients')}`);

  // Off: nothing is evicted.
  seen.push(String(await admin.call('CONFIG', 'SET', 'maxmemory-clients', '0')));
  const c = await socket(port);
  c.s.write('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n');
  c.s.write(Buffer.alloc(1_500_000, 0x61));
  await sleep(300);
  seen.push(`limit off: ${c.closed() ? 'evicted' : 'kept'}`);
  for (const x of [a, m, b, c]) x.s.destroy();
  admin.close();
  return seen;
}

describe('maxmemory-clients', () => {
  it('evicts the same clients as redis-server, with the same evicted_clients', async () => {
    const theirs = await scenario(redis.port);
    const mine = await scenario(ours.port);
    assert.deepEqual(mine, theirs);
    assert.ok(theirs.includes('query buffer: evicted') && theirs.includes('no-evict: kept'), theirs.join('\n'));
  });

  it('percentages of maxmemory, the 128 KB floor, CONFIG GET', async () => {
    const admin = await RawClient.connect(ours.port);
    for (const v of ['10%', '0', '1gb']) assert.equal(String(await admin.call('CONFIG', 'SET', 'maxmemory-clients', v)), '+OK\r\n');
    assert.equal(String(await admin.call('CONFIG', 'SET', 'maxmemory-clients', '101%')),
      "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100\r\n");
    await admin.call('CONFIG', 'SET', 'maxmemory-clients', '0');
    admin.close();
  });
});

/**
 * Client-side caching behaviour that a byte-for-byte comparison with Redis cannot pin down
 * (test/diff/tracking.test.ts covers the rest): tracking-table-max-keys evicts tracked keys
 * (Redis picks them at random; here the oldest go first) and invalidates them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startOurs, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

let ours: Proc;

before(async () => {
  ours = await startOurs(['--appendfsync', 'no']);
});
after(async () => {
  await ours?.stop();
});

function infoField(info: Buffer, name: string): number {
  const m = new RegExp(`${name}:(\\d+)`).exec(info.toString());
  assert.ok(m, name);
  return Number(m[1]);
}

describe('client-side caching', () => {
  it('tracking-table-max-keys evicts the oldest tracked keys with an invalidation', async () => {
    const a = await RawClient.connect(ours.port);
    const admin = await RawClient.connect(ours.port);
    try {
      await a.call('HELLO', '3');
      assert.equal(String(await admin.call('CONFIG', 'SET', 'tracking-table-max-keys', '2')), '+OK\r\n');
      assert.equal(String(await a.call('CLIENT', 'TRACKING', 'on')), '+OK\r\n');
      await a.call('MGET', 'k1', 'k2', 'k3');
      // Before the next command (anyone's) the table is brought back under the limit: k1 goes.
      assert.equal(infoField(await admin.call('INFO', 'stats'), 'tracking_total_keys'), 2);
      assert.equal(String(await a.next()), '>2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk1\r\n');
      assert.equal(infoField(await admin.call('INFO', 'stats'), 'tracking_total_items'), 2);
      // k2 and k3 are still tracked: a write invalidates them.
      await admin.call('SET', 'k2', 'v');
      assert.equal(String(await a.next()), '>2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk2\r\n');
      // Off: no more tracking clients, and the INFO counters say so.
      await a.call('CLIENT', 'TRACKING', 'off');
      assert.equal(infoField(await admin.call('INFO', 'clients'), 'tracking_clients'), 0);
    } finally {
      await admin.call('CONFIG', 'SET', 'tracking-table-max-keys', '1000000');
      a.close();
      admin.close();
    }
  });

  it('a RESP2 client without REDIRECT gets no invalidation, and its replies stay clean', async () => {
    const a = await RawClient.connect(ours.port);
    const b = await RawClient.connect(ours.port);
    try {
      await a.call('CLIENT', 'TRACKING', 'on');
      await a.call('GET', 'r2');
      await b.call('SET', 'r2', 'x');
      assert.equal(String(await a.call('GET', 'r2')), '$1\r\nx\r\n');
      assert.equal(a.leftover().length, 0);
    } finally {
      a.close();
      b.close();
    }
  });
});

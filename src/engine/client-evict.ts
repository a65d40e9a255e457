/**
 * Client eviction (maxmemory-clients) as Redis 7.0 does it: when the memory of all normal and
 * pub/sub connections together reaches the limit, connections are closed, those using the most
 * first (Redis's power-of-two memory buckets, the topmost first), until the total is under it.
 * CLIENT NO-EVICT exempts a connection, but its memory still counts. The limit is a byte count
 * or a percentage of maxmemory, and never under 128 KB (so that one can still talk to the
 * server). Checked after input and output (a transport calls clientMemoryChanged) and by cron.
 */
import type { Client } from './client.js';
import type { Engine } from './engine.js';
import { CLIENT_BASE } from './memory.js';

/** Redis's getClientEvictionLimit: 0 = no client eviction. */
export function clientEvictionLimit(setting: string, maxmemory: number): number {
  let limit: number;
  if (setting.endsWith('%')) {
    if (maxmemory <= 0) return 0;
    limit = Math.floor((maxmemory * Number(setting.slice(0, -1))) / 100);
  } else {
    limit = Number(setting);
    if (!(limit > 0)) return 0;
  }
  return Math.max(limit, 128 * 1024);
}

/**
 * A connection's memory (CLIENT LIST tot-mem without the running command's arguments): its
 * struct, query buffer (received bytes and free room), reply bytes not yet written and MULTI queue.
 */
export function clientMemory(c: Client): number {
  const t = c.transport;
  let m = CLIENT_BASE + t.inputBytes() + t.outputBytes();
  const b = t.bufferStats?.();
  if (b !== undefined) m += b.qbufFree + b.obl;
  if (c.multi !== null) for (const q of c.multi) m += q.argv.size();
  return m;
}

/** Redis's getMemUsageBucket: log2 buckets from 32 KB (bucket 0) to 4 GB. */
function bucket(mem: number): number {
  const bits = mem > 0 ? 32 - Math.clz32(Math.min(mem, 2 ** 32 - 1)) : 0;
  return Math.min(Math.max(bits, 15), 33) - 15;
}

let scheduled = false;

/** A connection's buffers grew: check the limit before the event loop sleeps (as beforeSleep). */
export function clientMemoryChanged(eng: Engine): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    evictClients(eng);
  });
}

/** Redis's evictClients. */
export function evictClients(eng: Engine): void {
  const limit = eng.clientMemLimit;
  if (limit === 0) return;
  let total = 0;
  const candidates: { c: Client; mem: number }[] = [];
  for (const c of eng.clients.values()) {
    if (c.closed || c.transport.kind !== 'tcp') continue;
    const mem = clientMemory(c);
    total += mem;
    if (!c.noEvict) candidates.push({ c, mem });
  }
  if (total < limit) return;
  candidates.sort((a, b) => bucket(b.mem) - bucket(a.mem) || b.mem - a.mem);
  for (const { c, mem } of candidates) {
    if (total < limit) return;
    console.warn(`Evicting client: id=${c.id} addr=${c.addr} tot-mem=${mem} (maxmemory-clients ${limit}, clients ${total})`);
    c.transport.close(false);
    total -= mem;
    eng.stats.evictedClients++;
  }
  if (total >= limit) console.warn('Over client maxmemory after evicting all evictable clients');
}

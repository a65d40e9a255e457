/** RDB tests' servers: redis-server loading a file at start-up beside ours importing it. */
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';

/**
 * redis-server loading `file` at start-up (a copy in a directory under `tmp`) and ours importing
 * it without persistence, DEBUG enabled on both: a client of each. The servers and clients go
 * onto `procs` and `clients`, which the caller stops.
 */
export async function bothLoad(file: string, tmp: string, procs: Proc[], clients: Redis[]): Promise<{ rc: Redis; oc: Redis }> {
  const dir = fs.mkdtempSync(path.join(tmp, 'redis-'));
  fs.copyFileSync(file, path.join(dir, 'dump.rdb'));
  const r = await startRedis(['--dir', dir, '--dbfilename', 'dump.rdb', '--enable-debug-command', 'yes']);
  procs.push(r);
  const ours = await startOurs(['--appendfsync', 'no', '--enable-debug-command', 'yes', '--import-rdb', file]);
  procs.push(ours);
  const rc = new Redis(r.port, { maxRetriesPerRequest: 0 });
  const oc = new Redis(ours.port, { maxRetriesPerRequest: 0 });
  clients.push(rc, oc);
  rc.on('error', () => undefined);
  oc.on('error', () => undefined);
  return { rc, oc };
}

/**
 * A test file's scratch: a temporary directory (`prefix` + random), and lists for the servers
 * and clients the file starts; all are stopped and removed after the file's tests.
 */
export function scratch(prefix: string): { tmp: string; procs: Proc[]; clients: Redis[] } {
  const s = { tmp: fs.mkdtempSync(path.join(os.tmpdir(), prefix)), procs: [] as Proc[], clients: [] as Redis[] };
  after(async () => {
    for (const c of s.clients) c.disconnect();
    await Promise.all(s.procs.map((p) => p.stop()));
    fs.rmSync(s.tmp, { recursive: true, force: true });
  });
  return s;
}

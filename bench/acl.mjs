#!/usr/bin/env node
/**
 * ACL permission checks (tinybench), on the compiled code in dist/: what the dispatcher pays
 * per command for a restricted user (key patterns, read/write split, selectors) against the
 * default user (one boolean test in the dispatcher; Acl.check itself shown for scale).
 *
 *   npm run build && node bench/acl.mjs
 *   BENCH_TIME=2000 node bench/acl.mjs      # ms per task (default 1000)
 */
import { Bench } from 'tinybench';
import { Registry } from '../dist/engine/registry.js';
import { FAMILIES } from '../dist/engine/commands/index.js';
import { Acl } from '../dist/engine/acl.js';
import { Argv } from '../dist/resp/argv.js';

const TIME = Number(process.env.BENCH_TIME ?? 1000);
const N = 1000; // checks per task iteration

const reg = new Registry(FAMILIES);
const acl = new Acl(reg);
const app = acl.create('app');
acl.apply(app, ['on', '~app:*', '&app:*', '+@all', '-@dangerous']);
const sel = acl.create('sel');
acl.apply(sel, ['on', '%R~app:*', '+@all', '-@dangerous', '(%W~app:* +@write)']);

const cases = [
  ['default user, GET', acl.defaultUser, ['GET', 'app:k']],
  ['~app:*, GET', app, ['GET', 'app:k']],
  ['~app:*, MSET 2 keys', app, ['MSET', 'app:a', '1', 'app:b', '2']],
  ['~app:*, XREAD (keyword spec)', app, ['XREAD', 'COUNT', '1', 'STREAMS', 'app:s', '0']],
  ['~app:*, ZUNION (numkeys spec)', app, ['ZUNION', '2', 'app:a', 'app:b']],
  ['%R~ + (%W~) selector, SET (getkeys proc)', sel, ['SET', 'app:k', 'v']],
  ['~app:*, PUBLISH', app, ['PUBLISH', 'app:c', 'm']],
];

const bench = new Bench({ time: TIME });
for (const [name, user, args] of cases) {
  const argv = Argv.of(args);
  const def = reg.lookup(argv);
  if (acl.check(user, def, argv) !== null) throw new Error(`${name}: refused`);
  bench.add(name, () => {
    for (let i = 0; i < N; i++) acl.check(user, def, argv);
  });
}
await bench.run();
console.log(`ACL checks, ns per check (${N} per iteration):`);
for (const t of bench.tasks) console.log(`  ${t.name.padEnd(44)} ${(t.result.latency.mean * 1e6 / N).toFixed(1)} ns`);

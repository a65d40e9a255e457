/**
 * Runs every script of test/diff/cases/*.ts against our server and a real redis-server,
 * comparing replies byte for byte. Each script starts on fresh connections after FLUSHALL.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOurs, startRedis, type Proc } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { runScript, type Script } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const caseDir = path.join(here, 'cases');
const files = fs.readdirSync(caseDir).filter((f) => f.endsWith('.js')).sort();
const only = process.env.DIFF_ONLY; // e.g. DIFF_ONLY=string to run one case file

let ours: Proc;
let redis: Proc;

before(async () => {
  [ours, redis] = await Promise.all([startOurs(['--appendfsync', 'no']), startRedis()]);
});
after(async () => {
  await Promise.all([ours?.stop(), redis?.stop()]);
});

for (const file of files) {
  const name = file.replace(/\.js$/, '');
  if (only && !only.split(',').includes(name)) continue;
  const scripts: Script[] = (await import(path.join(caseDir, file))).default;
  describe(`differential: ${name}`, () => {
    for (const script of scripts) {
      it(script.name, { skip: script.skip }, async () => {
        for (const p of [ours, redis]) {
          const admin = await RawClient.connect(p.port);
          await admin.call('FLUSHALL');
          admin.close();
        }
        const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        try {
          const m = await runScript(a, b, script);
          assert.equal(m, null, m ? `step ${m.step} (${m.cmd}):\n  ours:  ${m.ours}\n  redis: ${m.redis}` : '');
        } finally {
          a.close();
          b.close();
        }
      });
    }
  });
}

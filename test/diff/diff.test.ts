/**
 * Runs every script of test/diff/cases/*.ts against our server and a real redis-server,
 * comparing replies byte for byte. Each script starts on fresh connections after FLUSHALL.
 * The whole corpus runs twice: over RESP2 connections, then over connections that sent
 * HELLO 3 first (RESP3 replies compared byte for byte too). DIFF_RESP=2 or 3 runs one pass.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';
import { runScript, type Script } from './harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const caseDir = path.join(here, 'cases');
const files = fs.readdirSync(caseDir).filter((f) => f.endsWith('.js')).sort();
const only = process.env.DIFF_ONLY; // e.g. DIFF_ONLY=string to run one case file
const protocols = process.env.DIFF_RESP ? [Number(process.env.DIFF_RESP)] : [2, 3];

const HELLO3 = { cmd: ['HELLO', '3'], compare: 'hello' as const };

let ours: Proc;
let redis: Proc;

withBothServers((o, r) => { ours = o; redis = r; });

for (const proto of protocols) for (const file of files) {
  const name = file.replace(/\.js$/, '');
  if (only && !only.split(',').includes(name)) continue;
  const scripts: Script[] = (await import(path.join(caseDir, file))).default;
  describe(`differential${proto === 3 ? ' (RESP3)' : ''}: ${name}`, () => {
    for (const script of scripts) {
      it(script.name, { skip: script.skip ?? (proto === 3 ? script.skip3 : undefined) }, async () => {
        for (const p of [ours, redis]) {
          const admin = await RawClient.connect(p.port);
          await admin.call('FLUSHALL');
          admin.close();
        }
        const [a, b] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
        try {
          const m = await runScript(a, b, proto === 3 ? { ...script, steps: [HELLO3, ...script.steps] } : script);
          assert.equal(m, null, m ? `step ${m.step} (${m.cmd}):\n  ours:  ${m.ours}\n  redis: ${m.redis}` : '');
        } finally {
          a.close();
          b.close();
        }
      });
    }
  });
}

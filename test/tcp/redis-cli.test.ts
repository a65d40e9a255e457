/**
 * redis-cli (Debian's redis-tools) against our server, with the same invocations run against
 * a real redis-server and their outputs compared: plain commands, commands read from stdin,
 * -x (last argument from stdin), and --pipe mass insertion of 100,000 SET commands.
 */
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { type Proc, withBothServers } from '../helpers/server.js';
import { RawClient } from '../helpers/resp-client.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(port: number, args: string[], input?: Buffer | string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d.toString('latin1'); });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('error', reject);
    const t = setTimeout(() => p.kill('SIGKILL'), 60000);
    p.on('close', (code) => { clearTimeout(t); resolve({ code, stdout, stderr }); });
    p.stdin.on('error', () => {});
    p.stdin.end(input ?? '');
  });
}

let ours: Proc;
let redis: Proc;

/** The same redis-cli invocation on both servers. */
async function both(args: string[], input?: Buffer | string): Promise<[Run, Run]> {
  return Promise.all([cli(ours.port, args, input), cli(redis.port, args, input)]);
}

withBothServers((o, r) => { ours = o; redis = r; });
beforeEach(async () => {
  await both(['FLUSHALL']);
});

describe('redis-cli', () => {
  it('runs plain commands with the same output as against redis-server', async () => {
    const cmds = [
      ['PING'], ['SET', 'a', 'hello world'], ['GET', 'a'], ['GET', 'missing'], ['DEL', 'a', 'b'],
      ['INCR', 'n'], ['INCR', 'n'], ['MSET', 'x', '1', 'y', '2'], ['GET', 'y'], ['NOSUCH', 'arg'], ['GET'],
      ['MULTI'], ['PING', 'é'],
    ];
    for (const c of cmds) {
      for (const mode of [[], ['--no-raw'], ['--raw']]) {
        const [o, r] = await both([...mode, ...c]);
        assert.deepEqual(o, r, `redis-cli ${[...mode, ...c].join(' ')}`);
      }
    }
  });

  it('reads commands from stdin', async () => {
    const input = 'SET a 1\nINCR a\nGET a\nSET "b c" \'d e\'\nGET "b c"\nDEL a\nGET a\nNOSUCH\nPING\n';
    const [o, r] = await both([], input);
    assert.deepEqual(o, r);
    assert.equal(o.stdout, 'OK\n2\n2\nOK\nd e\n1\n\nERR unknown command \'NOSUCH\', with args beginning with: \n\nPONG\n');
  });

  it('-x takes the last argument from stdin, binary-safe', async () => {
    const data = Buffer.concat([Buffer.from('line one\nline two\r\n'), Buffer.from([0, 1, 2, 255, 254, 13, 10])]);
    const [o, r] = await both(['-x', 'SET', 'blob'], data);
    assert.deepEqual(o, r);
    assert.equal(o.stdout.trim(), 'OK');
    const c = await RawClient.connect(ours.port);
    try {
      const reply = await c.call('GET', 'blob');
      assert.deepEqual(reply, Buffer.concat([Buffer.from(`$${data.length}\r\n`), data, Buffer.from('\r\n')]));
    } finally {
      c.close();
    }
  });

  it('--pipe inserts 100,000 SET commands, then DBSIZE is 100000', async () => {
    const n = 100000;
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = `key:${i}`;
      const v = `value:${i}:${'x'.repeat(i % 17)}`;
      parts.push(`*3\r\n$3\r\nSET\r\n$${k.length}\r\n${k}\r\n$${v.length}\r\n${v}\r\n`);
    }
    const input = Buffer.from(parts.join(''));
    const run = await cli(ours.port, ['--pipe'], input);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /All data transferred/);
    assert.match(run.stdout, /errors: 0, replies: 100000/);
    const dbsize = await cli(ours.port, ['DBSIZE']);
    assert.equal(dbsize.stdout.trim(), String(n));
    const sample = await cli(ours.port, ['GET', 'key:99999']);
    assert.equal(sample.stdout.trim(), `value:99999:${'x'.repeat(99999 % 17)}`);
  });

  it('--pipe reports errors as redis-server does', async () => {
    const input = '*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR\r\n$1\r\na\r\n*1\r\n$3\r\nGET\r\n*2\r\n$6\r\nNOSUCH\r\n$1\r\nx\r\n';
    const [o, r] = await both(['--pipe'], input);
    assert.equal(o.code, r.code);
    assert.match(o.stdout, /errors: 2, replies: 4/);
    // The lines naming the errors are the same (the rest holds a random ECHO marker).
    const errs = (s: string) => s.split('\n').filter((l) => l.startsWith('ERR')).join('\n');
    assert.equal(errs(o.stdout), errs(r.stdout));
  });

  it('-r repeats a command', async () => {
    const [o, r] = await both(['-r', '50', 'INCR', 'counter']);
    assert.deepEqual(o, r);
    assert.equal(o.stdout.trim().split('\n').at(-1), '50');
  });
});

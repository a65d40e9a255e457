/**
 * Malformed HTTP on the REST port, sent as raw bytes. What gets an answer from us gets a 4xx
 * with a JSON error; what uWebSockets.js 20.30 rejects in its own parser is cut at once, or
 * held until its fixed HTTP idle timeout (10 s, checked every 4 s): that build has no error
 * responses and no hook before a request is parsed (README, "Malformed HTTP"). Either way
 * the connection ends within a bound, nothing crashes, and other clients are served meanwhile.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startOurs, type Proc } from '../helpers/server.js';
import { TOKEN, TOKEN_ARGS } from './rest-helpers.js';

const AUTH = `Authorization: Bearer ${TOKEN}\r\n`;
const req = (line: string, headers = '') => Buffer.from(`${line}\r\nHost: x\r\n${AUTH}${headers}\r\n`, 'latin1');

interface Outcome { status: number | null; body: string; ms: number; }

/** Send bytes; the first response's status and body, or null once the server closes. */
function send(port: number, bytes: Buffer, limitMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let data = Buffer.alloc(0);
    const s = net.connect({ port, host: '127.0.0.1' }, () => s.write(bytes));
    const done = (o: Omit<Outcome, 'ms'>) => { clearTimeout(timer); s.destroy(); resolve({ ...o, ms: Date.now() - t0 }); };
    const timer = setTimeout(() => done({ status: -1, body: 'still open' }), limitMs);
    s.on('data', (d) => {
      data = Buffer.concat([data, d]);
      const text = data.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text);
      if (head >= 0 && len !== null && data.length >= head + 4 + Number(len[1])) {
        done({ status: Number(text.slice(9, 12)), body: text.slice(head + 4, head + 4 + Number(len[1])) });
      }
    });
    s.on('error', () => { /* a reset counts as closed */ });
    s.on('close', () => done({ status: null, body: '' }));
  });
}

describe('malformed HTTP', () => {
  let srv: Proc;
  before(async () => { srv = await startOurs(TOKEN_ARGS); });
  after(async () => { await srv.stop(); });

  it('what reaches us is answered at once: 400 or 413 with a JSON error, raw bytes as bytes', async () => {
    const cases: [string, Buffer, number][] = [
      // Raw bytes in a path segment are the key's bytes (binary-safe), as percent-encoded ones.
      ['non-UTF-8 path', Buffer.concat([Buffer.from('GET /get/'), Buffer.from([0xff, 0xfe]), req(' HTTP/1.1')]), 200],
      ['non-UTF-8 header value', req('GET /ping HTTP/1.1', 'X-A: \xff\xfe\r\n'), 200],
      ['unknown command', req('GET /nosuchcmd HTTP/1.1'), 400],
      ['bad percent-encoding', req('GET /get/%zz HTTP/1.1'), 400],
      ['body over max-request-size', req('POST / HTTP/1.1', 'Content-Length: 20000000\r\n'), 413],
    ];
    for (const [name, bytes, status] of cases) {
      const o = await send(srv.httpPort, bytes, 2000);
      assert.equal(o.status, status, name);
      const body = JSON.parse(o.body);
      assert.equal(status === 200 ? 'result' in body : typeof body.error === 'string', true, name);
      assert.ok(o.ms < 1000, `${name}: ${o.ms} ms`);
    }
  });

  it('what the HTTP parser refuses ends within its bound, and other clients are served meanwhile', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join('');
    // [name, bytes, bound in ms]: cut at once by uWS (1 s), or held to its idle timeout (16 s).
    const cases: [string, Buffer, number][] = [
      ['1 MB header', req('GET /ping HTTP/1.1', `X-A: ${'a'.repeat(1 << 20)}\r\n`), 1000],
      ['1 MB URL', req(`GET /${'a'.repeat(1 << 20)} HTTP/1.1`), 1000],
      ['2,000 headers', req('GET /ping HTTP/1.1', many(2000)), 1000],
      ['10 GB Content-Length', Buffer.concat([req('POST / HTTP/1.1', 'Content-Length: 10000000000\r\n'), Buffer.from('["PING"]')]), 1000],
      ['Content-Length not a number', req('POST / HTTP/1.1', 'Content-Length: abc\r\n'), 1000],
      ['NUL in the path', req('GET /pi\0ng HTTP/1.1'), 16000],
      ['NUL in a header', req('GET /ping HTTP/1.1', 'X-A: a\0b\r\n'), 16000],
      ['TLS ClientHello', Buffer.from('16030100a5010000a10303' + '00'.repeat(40), 'hex'), 16000],
      ['HTTP/0.9 request line', Buffer.from('GET /\r\n'), 16000],
      ['space in the URL', req('GET /get/a b HTTP/1.1'), 16000],
      ['60 headers (over uWS\'s 50)', req('GET /ping HTTP/1.1', many(60)), 16000],
    ];
    const pending = cases.map(([, bytes, bound]) => send(srv.httpPort, bytes, bound + 2000));
    // While those are open, a well-formed request on another connection is served.
    const ok = await send(srv.httpPort, req('GET /ping HTTP/1.1', 'Connection: close\r\n'), 2000);
    assert.deepEqual([ok.status, JSON.parse(ok.body)], [200, { result: 'PONG' }]);
    const outcomes = await Promise.all(pending);
    cases.forEach(([name, , bound], i) => {
      const o = outcomes[i];
      assert.notEqual(o.status, -1, `${name}: still open after ${o.ms} ms`);
      assert.ok(o.ms <= bound, `${name}: closed after ${o.ms} ms (bound ${bound})`);
    });
    const after = await send(srv.httpPort, req('GET /ping HTTP/1.1', 'Connection: close\r\n'), 2000);
    assert.equal(after.status, 200);
    assert.equal(srv.proc.exitCode, null);
  });
});

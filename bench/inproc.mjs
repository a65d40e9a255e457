/**
 * An engine in this process, for the in-process benchmarks (commands.mjs, lua-micro.mjs): the
 * build in `dist` (another one can be given: before/after), no persistence, one authenticated
 * client whose transport and replies go nowhere.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `dist`: a build directory (default ROOT/dist); `kind`: the client's transport kind. */
export async function inProcess(dist, kind = 'internal') {
  const DIST = pathToFileURL(path.resolve(dist ?? path.join(ROOT, 'dist'))).href;
  const { Engine } = await import(`${DIST}/engine/engine.js`);
  const { FAMILIES } = await import(`${DIST}/engine/commands/index.js`);
  const { MemoryOnly } = await import(`${DIST}/store/persistence.js`);
  const { loadConfig } = await import(`${DIST}/config.js`);
  const { Client } = await import(`${DIST}/engine/client.js`);
  const { execute, NULL_SINK } = await import(`${DIST}/engine/dispatch.js`);
  const { Argv } = await import(`${DIST}/resp/argv.js`);
  const engine = new Engine(loadConfig(['--port', '0', '--http-port', '-1', '--appendfsync', 'no'], {}), FAMILIES);
  engine.persistence = new MemoryOnly(engine);
  const transport = { kind, close() {}, requestFlush() {}, outputBytes: () => 0, inputBytes: () => 0, resume() {} };
  const client = new Client(engine, transport, NULL_SINK, '', '');
  client.authenticated = true;
  return { DIST, engine, client, execute, NULL_SINK, Argv };
}

/**
 * inProcess(dist) and its `turn(chunk)`: what connection.ts does with one read (parse every
 * command, execute each, one flush), with replies written by a RespWriter to a sink that drops
 * them (bench/pipe-ab.mjs, bench/getbig-ab.mjs).
 */
export async function pipeTurn(dist) {
  const { DIST, client, execute, Argv } = await inProcess(dist);
  const { RespParser, Parse } = await import(`${DIST}/resp/parser.js`);
  const { RespWriter } = await import(`${DIST}/resp/writer.js`);
  const out = new RespWriter();
  const sock = { write: () => true, writableLength: 0 };
  const parser = new RespParser();
  const argv = new Argv();
  const eng = client.engine;
  const turn = (b) => {
    parser.push(b, argv);
    let first = true;
    while (parser.next(argv) === Parse.OK) {
      if (!first) eng.clockNext = eng.lastClock;
      first = false;
      execute(client, argv, out);
    }
    eng.clockNext = -1;
    out.flush(sock);
  };
  return { engine: eng, turn };
}

/** An Argv (the build's class `Argv`) holding `words` (latin1 strings), as the parser would. */
export function argvOf(Argv, words) {
  const bufs = words.map((w) => Buffer.from(w, 'latin1'));
  const a = new Argv();
  a.reset(Buffer.concat(bufs));
  let p = 0;
  for (const b of bufs) {
    a.push(p, p + b.length);
    p += b.length;
  }
  return a;
}

/** CPU time of this process so far (all threads), in µs. */
export function cpuMicros() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

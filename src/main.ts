/**
 * Command-line entry: parse options, start the server, stop gracefully on SIGINT/SIGTERM.
 */
import { writeSync } from 'node:fs';
import { loadConfig, helpText, ConfigError } from './config.js';
import { createServer } from './app.js';
import { takeRdbArgs, importRdb, exportRdb, collectAfterImport, RDB_HELP } from './rdb/cli.js';

/** Options of the check mode (src/store/repair.ts): they run a check instead of the server. */
const CHECK_FLAGS = ['--check', '--repair'];
const CHECK_HELP = [
  '  --check',
  '      check the data directory (--dir): LMDB files, journal; print a report and exit (0 = no damage)',
  '  --repair',
  '      as --check, then cut a damaged journal at its last intact frame and rebuild an LMDB file',
  '      damaged inside a B-tree from the records it still holds (keeping copies), and exit',
].join('\n');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`${helpText()}\n${CHECK_HELP}\n${RDB_HELP}`);
    return;
  }
  const check = args.find((a) => CHECK_FLAGS.includes(a));
  let config;
  let rdb;
  try {
    rdb = takeRdbArgs(args);
    config = loadConfig(args.filter((a) => !CHECK_FLAGS.includes(a)));
  } catch (err) {
    // Config file errors in Redis's words and with its exit status.
    if (err instanceof ConfigError && err.redisStyle) {
      console.error(err.message);
      process.exit(1);
    }
    if (err instanceof ConfigError || (err instanceof Error && err.message.endsWith('needs a file name'))) {
      console.error(`error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (check !== undefined) {
    // Imported here: the check reads LMDB, which a server without persistence never loads.
    const { checkDataDir } = await import('./store/repair.js');
    process.exitCode = await checkDataDir(config.get('dir')!, check === '--repair');
    return;
  }
  let server;
  try {
    server = await createServer(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  if (rdb.importPath !== null || rdb.exportPath !== null) {
    // Before any client is served (this turn): a refused file leaves the data untouched.
    try {
      if (rdb.importPath !== null) {
        console.log(importRdb(server.engine, rdb.importPath));
        if (rdb.exportPath === null) console.log(`Heap collected after the import in ${Math.round(collectAfterImport())} ms`);
      }
      if (rdb.exportPath !== null) console.log(exportRdb(server.engine, rdb.exportPath));
    } catch (err) {
      console.error(`error: ${err instanceof Error ? err.message : err}`);
      await server.stop();
      process.exit(1);
    }
    if (rdb.exportPath !== null) {
      await server.stop();
      return;
    }
  }
  const bind = config.get('bind') ?? '127.0.0.1';
  console.log(`Ready to accept connections: RESP on ${bind}:${server.tcpPort} (pid ${process.pid})`);
  if (server.tokens !== null) {
    const t = server.tokens;
    console.log(`REST API on http://${bind.includes(':') ? `[${bind}]` : bind}:${server.httpPort}`);
    // Generated tokens are printed (the operator has to learn them); given ones are not echoed.
    const show = (v: string, src: string) => (src.startsWith('--') ? `(set by ${src})` : `${v} (${src})`);
    console.log(`  REST token:           ${show(t.token, t.tokenSource)}`);
    console.log(`  REST read-only token: ${show(t.readOnlyToken, t.readOnlySource)}`);
    const q = server.qstash;
    if (q !== null) {
      // Like `qstash dev`: what an app needs in its environment.
      console.log(`QStash API on http://${bind.includes(':') ? `[${bind}]` : bind}:${server.httpPort}/v2`);
      console.log(`  QSTASH_TOKEN=${q.tokenSource === '--qstash-token' ? '(set by --qstash-token)' : `${q.token} (${q.tokenSource})`}`);
      console.log(`  QSTASH_CURRENT_SIGNING_KEY=${q.currentKey}`);
      console.log(`  QSTASH_NEXT_SIGNING_KEY=${q.nextKey}`);
    }
  } else {
    console.log('REST API off (--http-port -1)');
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`Received ${signal}, shutting down`);
    server.stop().then(() => {
      console.log('Bye.');
      process.exit(0);
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  server.engine.shutdown = (now) => {
    if (!now) {
      shutdown('SHUTDOWN');
      return;
    }
    // SHUTDOWN NOSAVE during a busy script (Redis: "kill the server in a hard way"): nothing
    // more is committed, so the script's partial effects never reach the disk; what was
    // committed before it stays. Written synchronously: the process ends right here.
    writeSync(1, 'Received SHUTDOWN NOSAVE while a script is busy: exiting now\n');
    process.exit(0);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error('fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});

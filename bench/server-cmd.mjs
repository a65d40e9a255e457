/**
 * How the benchmarks start our server: with the Node flags of `npm start` (package.json's start
 * script, e.g. the young-generation size) and its environment assignments (NAME=value before
 * `node`, e.g. the C library's malloc settings), so that what is measured is what users run.
 * The assignments are put into this process's environment when this module loads, so every
 * server a bench spawns inherits them (redis-server uses jemalloc: glibc's MALLOC_* do not
 * touch it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;

/**
 * The flags between `node` and `dist/main.js` in the start script (BENCH_START_FLAGS: these
 * instead, e.g. an older build's flags for a before/after run).
 */
export const NODE_FLAGS = process.env.BENCH_START_FLAGS !== undefined
  ? process.env.BENCH_START_FLAGS.split(/\s+/).filter(Boolean)
  : start.split(/\s+/).filter((a) => a.startsWith('--'));

/** The environment assignments before `node` in the start script (BENCH_NO_START_ENV=1: not applied). */
const words = start.split(/\s+/);
export const NODE_ENV = Object.fromEntries(words.slice(0, words.indexOf('node'))
  .filter((a) => /^[A-Z_][A-Z0-9_]*=/.test(a)).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
if (process.env.BENCH_NO_START_ENV === undefined) Object.assign(process.env, NODE_ENV);

/** The build to run: `dist`, or BENCH_DIST (another build, for a before/after in one run). */
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(ROOT, 'dist');

/** argv for process.execPath: Node flags, <build>/main.js, then the server's own arguments. */
export function oursArgv(args) {
  return [...NODE_FLAGS, path.join(DIST, 'main.js'), ...args];
}

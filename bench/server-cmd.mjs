/**
 * How the benchmarks start our server: with the Node flags of `npm start` (package.json's start
 * script, e.g. the young-generation size), so that what is measured is what users run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;

/** The flags between `node` and `dist/main.js` in the start script. */
export const NODE_FLAGS = start.split(/\s+/).filter((a) => a.startsWith('--'));

/** The build to run: `dist`, or BENCH_DIST (another build, for a before/after in one run). */
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(ROOT, 'dist');

/** argv for process.execPath: Node flags, <build>/main.js, then the server's own arguments. */
export function oursArgv(args) {
  return [...NODE_FLAGS, path.join(DIST, 'main.js'), ...args];
}

/**
 * Server processes for the benchmarks that run ours and redis-server side by side (bullmq.mjs,
 * evalsha.mjs): start on a port and wait until it listens, stop, and the CPU time a process
 * has used (utime + stime of all its threads, /proc/<pid>/stat).
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function start(name, cmd, args, port) {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const deadline = Date.now() + 15000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited:\n${out}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${name}: nothing listens on ${port}\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { name, proc, port };
}

export function stop(s) {
  return new Promise((resolve) => {
    if (s.proc.exitCode !== null) return resolve();
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 5000);
    s.proc.once('exit', () => { clearTimeout(t); resolve(); });
    s.proc.kill('SIGTERM');
  });
}

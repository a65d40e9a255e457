/**
 * MONITOR: every executed command is shown to monitoring clients as Redis prints it:
 * +<sec>.<usec> [<db> <addr>] "arg" "arg"...   (arguments escaped as sdscatrepr does).
 */
import type { Argv } from '../resp/argv.js';
import type { Client } from './client.js';

/** Redis's sdscatrepr: printable ASCII as is, \\ \" \n \r \t \a \b escaped, the rest \xHH. */
export function reprBytes(b: Uint8Array, s: number, e: number): string {
  let out = '"';
  for (let i = s; i < e; i++) {
    const c = b[i];
    switch (c) {
      case 92: out += '\\\\'; break;
      case 34: out += '\\"'; break;
      case 10: out += '\\n'; break;
      case 13: out += '\\r'; break;
      case 9: out += '\\t'; break;
      case 7: out += '\\a'; break;
      case 8: out += '\\b'; break;
      default:
        out += c >= 32 && c <= 126 ? String.fromCharCode(c) : '\\x' + c.toString(16).padStart(2, '0');
    }
  }
  return out + '"';
}

export function feedMonitors(c: Client, argv: Argv): void {
  const eng = c.engine;
  const t = Date.now() * 1000 + (Math.floor(performance.now() * 1000) % 1000);
  let line = `${Math.floor(t / 1e6)}.${String(t % 1e6).padStart(6, '0')} [${c.dbIndex} ${c.transport.kind === 'internal' ? 'lua' : c.addr}]`;
  const redacted = redactedArgs(argv);
  for (let i = 0; i < argv.count; i++) {
    line += ' ' + (redacted(i) ? '"(redacted)"' : reprBytes(argv.buf, argv.start[i], argv.end[i]));
  }
  for (const m of eng.monitors) {
    if (m.closed) continue;
    m.out.simple(line);
    m.transport.requestFlush();
  }
}

const NONE = (_i: number) => false;

/**
 * The arguments Redis hides from MONITOR: every argument of AUTH; for HELLO only the user and
 * password of its AUTH option, as helloCommand redacts them while parsing (after a valid
 * protocol version, stopping at the first syntax error).
 */
export function redactedArgs(argv: Argv): (i: number) => boolean {
  if (argv.is(0, 'AUTH')) return (i) => i > 0;
  if (argv.is(0, 'CONFIG') && argv.count >= 4 && argv.is(1, 'SET')) return sensitiveConfigValues(argv);
  if (!argv.is(0, 'HELLO') || argv.count < 3) return NONE;
  const ver = argv.int64(1);
  if (ver === null || ver < 2n || ver > 3n) return NONE;
  const hide = new Set<number>();
  for (let j = 2; j < argv.count; j++) {
    const more = argv.count - 1 - j;
    if (argv.is(j, 'AUTH') && more >= 2) {
      hide.add(j + 1);
      hide.add(j + 2);
      j += 2;
    } else if (argv.is(j, 'SETNAME') && more >= 1) {
      j++;
    } else {
      break;
    }
  }
  return (i) => hide.has(i);
}

/** Redis's SENSITIVE_CONFIG parameters: CONFIG SET hides their values (slowlog, MONITOR). */
const SENSITIVE = new Set(['requirepass', 'masterauth', 'tls-key-file-pass', 'tls-client-key-file-pass']);

function sensitiveConfigValues(argv: Argv): (i: number) => boolean {
  const hide = new Set<number>();
  for (let j = 2; j + 1 < argv.count; j += 2) if (SENSITIVE.has(argv.key(j).toLowerCase())) hide.add(j + 1);
  return hide.size === 0 ? NONE : (i) => hide.has(i);
}

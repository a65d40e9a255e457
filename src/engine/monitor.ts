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
  const redact = argv.is(0, 'AUTH') || (argv.is(0, 'HELLO') && argv.count > 2);
  for (let i = 0; i < argv.count; i++) {
    line += ' ' + (redact && i > 0 ? '"(redacted)"' : reprBytes(argv.buf, argv.start[i], argv.end[i]));
  }
  for (const m of eng.monitors) {
    if (m.closed) continue;
    m.out.simple(line);
    m.transport.requestFlush();
  }
}

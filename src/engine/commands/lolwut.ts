/**
 * LOLWUT [VERSION v] [...]: Redis 7.0.15's. Without VERSION (or with a version of its own
 * series) it answers "Redis ver. 7.0.15"; VERSION 5 (and 4.9) draws Georg Nees' "Schotter" in
 * braille characters, VERSION 6 (and 5.9) the Plaguemon skyline in terminal colours. Both are
 * lolwut5.c / lolwut6.c ported step by step, float arithmetic included (Math.fround where C
 * uses float), so the drawing is Redis's for the same random numbers; those come from
 * Math.random (Redis seeds rand() at start-up, so its pictures differ from run to run too).
 */
import type { Argv } from '../../resp/argv.js';
import type { ReplySink } from '../../resp/reply-sink.js';
import type { Client } from '../client.js';
import { E } from '../../resp/errors.js';
import { F } from '../flags.js';
import { family, row } from '../command.js';

const VERSION = '7.0.15';
const f = Math.fround;

/** C's rand(): 0 .. RAND_MAX (2^31 - 1). */
function rand(): number {
  return Math.floor(Math.random() * 2147483648);
}
const RAND_MAX = 2147483647;

class Canvas {
  readonly pixels: Uint8Array;
  constructor(readonly width: number, readonly height: number, bg: number) {
    this.pixels = new Uint8Array(width * height).fill(bg);
  }

  draw(x: number, y: number, color: number): void {
    if (x < 0 || x >= this.width || y < 0 || y >= this.height) return;
    this.pixels[x + y * this.width] = color;
  }

  get(x: number, y: number): number {
    if (x < 0 || x >= this.width || y < 0 || y >= this.height) return 0;
    return this.pixels[x + y * this.width];
  }

  /** Bresenham, as lwDrawLine. */
  line(x1: number, y1: number, x2: number, y2: number, color: number): void {
    const dx = Math.abs(x2 - x1);
    const dy = Math.abs(y2 - y1);
    const sx = x1 < x2 ? 1 : -1;
    const sy = y1 < y2 ? 1 : -1;
    let err = dx - dy;
    for (;;) {
      this.draw(x1, y1, color);
      if (x1 === x2 && y1 === y2) break;
      const e2 = err * 2;
      if (e2 > -dy) {
        err -= dy;
        x1 += sx;
      }
      if (e2 < dx) {
        err += dx;
        y1 += sy;
      }
    }
  }

  /** lwDrawSquare: the four corners on a circle, from PI/4 + angle. */
  square(x: number, y: number, size: number, angle: number, color: number): void {
    const px = [0, 0, 0, 0];
    const py = [0, 0, 0, 0];
    size = f(Math.round(f(size / 1.4142135623)));
    let k = f(Math.PI / 4 + angle);
    for (let j = 0; j < 4; j++) {
      px[j] = cRound(Math.sin(k) * size + x);
      py[j] = cRound(Math.cos(k) * size + y);
      k = f(k + Math.PI / 2);
    }
    for (let j = 0; j < 4; j++) this.line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
  }
}

/** C's round(): halves away from zero. */
function cRound(v: number): number {
  return v < 0 ? -Math.round(-v) : Math.round(v);
}

// ---------------------------------------------------------------- LOLWUT 5

function schotter(cols: number, perRow: number, perCol: number): Canvas {
  const width = cols * 2;
  const padding = width > 4 ? 2 : 0;
  const side = f((width - padding * 2) / perRow);
  const height = Math.trunc(f(f(side * perCol) + padding * 2));
  const canvas = new Canvas(width, height, 0);
  for (let y = 0; y < perCol; y++) {
    for (let x = 0; x < perRow; x++) {
      let sx = Math.trunc(f(f(f(x * side) + f(side / 2)) + padding));
      let sy = Math.trunc(f(f(f(y * side) + f(side / 2)) + padding));
      let angle = 0;
      if (y > 1) {
        let r1 = f(f(f(rand() / RAND_MAX) / perCol) * y);
        let r2 = f(f(f(rand() / RAND_MAX) / perCol) * y);
        let r3 = f(f(f(rand() / RAND_MAX) / perCol) * y);
        if (rand() % 2) r1 = -r1;
        if (rand() % 2) r2 = -r2;
        if (rand() % 2) r3 = -r3;
        angle = r1;
        sx = Math.trunc(f(sx + f(f(r2 * side) / 3)));
        sy = Math.trunc(f(sy + f(f(r3 * side) / 3)));
      }
      canvas.square(sx, sy, side, angle, 1);
    }
  }
  return canvas;
}

/** 2x4 pixels per braille character (U+2800 + bits), as lolwut5.c's renderCanvas. */
function renderBraille(c: Canvas): string {
  let text = '';
  for (let y = 0; y < c.height; y += 4) {
    for (let x = 0; x < c.width; x += 2) {
      let b = 0;
      if (c.get(x, y)) b |= 1;
      if (c.get(x, y + 1)) b |= 2;
      if (c.get(x, y + 2)) b |= 4;
      if (c.get(x + 1, y)) b |= 8;
      if (c.get(x + 1, y + 1)) b |= 16;
      if (c.get(x + 1, y + 2)) b |= 32;
      if (c.get(x, y + 3)) b |= 64;
      if (c.get(x + 1, y + 3)) b |= 128;
      text += String.fromCharCode(0x2800 + b);
    }
    if (y !== c.height - 1) text += '\n';
  }
  return text;
}

// ---------------------------------------------------------------- LOLWUT 6

const COLORS = ['0;30;40m', '0;90;100m', '0;37;47m', '0;97;107m'];

function renderColors(c: Canvas): string {
  const parts: string[] = [];
  for (let y = 0; y < c.height; y++) {
    for (let x = 0; x < c.width; x++) parts.push(`\x1b[${COLORS[c.get(x, y)] ?? COLORS[0]} \x1b[0m`);
    if (y !== c.height - 1) parts.push('\n');
  }
  return parts.join('');
}

interface Skyscraper { xoff: number; width: number; height: number; windows: boolean; color: number }

function skyscraper(c: Canvas, si: Skyscraper): void {
  const starty = c.height - 1;
  const endy = starty - si.height + 1;
  for (let y = starty; y >= endy; y--) {
    for (let x = si.xoff; x < si.xoff + si.width; x++) {
      // The roof is four pixels less wide.
      if (y === endy && (x <= si.xoff + 1 || x >= si.xoff + si.width - 2)) continue;
      let color = si.color;
      if (si.windows && x > si.xoff + 1 && x < si.xoff + si.width - 2 && y > endy + 1 && y < starty - 1) {
        const relx = x - (si.xoff + 1);
        const rely = y - (endy + 1);
        // Windows two pixels wide, one tall (C's % keeps the dividend's sign).
        if ((Math.trunc(relx / 2) % 2) !== 0 && rely % 2 !== 0) {
          do color = 1 + (rand() % 2); while (color === si.color);
          if (relx % 2 !== 0) color = c.get(x - 1, y);
        }
      }
      c.draw(x, y, color);
    }
  }
}

function skyline(c: Canvas): void {
  const h = c.height;
  for (let color = 2; color >= 1; color--) {
    for (let offset = -10; offset < c.width;) {
      offset += rand() % 8;
      const width = 10 + (rand() % 9);
      const height = color === 2 ? Math.trunc(h / 2) + Math.trunc((rand() % h) / 2) : Math.trunc(h / 2) + Math.trunc((rand() % h) / 3);
      skyscraper(c, { xoff: offset, width, height, windows: false, color });
      offset += color === 2 ? Math.trunc(width / 2) : width + 1;
    }
  }
  for (let offset = -10; offset < c.width;) {
    offset += rand() % 8;
    let width = 5 + (rand() % 14);
    if (width % 4) width += width % 3;
    const height = Math.trunc(h / 3) + Math.trunc((rand() % h) / 2);
    skyscraper(c, { xoff: offset, width, height, windows: true, color: 0 });
    offset += width + 5;
  }
}

// ---------------------------------------------------------------- command

/** getLongFromObjectOrReply over argv[i]; null after the error reply. */
function long(argv: Argv, i: number, out: ReplySink): bigint | null {
  const n = argv.int64(i);
  if (n === null) out.error(E.NOT_INTEGER);
  return n;
}

const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

// LOLWUT [VERSION version] [arg ...]
function lolwutCommand(_c: Client, argv: Argv, out: ReplySink): void {
  let v = VERSION;
  let first = 1;
  if (argv.count >= 3 && argv.is(1, 'VERSION')) {
    const ver = long(argv, 2, out);
    if (ver === null) return;
    v = `${BigInt.asUintN(32, ver)}.0.0`; // (unsigned int) as Redis prints it
    first = 3;
  }
  const args: number[] = [];
  const want = (v[0] === '5' && v[1] === '.' && v[2] !== '9') || (v[0] === '4' && v[1] === '.' && v[2] === '9') ? 5
    : (v[0] === '6' && v[1] === '.' && v[2] !== '9') || (v[0] === '5' && v[1] === '.' && v[2] === '9') ? 6 : 0;
  if (want === 0) {
    out.verbatim(`Redis ver. ${VERSION}\n`);
    return;
  }
  for (let i = first; i < argv.count && args.length < (want === 5 ? 3 : 2); i++) {
    const n = long(argv, i, out);
    if (n === null) return;
    // Clamped below anyway: a huge value only needs to stay huge.
    args.push(n > 1000000n ? 1000000 : n < -1000000n ? -1000000 : Number(n));
  }
  let text: string;
  if (want === 5) {
    const cols = clamp(args[0] ?? 66, 1, 1000);
    const perRow = clamp(args[1] ?? 8, 1, 200);
    const perCol = clamp(args[2] ?? 12, 1, 200);
    text = `${renderBraille(schotter(cols, perRow, perCol))}\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ${VERSION}\n`;
  } else {
    const canvas = new Canvas(clamp(args[0] ?? 80, 1, 1000), clamp(args[1] ?? 20, 1, 1000), 3);
    skyline(canvas);
    text = `${renderColors(canvas)}\nDedicated to the 8 bit game developers of past and present.\n`
      + `Original 8 bit image from Plaguemon by hikikomori. Redis ver. ${VERSION}\n`;
  }
  out.verbatim(Buffer.from(text, 'utf8'));
}

export default family('lolwut', [], [
  row('lolwut', -1, F.READONLY | F.FAST, [0, 0, 0], lolwutCommand),
]);

/**
 * What the search benchmarks share: free ports, and a deterministic corpus of pseudo-words
 * (3000 of them, used Zipf-ish so that some words are common) and categories.
 */
import net from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
    s.on('error', reject);
  });
}

let seed = 42;
export const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
const SYL = ['ka', 'lo', 'mi', 'ran', 'te', 'vo', 'su', 'den', 'pa', 'qui', 'zor', 'el', 'an', 'tur', 'bex', 'ny'];
export const VOCAB = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => SYL[Math.floor(rnd() * SYL.length)]).join(''));
const word = () => VOCAB[Math.floor(VOCAB.length * rnd() ** 2)];
export const words = (n) => Array.from({ length: n }, word).join(' ');
export const CATEGORIES = ['books', 'music', 'garden', 'tools', 'toys', 'food', 'sports', 'health', 'auto', 'games'];

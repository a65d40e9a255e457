/**
 * BM25 as Tantivy computes it (Upstash Redis Search runs on Tantivy, per its troubleshooting
 * page): k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)) with N every document of the
 * index, the average field length over every document (with the field or not), a document's
 * field length quantized to one byte (Tantivy's fieldnorm code), all in 32-bit floats.
 */
const f32 = Math.fround;
const K1 = f32(1.2);
const B = f32(0.75);

/** Tantivy's FIELD_NORMS_TABLE: 0..23 exact, then 3-bit mantissa steps (decode_fieldnorm_byte). */
const NORMS: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let b = 0; b < 256; b++) {
    if (b < 24) { t[b] = b; continue; }
    const x = b - 24;
    const bits = x & 7;
    const shift = x >> 3;
    t[b] = 24 + (shift === 0 ? bits : (bits | 8) * 2 ** (shift - 1));
  }
  return t;
})();

/** The one-byte code of a field length (the largest table entry not above it). */
export function fieldnormId(len: number): number {
  let lo = 0;
  let hi = 255;
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (NORMS[m] <= len) lo = m;
    else hi = m - 1;
  }
  return lo;
}

/** The length a code stands for. */
export function fieldnorm(id: number): number {
  return NORMS[id];
}

/** Scores of one term: weight (idf * (k1 + 1)) and the length part per fieldnorm code. */
export class Bm25 {
  readonly weight: number;
  private readonly cache = new Float32Array(256);

  constructor(docFreq: number, docCount: number, totalTokens: number) {
    const x = f32(f32(docCount - docFreq + 0.5) / f32(docFreq + 0.5));
    const idf = f32(Math.log(f32(1 + x)));
    this.weight = f32(idf * f32(1 + K1));
    const avg = f32(totalTokens / Math.max(docCount, 1)) || 1;
    for (let id = 0; id < 256; id++) this.cache[id] = f32(K1 * f32(f32(1 - B) + f32(f32(B * NORMS[id]) / avg)));
  }

  score(normId: number, tf: number): number {
    return f32(f32(this.weight * tf) / f32(tf + this.cache[normId]));
  }
}

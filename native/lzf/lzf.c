/*
 * LZF and CRC-64 for RDB strings and DUMP payloads, compiled to freestanding wasm32 (no libc).
 * Our own code, written to give byte for byte what Redis's lzf_c.c / lzf_d.c and crc64.c give
 * (see src/rdb/lzf.ts for the two compressors Redis builds ship and the hash-table caveat).
 *
 * Memory is the caller's (src/rdb/lzf.ts): it places inputs and outputs in this module's linear
 * memory past __heap_base and passes offsets. Nothing here allocates.
 */
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

#ifndef EXPORT
#define EXPORT(name) __attribute__((export_name(name)))
#endif

/* Unaligned little-endian 64-bit access (wasm is little-endian and allows unaligned loads). */
static inline u64 load64(const u8 *p) {
  u64 v;
  __builtin_memcpy(&v, p, 8);
  return v;
}
static inline unsigned short load16(const u8 *p) {
  unsigned short v;
  __builtin_memcpy(&v, p, 2);
  return v;
}
static inline void store64(u8 *p, u64 v) { __builtin_memcpy(p, &v, 8); }

/* ------------------------------------------------------------------------------ compressor */

#define HLOG 16
#define HSIZE (1 << HLOG)
#define MAX_LIT (1 << 5)
#define MAX_OFF (1 << 13)
#define MAX_REF ((1 << 8) + (1 << 3))

/*
 * Slot -> b1 + position, valid only when above this call's b1 = base + 1: an empty table per
 * call without clearing 256 KB each time (lzf_c.c with INIT_HTAB: Redis's output whenever no
 * stale slot of its uninitialised table points into the input).
 */
static int htab[HSIZE];
static int base;

/* One more literal byte; a full run (MAX_LIT) is closed and the next one started. */
#define LITERAL()                        \
  do {                                   \
    lit++;                               \
    out[op++] = in[ip++];                \
    if (lit == MAX_LIT) {                \
      out[op - lit - 1] = (u8)(lit - 1); \
      lit = 0;                           \
      op++;                              \
    }                                    \
  } while (0)

static inline u32 idx(u32 h) { return ((h >> (24 - HLOG)) - h * 5) & (HSIZE - 1); }

/*
 * lzf_compress(in[0, in_len), out[0, out_len)): the compressed length, or -1 when it does not
 * fit. bundled != 0: Redis's bundled deps/lzf (no match in the last 4 bytes, the space test
 * after closing the literal run); 0: liblzf 3.6. Inlined once per variant (a constant
 * `bundled`: 9% fewer instructions).
 */
static inline __attribute__((always_inline)) int compress(const u8 *in, int in_len, u8 *out, int out_len,
                                                          const int bundled) {
  if (in_len <= 0 || out_len <= 0) return -1;
  if ((long long)base + in_len + 2 > 0x7fffffff) {
    for (int i = 0; i < HSIZE; i++) htab[i] = 0;
    base = 0;
  }
  const int b1 = base + 1;
  base += in_len + 1;
  const int last = in_len - 2;
  int ip = 0, op = 1, lit = 0; /* op = 1: start run */
  u32 hval = in_len > 1 ? ((u32)in[0] << 8) | in[1] : 0;
  while (ip < last) {
    hval = (hval << 8) | in[ip + 2];
    const u32 slot = idx(hval);
    const int ref = htab[slot] - b1;
    htab[slot] = b1 + ip;
    const int off = ip - ref - 1;
    if ((u32)off < MAX_OFF && ref > 0 && (!bundled || ip + 4 < in_len) &&
        in[ref + 2] == in[ip + 2] && load16(in + ref) == load16(in + ip)) {
      int maxlen = in_len - ip - 2;
      if (maxlen > MAX_REF) maxlen = MAX_REF;
      if (!bundled && op - (lit == 0) + 3 + 1 >= out_len) return -1;
      out[op - lit - 1] = (u8)(lit - 1); /* stop run */
      if (lit == 0) op--;                /* undo run if length is zero */
      if (bundled && op + 3 + 1 >= out_len) return -1;
      /* lzf_c.c's match extension, step for step: 16 compares before it looks at maxlen, then
       * on while len < maxlen. perf: byte compares beat one 64-bit XOR and ctz per 8 bytes
       * here (listpack matches are short): 4.5 -> 3.0 us for a 100-field hash's 1,987 bytes. */
      int len = 2;
      if (maxlen > 16) {
        for (int k = 0; k < 16; k++) {
          len++;
          if (in[ref + len] != in[ip + len]) goto found;
        }
      }
      do len++;
      while (len < maxlen && in[ref + len] == in[ip + len]);
    found:
      len -= 2; /* octets - 1 */
      ip++;
      if (len < 7) {
        out[op++] = (u8)((off >> 8) + (len << 5));
      } else {
        out[op++] = (u8)((off >> 8) + (7 << 5));
        out[op++] = (u8)(len - 7);
      }
      out[op++] = (u8)off;
      lit = 0;
      op++; /* start run */
      ip += len + 1;
      if (ip >= last) break;
      /* VERY_FAST: hash the last two positions of the match. */
      ip -= 2;
      hval = ((u32)in[ip] << 16) | ((u32)in[ip + 1] << 8) | in[ip + 2];
      htab[idx(hval)] = b1 + ip;
      ip++;
      hval = (hval << 8) | in[ip + 2];
      htab[idx(hval)] = b1 + ip;
      ip++;
    } else {
      if (op >= out_len) return -1;
      LITERAL();
    }
  }
  if (op + 3 > out_len) return -1;
  while (ip < in_len) LITERAL();
  out[op - lit - 1] = (u8)(lit - 1); /* end run */
  if (lit == 0) op--;
  return op;
}

EXPORT("lzf_compress")
int lzf_compress(const u8 *in, int in_len, u8 *out, int out_len, int bundled) {
  return bundled ? compress(in, in_len, out, out_len, 1) : compress(in, in_len, out, out_len, 0);
}

/* ---------------------------------------------------------------------------- decompressor */

/*
 * lzf_decompress with CHECK_INPUT: in[0, in_len) into out[0, out_len); out_len on success, -1
 * when the input is corrupt (a reference before the output start, a run past either end) or
 * does not expand to exactly out_len bytes.
 *
 * The caller leaves DECOMP_SLACK writable bytes after out[out_len) and readable ones after
 * in[in_len): short copies go in whole 8-byte words, which may write past a run's end into
 * bytes that what follows overwrites (or that nobody reads) and read past the input's end.
 */
#define DECOMP_SLACK 32

EXPORT("lzf_decompress")
int lzf_decompress(const u8 *in, int in_len, u8 *out, int out_len) {
  const u8 *ip = in;
  const u8 *const in_end = in + in_len;
  u8 *op = out;
  u8 *const out_end = out + out_len;
  while (ip < in_end) {
    u32 ctrl = *ip++;
    if (ctrl < 32) {
      /* literal run of ctrl + 1 bytes (at most 32: four words) */
      ctrl++;
      if (op + ctrl > out_end || ip + ctrl > in_end) return -1;
      store64(op, load64(ip));
      if (ctrl > 8) {
        store64(op + 8, load64(ip + 8));
        if (ctrl > 16) {
          store64(op + 16, load64(ip + 16));
          store64(op + 24, load64(ip + 24));
        }
      }
      op += ctrl;
      ip += ctrl;
    } else {
      u32 len = ctrl >> 5;
      if (ip >= in_end) return -1;
      if (len == 7) {
        len += *ip++;
        if (ip >= in_end) return -1;
      }
      const u32 back = ((ctrl & 0x1f) << 8) + 1 + *ip++;
      len += 2;
      if ((u32)(out_end - op) < len || (u32)(op - out) < back) return -1;
      const u8 *ref = op - back;
      u8 *const end = op + len;
      if (back >= 8) {
        /* No word reads a byte this copy has yet to write. */
        do {
          store64(op, load64(ref));
          op += 8;
          ref += 8;
        } while (op < end);
      } else {
        /* Overlapping: lzf_d.c's byte order repeats the last `back` bytes. perf: the first
         * eight bytes one by one (always eight: no loop), then words from `far` back, the
         * smallest multiple of the period that is at least 8, where they already repeat (a
         * run of one byte, a common reference: 99 bytes took a byte loop). */
        op[0] = ref[0];
        op[1] = ref[1];
        op[2] = ref[2];
        op[3] = ref[3];
        op[4] = ref[4];
        op[5] = ref[5];
        op[6] = ref[6];
        op[7] = ref[7];
        if (len > 8) {
          const u32 far = back * ((7 + back) / back);
          op += 8;
          ref = op - far;
          do {
            store64(op, load64(ref));
            op += 8;
            ref += 8;
          } while (op < end);
        }
      }
      op = end;
    }
  }
  return op == out_end ? out_len : -1;
}

/* ---------------------------------------------------------------------------------- CRC-64 */

/*
 * CRC-64/Jones as Redis's crc64.c (reflected polynomial 0xad93d23594c935a9, initial value 0,
 * no final xor), by slicing: T[k][b] is the CRC of byte b followed by k zero bytes, so sixteen
 * input bytes cost sixteen independent lookups (by 16: 490-517 ns for 830 bytes in V8, by 8:
 * 623-670; the tables take 32 KB). The second word's eight lookups by byte loads, xored
 * apart: 420-427 -> 350-353 ns CPU for 820 bytes.
 */
#define POLY 0x95ac9329ac4bc9b5ULL /* 0xad93d23594c935a9 bit-reversed */
static u64 crct[16][256];

EXPORT("crc64_init")
void crc64_init(void) {
  for (u32 b = 0; b < 256; b++) {
    u64 c = b;
    for (int i = 0; i < 8; i++) c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
    crct[0][b] = c;
  }
  for (int k = 1; k < 16; k++)
    for (u32 b = 0; b < 256; b++) crct[k][b] = crct[0][crct[k - 1][b] & 0xff] ^ (crct[k - 1][b] >> 8);
}

/* The CRC state lives here between calls (two 32-bit halves for JS; no BigInt per call). */
static u32 crc_state[2];

EXPORT("crc64_state")
u32 *crc64_state(void) { return crc_state; }

/* crc_state = crc64(crc_state, p[0, n)) */
EXPORT("crc64_update")
void crc64_update(const u8 *p, u32 n) {
  u64 crc = ((u64)crc_state[1] << 32) | crc_state[0];
  for (; n >= 16; n -= 16, p += 16) {
    /* perf: the second word's lookups by byte loads (no shift or mask) and xored apart from the
     * first's, which alone depend on the running CRC (a shorter chain from one block to the
     * next). */
    const u64 hi = (crct[7][p[8]] ^ crct[6][p[9]]) ^ (crct[5][p[10]] ^ crct[4][p[11]]) ^
                   ((crct[3][p[12]] ^ crct[2][p[13]]) ^ (crct[1][p[14]] ^ crct[0][p[15]]));
    const u64 a = crc ^ load64(p);
    crc = ((crct[15][a & 0xff] ^ crct[14][(a >> 8) & 0xff]) ^ (crct[13][(a >> 16) & 0xff] ^ crct[12][(a >> 24) & 0xff])) ^
          ((crct[11][(a >> 32) & 0xff] ^ crct[10][(a >> 40) & 0xff]) ^ (crct[9][(a >> 48) & 0xff] ^ crct[8][a >> 56])) ^ hi;
  }
  if (n >= 8) {
    crc ^= load64(p);
    crc = crct[7][crc & 0xff] ^ crct[6][(crc >> 8) & 0xff] ^ crct[5][(crc >> 16) & 0xff] ^
          crct[4][(crc >> 24) & 0xff] ^ crct[3][(crc >> 32) & 0xff] ^ crct[2][(crc >> 40) & 0xff] ^
          crct[1][(crc >> 48) & 0xff] ^ crct[0][crc >> 56];
    n -= 8;
    p += 8;
  }
  for (; n; n--) crc = crct[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  crc_state[0] = (u32)crc;
  crc_state[1] = (u32)(crc >> 32);
}

/*
 * Checks of untrusted listpacks (RESTORE payloads, RDB files), on bytes in this module's
 * memory. The same answers as the JavaScript they replaced (src/engine/ds/listpack.ts).
 */
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#ifndef EXPORT
#define EXPORT(name) __attribute__((export_name(name)))
#endif

static inline u32 u32le(const u8 *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((u32)p[3] << 24); }

/* Bytes of the back-length of an entry whose encoding and data take l bytes. */
static inline u32 backlen_size(u64 l) {
  return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/*
 * The back-length whose last byte is at q, as Redis's lpDecodeBacklen reads it: backwards while
 * a byte has bit 7, on into the entry's own bytes if need be (lpValidateNext compares this
 * with the entry's length, so a 1-byte back-length with bit 7 passes when the byte before it
 * is 0).
 */
static inline u64 backlen_at(const u8 *q) {
  u64 v = 0;
  u32 shift = 0;
  for (;;) {
    v |= (u64)(*q & 127) << shift;
    if (!(*q & 128)) return v;
    shift += 7;
    q--;
    if (shift > 28) return ~0ULL;
  }
}

/* Characters of v in decimal. */
static u32 int_text_len(i64 v) {
  u64 m = v < 0 ? 0 - (u64)v : (u64)v;
  u32 n = v < 0 ? 2 : 1;
  while (m >= 10) {
    m /= 10;
    n++;
  }
  return n;
}

/* p[0, n) is an integer as string2ll/lpStringToInt64 reads it (canonical: no sign of zero, no
 * leading zero, within int64): such a string is stored as an integer entry by lpAppend. */
static int canonical_int(const u8 *p, u32 n) {
  if (n == 0 || n > 20) return 0;
  u32 i = 0;
  int neg = 0;
  if (p[0] == '-') {
    if (n == 1) return 0;
    neg = 1;
    i = 1;
  }
  if (p[i] == '0') return n == 1;
  if (p[i] < '1' || p[i] > '9') return 0;
  u64 v = 0;
  for (; i < n; i++) {
    const u32 d = p[i] - '0';
    if (d > 9) return 0;
    if (v > (~0ULL - d) / 10) return 0; /* past 2^64: more than 20 digits would have been refused */
    v = v * 10 + d;
  }
  return neg ? v <= (1ULL << 63) : v < (1ULL << 63);
}

/* The integer of an integer entry at p (first byte c). */
static i64 entry_int(const u8 *p, u32 c) {
  if (c < 0x80) return c;
  if (c < 0xe0) {
    const int v = ((c & 0x1f) << 8) | p[1];
    return v >= 4096 ? v - 8192 : v;
  }
  if (c == 0xf1) return (short)(p[1] | (p[2] << 8));
  if (c == 0xf2) {
    const int v = p[1] | (p[2] << 8) | (p[3] << 16);
    return v >= 8388608 ? v - 16777216 : v;
  }
  if (c == 0xf3) return (int)u32le(p + 1);
  return (i64)(u32le(p + 1) | ((u64)u32le(p + 5) << 32));
}

/* Bytes of the (valid) entry at p: encoding and data, without the back-length. */
static inline u32 entry_len(const u8 *p) {
  const u32 c = p[0];
  if (c < 0x80) return 1;
  if (c < 0xc0) return 1 + (c & 0x3f);
  if (c < 0xe0) return 2;
  if (c < 0xf0) return 2 + (((c & 0x0f) << 8) | p[1]);
  if (c == 0xf0) return 5 + u32le(p + 1);
  return c == 0xf1 ? 3 : c == 0xf2 ? 4 : c == 0xf3 ? 5 : 9;
}

static inline u32 mix(u32 h) {
  h ^= h >> 15;
  h *= 0x2c1b3c6d;
  return h ^ (h >> 13);
}

/*
 * Insert the field at s + p (l bytes, canonical) into the open-addressing table of `mask + 1`
 * slots: 1 when an equal field is already there.
 */
static inline __attribute__((always_inline)) int dup_insert(const u8 *s, u32 p, u32 l, u32 *table, u32 mask) {
  /* The length and the last four bytes (fields often differ only at their end). */
  u32 tail = s[p + l - 1];
  if (l >= 4) tail = u32le(s + p + l - 4);
  else if (l > 1) tail = tail | (s[p + l - 2] << 8) | (l > 2 ? s[p + l - 3] << 16 : 0);
  u32 slot = mix(l * 0x9e3779b1u ^ tail) & mask;
  for (;;) {
    const u32 q = table[slot];
    if (q == 0) {
      table[slot] = p;
      return 0;
    }
    /* Equal entries start with the same byte; compared from the end, where fields such as
     * field:12 and field:47 differ. */
    if (s[q] == s[p] && entry_len(s + q) == l) {
      u32 i = l;
      while (i > 0 && s[p + i - 1] == s[q + i - 1]) i--;
      if (i == 0) return 1;
    }
    slot = (slot + 1) & mask;
  }
}

/* lp_check's result besides the count: the longest element, as text. */
static u32 max_text;
/* lp_check's duplicate-field answer (with a table): 0 none, 1 two equal fields, 2 not known
 * (more fields than the table takes). */
static u32 dup_state;
/* Set when an entry is valid but not as lpAppend would encode it (lp_check clears it). */
static u32 noncanon;
/* The longest text among the entries entry_slow checked (lp_check clears it). */
static u64 slow_max;

EXPORT("lp_dup_state")
u32 lp_dup_state(void) { return dup_state; }

EXPORT("lp_max_text")
u32 lp_max_text(void) { return max_text; }

/* A string entry's text p[0, n) that starts with a digit or '-': noncanon when lpAppend would
 * have stored it as an integer. */
static __attribute__((noinline)) void check_int_text(const u8 *p, u32 n) {
  if (canonical_int(p, n)) noncanon = 1;
}

/*
 * The entry at s + p, any encoding, checked as lpValidateNext does (within bounds, back-length
 * exact) and for canonical encoding (noncanon, slow_max): the offset of its end (after the
 * back-length), or 0 when it is corrupt. noinline: lp_check's loop takes the usual entry
 * itself, and a small loop keeps its state in registers.
 */
static __attribute__((noinline)) u64 entry_slow(const u8 *s, u64 p, u64 end) {
  const u32 c = s[p];
  u64 l, text, next;
  if (c - 0x80 < 0x40) {
    /* A string of up to 63 bytes whose back-length is not its plain byte, or past the end. */
    l = 1 + (c & 0x3f);
    next = p + l + 1;
    if (next > end || backlen_at(s + p + l) != l) return 0;
    text = l - 1;
    const u32 d = s[p + 1];
    if (text && (d == '-' || d - '0' < 10)) check_int_text(s + p + 1, (u32)text);
    if (text > slow_max) slow_max = text;
    return next;
  }
  if (c < 0x80) {
    l = 1;
    text = c < 10 ? 1 : c < 100 ? 2 : 3;
  } else if (c < 0xe0) {
    l = 2;
    if (p + l > end) return 0;
    const i64 v = entry_int(s + p, c);
    if (v >= 0 && v <= 127) noncanon = 1;
    text = int_text_len(v);
  } else if (c < 0xf0) {
    if (p + 2 > end) return 0;
    l = 2 + (((c & 0x0f) << 8) | s[p + 1]);
    text = l - 2;
    if (text < 64) noncanon = 1;
  } else if (c == 0xf0) {
    if (p + 5 > end) return 0;
    text = u32le(s + p + 1);
    l = 5 + text;
    if (text < 4096) noncanon = 1;
  } else if (c <= 0xf4) {
    l = c == 0xf1 ? 3 : c == 0xf2 ? 4 : c == 0xf3 ? 5 : 9;
    if (p + l > end) return 0;
    const i64 v = entry_int(s + p, c);
    const i64 lo = c == 0xf1 ? -4096 : c == 0xf2 ? -32768 : c == 0xf3 ? -8388608 : -2147483648LL;
    if (v >= lo && v < -lo) noncanon = 1;
    text = int_text_len(v);
  } else {
    return 0;
  }
  next = p + l;
  if (next > end) return 0;
  /* The back-length must read back as l (backlen_at). */
  const u32 bl = backlen_size(l);
  if (next + bl > end || backlen_at(s + next + bl - 1) != l) return 0;
  if (text > slow_max) slow_max = text;
  return next + bl;
}

/*
 * One entry of lp_check's loop, at q (offset q - s): q moves past it, or lp_check answers -1.
 * perf: a string of up to 63 bytes with its plain 1-byte back-length (a hash's usual field and
 * value) is checked here in one step; the next entry's address is q + its length byte's low
 * bits + 2, the shortest chain of loads from one entry to the next.
 */
#define LP_ENTRY()                                                                           \
  do {                                                                                       \
    const u32 c = *q;                                                                        \
    const u32 t = c & 0x3f;                                                                  \
    if (c - 0x80 < 0x40 && q + t + 2 <= e && q[t + 1] == t + 1) {                            \
      /* Only a string starting with a digit or '-' can be an integer's text (perf: the      \
       * usual text entry skips canonical_int). */                                           \
      const u32 d = q[1];                                                                    \
      if (t && (d == '-' || d - '0' < 10)) check_int_text(q + 1, t);                         \
      if (t > max) max = t;                                                                  \
      q += t + 2;                                                                            \
    } else {                                                                                 \
      const u64 next = entry_slow(s, (u64)(q - s), end);                                     \
      if (next == 0) return -1;                                                              \
      q = s + next;                                                                          \
    }                                                                                        \
    k++;                                                                                     \
  } while (0)

/*
 * Validate a listpack (lpValidateIntegrity, deep): header length, every entry within bounds,
 * back-lengths exact, end byte, declared count. Returns the element count; -1 when it is
 * corrupt; -2 when valid but not as lpAppend would encode it (a string that is an integer, an
 * integer or a length in a wider encoding than needed).
 *
 * With a table (`size` u32 slots, a power of two >= 16, cleared here; 0: none), the same pass
 * looks for two equal entries among every second one (a hash's fields; lp_dup_state, meaningful
 * when the listpack is canonical: equal entries then have equal bytes). perf: RESTORE of a hash
 * reads its listpack once.
 */
EXPORT("lp_check")
int lp_check(const u8 *s, u32 n, u32 *table, u32 size) {
  u32 dups = size ? 0 : 2;
  dup_state = dups;
  if (size)
    for (u32 i = 0; i < size; i++) table[i] = 0;
  const u32 mask = size - 1;
  if (n < 7 || u32le(s) != n || s[n - 1] != 0xff) return -1;
  const u32 declared = s[4] | (s[5] << 8);
  const u64 end = n - 1;
  const u8 *const e = s + end;
  noncanon = 0;
  slow_max = 0;
  u32 max = 0;
  u32 k = 0;
  const u8 *q = s + 6;
  if (size) {
    /* A hash: a field, then its value (perf: no test of k's parity per entry). At most half
     * the slots filled (k counts two entries per field): probes stay short and always end. */
    while (q < e) {
      const u8 *const f = q;
      LP_ENTRY();
      if (dups == 0) {
        if (k > size) dups = 2;
        else if (dup_insert(s, (u32)(f - s), entry_len(f), table, mask)) dups = 1;
      }
      if (q >= e) break;
      LP_ENTRY();
    }
  } else {
    while (q < e) LP_ENTRY();
  }
  if (q != e) return -1;
  if (declared != 65535 && declared != k) return -1;
  dup_state = dups;
  max_text = slow_max > max ? (u32)slow_max : max;
  return noncanon ? -2 : (int)k;
}

/*
 * 1 when two of every second entry (the fields of a hash) of a listpack that lp_check accepted
 * as canonical are equal (equal entries then have equal bytes). `table`: room for `size` u32
 * slots, size a power of two >= 2 * fields, cleared here.
 */
EXPORT("lp_dup_fields")
int lp_dup_fields(const u8 *s, u32 n, u32 *table, u32 size) {
  for (u32 i = 0; i < size; i++) table[i] = 0;
  const u32 mask = size - 1;
  const u32 end = n - 1;
  u32 p = 6;
  while (p < end) {
    const u32 l = entry_len(s + p);
    if (dup_insert(s, p, l, table, mask)) return 1;
    p += l + backlen_size(l);
    const u32 lv = entry_len(s + p); /* the value */
    p += lv + backlen_size(lv);
  }
  return 0;
}

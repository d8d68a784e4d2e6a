/*
 * Growable vectors, string buffers, the string-keyed hash map, the binary
 * heap and the FIFO queue. All of them allocate through the context's hook
 * and report failure instead of aborting.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* Grows *cap (element count) so that need elements fit; false on overflow. */
static bool grow_cap(size_t *cap, size_t need, size_t elem) {
  size_t c = *cap ? *cap : 8;
  while (c < need) {
    if (c > SIZE_MAX / 2)
      return false;
    c *= 2;
  }
  if (elem && c > SIZE_MAX / elem)
    return false;
  *cap = c;
  return true;
}

/* ---- vec -------------------------------------------------------------- */

void mapopt__vec_init(mapopt__vec *v, size_t elem) {
  v->data = NULL;
  v->len = v->cap = 0;
  v->elem = elem;
}

void mapopt__vec_destroy(mapopt__vec *v, mapopt_ctx *ctx) {
  mapopt__free(ctx, v->data, v->cap * v->elem);
  v->data = NULL;
  v->len = v->cap = 0;
}

bool mapopt__vec_grow(mapopt__vec *v, mapopt_ctx *ctx) {
  if (v->len < v->cap)
    return true;
  size_t cap = v->cap;
  if (!grow_cap(&cap, v->len + 1, v->elem))
    return false;
  void *d = mapopt__grow_block(ctx, v->data, v->cap * v->elem, cap * v->elem);
  if (!d)
    return false;
  v->data = d;
  v->cap = cap;
  return true;
}

/* ---- strbuf ----------------------------------------------------------- */

void mapopt__sb_init(mapopt__strbuf *sb, mapopt_ctx *ctx) {
  sb->ctx = ctx;
  sb->data = NULL;
  sb->len = sb->cap = 0;
  sb->failed = false;
}

void mapopt__sb_destroy(mapopt__strbuf *sb) {
  mapopt__free(sb->ctx, sb->data, sb->cap);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

static bool sb_reserve(mapopt__strbuf *sb, size_t extra) {
  if (sb->failed)
    return false;
  if (extra > SIZE_MAX - sb->len - 1) {
    sb->failed = true;
    return false;
  }
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap)
    return true;
  size_t cap = sb->cap;
  if (!grow_cap(&cap, need, 1)) {
    sb->failed = true;
    return false;
  }
  char *d = mapopt__realloc(sb->ctx, sb->data, sb->cap, cap);
  if (!d) {
    sb->failed = true;
    return false;
  }
  sb->data = d;
  sb->cap = cap;
  d[sb->len] = '\0'; /* the buffer is a valid string as soon as it exists */
  return true;
}

void mapopt__sb_putn(mapopt__strbuf *sb, const char *s, size_t n) {
  if (!sb_reserve(sb, n))
    return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void mapopt__sb_puts(mapopt__strbuf *sb, const char *s) {
  mapopt__sb_putn(sb, s, strlen(s));
}

void mapopt__sb_putc(mapopt__strbuf *sb, char c) {
  mapopt__sb_putn(sb, &c, 1);
}

void mapopt__sb_vprintf(mapopt__strbuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || !sb_reserve(sb, (size_t)n))
    return;
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void mapopt__sb_printf(mapopt__strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mapopt__sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

char *mapopt__sb_take(mapopt__strbuf *sb, size_t *len) {
  if (!sb->data && !sb_reserve(sb, 0))
    return NULL;
  if (sb->failed) {
    mapopt__sb_destroy(sb);
    return NULL;
  }
  /* Shrink to len + 1 so the caller can free with the length it knows. */
  char *d = mapopt__realloc(sb->ctx, sb->data, sb->cap, sb->len + 1);
  if (!d) {
    mapopt__sb_destroy(sb);
    return NULL;
  }
  if (len)
    *len = sb->len;
  sb->data = NULL;
  sb->len = sb->cap = 0;
  return d;
}

/* ---- map -------------------------------------------------------------- */

/* FNV-1a: small, fast enough for identifiers and keys, and deterministic. */
uint64_t mapopt__hash_bytes(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ull;
  }
  return h;
}

void mapopt__map_init(mapopt__map *m) {
  m->slots = NULL;
  m->cap = m->len = 0;
}

void mapopt__map_destroy(mapopt__map *m, mapopt_ctx *ctx) {
  mapopt__free(ctx, m->slots, m->cap * sizeof *m->slots);
  mapopt__map_init(m);
}

static mapopt__map_entry *probe(mapopt__map_entry *slots, size_t cap,
                                const char *key, size_t keylen, uint64_t h) {
  size_t i = (size_t)h & (cap - 1);
  for (;;) {
    mapopt__map_entry *e = &slots[i];
    if (!e->key || (e->hash == h && e->keylen == keylen &&
                    memcmp(e->key, key, keylen) == 0))
      return e;
    i = (i + 1) & (cap - 1);
  }
}

mapopt__map_entry *mapopt__map_find(const mapopt__map *m, const char *key,
                                    size_t keylen) {
  if (!m->cap)
    return NULL;
  mapopt__map_entry *e =
      probe(m->slots, m->cap, key, keylen, mapopt__hash_bytes(key, keylen));
  return e->key ? e : NULL;
}

mapopt__map_entry *mapopt__map_upsert(mapopt__map *m, mapopt_ctx *ctx,
                                      const char *key, size_t keylen,
                                      bool *inserted) {
  uint64_t h = mapopt__hash_bytes(key, keylen);
  if ((m->len + 1) * 4 > m->cap * 3) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    mapopt__map_entry *slots = mapopt__calloc(ctx, cap, sizeof *slots);
    if (!slots)
      return NULL;
    for (size_t i = 0; i < m->cap; i++) {
      mapopt__map_entry *old = &m->slots[i];
      if (old->key)
        *probe(slots, cap, old->key, old->keylen, old->hash) = *old;
    }
    mapopt__free(ctx, m->slots, m->cap * sizeof *m->slots);
    m->slots = slots;
    m->cap = cap;
  }
  mapopt__map_entry *e = probe(m->slots, m->cap, key, keylen, h);
  if (inserted)
    *inserted = !e->key;
  if (!e->key) {
    e->key = key;
    e->keylen = keylen;
    e->hash = h;
    e->value = NULL;
    m->len++;
  }
  return e;
}

/* ---- heap ------------------------------------------------------------- */

/* (time, seq) as one unsigned 128-bit number (time's sign bit flipped, so
 * that signed order is unsigned order): the comparison is a compare and a
 * subtract with borrow, no branch -- which child is less is a coin toss the
 * branch predictor loses about half the time. */
static unsigned __int128 item_key(const mapopt__heap_item *a) {
  return (unsigned __int128)((uint64_t)a->time ^ (UINT64_C(1) << 63)) << 64 |
         a->seq;
}

static bool item_less(const mapopt__heap_item *a, const mapopt__heap_item *b) {
  return item_key(a) < item_key(b);
}

/* Puts it in the hole at i, moving the greater parents down into it. */
static void sift_up(mapopt__heap_item *items, size_t i, mapopt__heap_item it) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!item_less(&it, &items[parent]))
      break;
    items[i] = items[parent];
    i = parent;
  }
  items[i] = it;
}

void mapopt__heap_init(mapopt__heap *h) {
  h->items = NULL;
  h->len = h->cap = 0;
  h->next_seq = 0;
}

void mapopt__heap_destroy(mapopt__heap *h, mapopt_ctx *ctx) {
  mapopt__free(ctx, h->items, h->cap * sizeof *h->items);
  mapopt__heap_init(h);
}

mapopt_status mapopt__heap_push(mapopt__heap *h, mapopt_ctx *ctx, int64_t time,
                                void *data) {
  return mapopt__heap_push_keyed(h, ctx, time, h->next_seq++, data);
}

uint64_t mapopt__heap_take_seq(mapopt__heap *h) {
  return h->next_seq++;
}

mapopt_status mapopt__heap_push_keyed(mapopt__heap *h, mapopt_ctx *ctx,
                                      int64_t time, uint64_t seq, void *data) {
  if (h->len == h->cap) {
    size_t cap = h->cap;
    if (!grow_cap(&cap, h->len + 1, sizeof *h->items))
      return MAPOPT_ENOMEM;
    mapopt__heap_item *d = mapopt__grow_block(
        ctx, h->items, h->cap * sizeof *h->items, cap * sizeof *h->items);
    if (!d)
      return MAPOPT_ENOMEM;
    h->items = d;
    h->cap = cap;
  }
  mapopt__heap_item it = {time, seq, data};
  sift_up(h->items, h->len++, it);
  return MAPOPT_OK;
}

bool mapopt__heap_pop(mapopt__heap *h, mapopt__heap_item *out) {
  if (!h->len)
    return false;
  *out = h->items[0];
  size_t n = --h->len;
  if (!n)
    return true;
  /* Bottom-up: the hole at the root goes down along the lesser children to
   * a leaf, then the last item, which came from the bottom and mostly
   * belongs near it, rises from there: about one comparison per level
   * instead of two. */
  mapopt__heap_item last = h->items[n];
  size_t i = 0, c = 1;
  for (; c + 1 < n; c = 2 * i + 1) { /* both children there */
    c += item_less(&h->items[c + 1], &h->items[c]);
    h->items[i] = h->items[c];
    i = c;
  }
  if (c < n) { /* an only child */
    h->items[i] = h->items[c];
    i = c;
  }
  sift_up(h->items, i, last);
  return true;
}

/* ---- fifo ------------------------------------------------------------- */

void mapopt__fifo_init(mapopt__fifo *q) {
  q->items = NULL;
  q->head = q->len = q->cap = 0;
}

void mapopt__fifo_destroy(mapopt__fifo *q, mapopt_ctx *ctx) {
  mapopt__free(ctx, q->items, q->cap * sizeof *q->items);
  mapopt__fifo_init(q);
}

mapopt_status mapopt__fifo_push(mapopt__fifo *q, mapopt_ctx *ctx, int64_t v) {
  if (q->len == q->cap && q->head > 0) {
    /* Popped items leave room at the front: move the queued ones down. */
    memmove(q->items, q->items + q->head,
            (q->len - q->head) * sizeof *q->items);
    q->len -= q->head;
    q->head = 0;
  }
  if (q->len == q->cap) {
    size_t cap = q->cap;
    if (!grow_cap(&cap, q->len + 1, sizeof *q->items))
      return MAPOPT_ENOMEM;
    int64_t *d = mapopt__grow_block(ctx, q->items, q->cap * sizeof *q->items,
                                    cap * sizeof *q->items);
    if (!d)
      return MAPOPT_ENOMEM;
    q->items = d;
    q->cap = cap;
  }
  q->items[q->len++] = v;
  return MAPOPT_OK;
}

bool mapopt__fifo_pop(mapopt__fifo *q, int64_t *out) {
  if (q->head == q->len)
    return false;
  *out = q->items[q->head++];
  if (q->head == q->len)
    q->head = q->len = 0;
  return true;
}

/* ---- rng -------------------------------------------------------------- */

uint64_t mapopt__splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void mapopt__rng_seed(mapopt__rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    r->s[i] = mapopt__splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t mapopt__rng_next(mapopt__rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t mapopt__rng_below(mapopt__rng *r, uint64_t n) {
  /* Rejection sampling: draws in the incomplete last block are redrawn. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = mapopt__rng_next(r);
  } while (x >= limit);
  return x % n;
}

double mapopt__rng_double(mapopt__rng *r) {
  return (double)(mapopt__rng_next(r) >> 11) * 0x1.0p-53;
}

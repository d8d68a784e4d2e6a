/*
 * Internal core utilities shared by every module: allocation through the
 * context's hook, arenas, growable vectors, string buffers, a string-keyed
 * hash map, an indexed binary heap with (time, sequence) ordering, a FIFO
 * queue, and a seeded RNG. Nothing here is installed or part of the public
 * API.
 *
 * Out of memory is always reported to the caller (a NULL result or a
 * MAPOPT_ENOMEM status); nothing here aborts.
 */
#ifndef MAPOPT_SRC_CORE_H
#define MAPOPT_SRC_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mapopt/core.h"

/* A macro's value as a string literal: messages that name a limit say the
 * limit's value from its one definition. */
#define MAPOPT__STR(x) MAPOPT__STR_(x)
#define MAPOPT__STR_(x) #x

struct mapopt_ctx {
  mapopt_alloc_fn alloc;
  void *alloc_ud;
};

/* Allocation through the context's hook. NULL on failure. Blocks of 2 MiB
 * and more are advised as huge pages (mapopt__advise_huge). */
void *mapopt__malloc(mapopt_ctx *ctx, size_t n);
void *mapopt__calloc(mapopt_ctx *ctx, size_t count, size_t size);
void *mapopt__realloc(mapopt_ctx *ctx, void *p, size_t osize, size_t nsize);
void mapopt__free(mapopt_ctx *ctx, void *p, size_t size);
/* A copy of s (n bytes, NUL appended), or NULL. */
char *mapopt__strndup(mapopt_ctx *ctx, const char *s, size_t n);

/* Advises the kernel to back the 2 MiB-aligned pages inside [p, p + n) with
 * huge pages (Linux's transparent huge pages, which in "madvise" mode only
 * programs that ask get); nothing for blocks under 2 MiB or elsewhere. It
 * changes only how fast fresh memory is faulted in: on the development VM
 * a first touch of 256 MiB takes 0.73 s in 4 KiB pages, 0.02 s in huge
 * pages. Memory still comes from the context's hook. */
void mapopt__advise_huge(void *p, size_t n);
/* mapopt__realloc for an array that grows: from 2 MiB on, a fresh block,
 * advised as huge pages before the old contents are copied in (a block
 * that realloc extends keeps the small pages it has, and advice given
 * after realloc comes too late for the pages it copied). */
void *mapopt__grow_block(mapopt_ctx *ctx, void *p, size_t osize, size_t nsize);

/* ---- arena: bump allocation, freed in one call ------------------------ */

typedef struct mapopt__arena_block mapopt__arena_block;
typedef struct mapopt__arena {
  mapopt_ctx *ctx;
  mapopt__arena_block *first; /* blocks in allocation order */
  mapopt__arena_block *cur;   /* the block being filled */
  size_t used;                /* bytes used in cur */
  size_t total; /* bytes allocated from the hook, for statistics */
} mapopt__arena;

void mapopt__arena_init(mapopt__arena *a, mapopt_ctx *ctx);
/* Frees every block. The arena may be reused afterwards. */
void mapopt__arena_destroy(mapopt__arena *a);
/* Rewinds: everything allocated is released at once, and the blocks are
 * kept for the next allocations (cheap reuse of scratch memory). */
void mapopt__arena_reset(mapopt__arena *a);
/* n bytes aligned to 16, or NULL. Contents are uninitialized. */
void *mapopt__arena_alloc(mapopt__arena *a, size_t n);
void *mapopt__arena_zalloc(mapopt__arena *a, size_t n);
/* Grows p, an allocation of oldn bytes (NULL: none), to newn bytes and
 * returns it, moved or not, the first oldn bytes kept; NULL on ENOMEM (p
 * untouched). The latest allocation grows in place when its block has
 * room; one larger than a chunk, which has a block of its own, grows with
 * its block: a list that doubles as it is parsed costs its final size, not
 * twice that. */
void *mapopt__arena_grow(mapopt__arena *a, void *p, size_t oldn, size_t newn);
char *mapopt__arena_strndup(mapopt__arena *a, const char *s, size_t n);
char *mapopt__arena_printf(mapopt__arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *mapopt__arena_vprintf(mapopt__arena *a, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* ---- vec: growable array of fixed-size elements ----------------------- */

typedef struct mapopt__vec {
  void *data;
  size_t len;
  size_t cap;
  size_t elem;
} mapopt__vec;

void mapopt__vec_init(mapopt__vec *v, size_t elem);
void mapopt__vec_destroy(mapopt__vec *v, mapopt_ctx *ctx);
/* Room for one more element; false when out of memory. */
bool mapopt__vec_grow(mapopt__vec *v, mapopt_ctx *ctx);
/* Pointer to a new zeroed element at the end, or NULL. Inline, the growth
 * out of line: the simulator pushes a few elements per op. */
static inline void *mapopt__vec_push(mapopt__vec *v, mapopt_ctx *context) {
  if (v->len == v->cap && !mapopt__vec_grow(v, context))
    return NULL;
  void *slot = (char *)v->data + v->len++ * v->elem;
  memset(slot, 0, v->elem);
  return slot;
}
#define MAPOPT__VEC_AT(v, type, i) (((type *)(v)->data)[i])

/* ---- strbuf: growable NUL-terminated string --------------------------- */

typedef struct mapopt__strbuf {
  mapopt_ctx *ctx;
  char *data; /* always NUL-terminated once init'ed */
  size_t len;
  size_t cap;
  bool failed; /* an allocation failed; contents are truncated */
} mapopt__strbuf;

void mapopt__sb_init(mapopt__strbuf *sb, mapopt_ctx *ctx);
void mapopt__sb_destroy(mapopt__strbuf *sb);
void mapopt__sb_putn(mapopt__strbuf *sb, const char *s, size_t n);
void mapopt__sb_puts(mapopt__strbuf *sb, const char *s);
void mapopt__sb_putc(mapopt__strbuf *sb, char c);
void mapopt__sb_printf(mapopt__strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mapopt__sb_vprintf(mapopt__strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Appends diagnostic d formatted as mapopt_diag_format does, whole. */
void mapopt__sb_diag(mapopt__strbuf *sb, const mapopt_diag *d);
/* Takes the buffer (caller frees with mapopt__free(ctx, p, len + 1)). */
char *mapopt__sb_take(mapopt__strbuf *sb, size_t *len);

/* ---- texts handed to callers (mapopt_text_free) ------------------------ */

/* A text of len bytes copied from data, NUL added, which mapopt_text_free
 * frees; NULL on ENOMEM. */
char *mapopt__text_new(mapopt_ctx *ctx, const char *data, size_t len);
/* The contents of sb as such a text (its length in *len if not NULL); sb is
 * destroyed. NULL when sb had failed or on ENOMEM. */
char *mapopt__text_take(mapopt__strbuf *sb, size_t *len);
/* The formatted text as such a text; NULL on ENOMEM. */
char *mapopt__text_printf(mapopt_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *mapopt__text_vprintf(mapopt_ctx *ctx, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* ---- texts compiled into the library (cmake/embed.cmake) --------------- */

/* One entry of a generated table; a table ends with {NULL, NULL}. */
typedef struct mapopt__embedded {
  const char *name; /* the path below the table's folder, no extension */
  const char *text;
} mapopt__embedded;

/* The text of the entry called name in table, or NULL. */
const char *mapopt__embedded_find(const mapopt__embedded *table,
                                  const char *name);

/* ---- map: string key -> void* value, open addressing ------------------ */

typedef struct mapopt__map_entry {
  const char *key; /* not owned */
  size_t keylen;
  uint64_t hash;
  void *value;
} mapopt__map_entry;

typedef struct mapopt__map {
  mapopt__map_entry *slots;
  size_t cap; /* power of two, or 0 */
  size_t len;
} mapopt__map;

uint64_t mapopt__hash_bytes(const void *p, size_t n);
void mapopt__map_init(mapopt__map *m);
void mapopt__map_destroy(mapopt__map *m, mapopt_ctx *ctx);
/* The entry for key, or NULL. */
mapopt__map_entry *mapopt__map_find(const mapopt__map *m, const char *key,
                                    size_t keylen);
/*
 * The entry for key, inserting it with value NULL if absent (*inserted tells
 * which). The key is not copied: it must outlive the map. NULL on ENOMEM.
 */
mapopt__map_entry *mapopt__map_upsert(mapopt__map *m, mapopt_ctx *ctx,
                                      const char *key, size_t keylen,
                                      bool *inserted);

/* ---- heap: min-heap of (time, seq) keyed items ------------------------ */

/*
 * Equal times pop in insertion order (seq is a counter the heap assigns),
 * so a simulation driven by it is bit-reproducible.
 */
typedef struct mapopt__heap_item {
  int64_t time;
  uint64_t seq;
  void *data;
} mapopt__heap_item;

typedef struct mapopt__heap {
  mapopt__heap_item *items;
  size_t len;
  size_t cap;
  uint64_t next_seq;
} mapopt__heap;

void mapopt__heap_init(mapopt__heap *h);
void mapopt__heap_destroy(mapopt__heap *h, mapopt_ctx *ctx);
mapopt_status mapopt__heap_push(mapopt__heap *h, mapopt_ctx *ctx, int64_t time,
                                void *data);
/* For items queued outside the heap in (time, seq) order, whose head alone
 * sits in it: the next sequence number, taken when the item is queued, and
 * the push of an item with the number it took. */
uint64_t mapopt__heap_take_seq(mapopt__heap *h);
mapopt_status mapopt__heap_push_keyed(mapopt__heap *h, mapopt_ctx *ctx,
                                      int64_t time, uint64_t seq, void *data);
/* Pops the least (time, seq) item into *out; false when empty. */
bool mapopt__heap_pop(mapopt__heap *h, mapopt__heap_item *out);

/* ---- fifo: a first-in first-out queue of int64_t ---------------------- */

typedef struct mapopt__fifo {
  int64_t *items; /* items[head .. len) are queued */
  size_t head, len, cap;
} mapopt__fifo;

void mapopt__fifo_init(mapopt__fifo *q);
void mapopt__fifo_destroy(mapopt__fifo *q, mapopt_ctx *ctx);
mapopt_status mapopt__fifo_push(mapopt__fifo *q, mapopt_ctx *ctx, int64_t v);
/* The oldest item into *out; false when empty. */
bool mapopt__fifo_pop(mapopt__fifo *q, int64_t *out);

/* ---- rng: splitmix64 seeding a xoshiro256** stream -------------------- */

typedef struct mapopt__rng {
  uint64_t s[4];
} mapopt__rng;

uint64_t mapopt__splitmix64(uint64_t *state);
void mapopt__rng_seed(mapopt__rng *r, uint64_t seed);
uint64_t mapopt__rng_next(mapopt__rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
uint64_t mapopt__rng_below(mapopt__rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double mapopt__rng_double(mapopt__rng *r);

/* ---- checked 64-bit arithmetic ---------------------------------------- */

static inline bool mapopt__add_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}
static inline bool mapopt__sub_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_sub_overflow(a, b, r);
}
static inline bool mapopt__mul_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
/* Saturating forms for non-negative quantities (counts, times, bytes):
 * a result past INT64_MAX is INT64_MAX, which every limit then refuses. */
static inline int64_t mapopt__sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static inline int64_t mapopt__sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

#endif /* MAPOPT_SRC_CORE_H */

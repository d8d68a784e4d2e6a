/*
 * Allocation through the context's hook, and arenas. An arena hands out
 * 16-byte aligned blocks from large chunks and frees them all at once; it is
 * how parsed programs and evaluation scratch are owned, so that an error
 * anywhere can never leak a partial tree.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "core/core.h"

/* Transparent huge pages come in 2 MiB; a block is advised when it holds
 * one. A 2 to 4 MiB array in small pages takes 512 to 1024 faults where
 * huge ones take two (on the VMs of docs/sim.md, "Benchmarks", ~11 us a
 * small one: a tenth of a second in a 10^6-task plan build, which has a
 * dozen such arrays); the price is at most one huge page partly used. */
enum { HUGE_PAGE = 2 * 1024 * 1024, HUGE_MIN = HUGE_PAGE };
/* Aligning a block costs a huge page of address space (untouched, but the
 * context's hook counts it): only blocks of two or more are aligned. */
enum { HUGE_ALIGN_MIN = 2 * HUGE_PAGE };

void mapopt__advise_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (!p || n < HUGE_MIN)
    return;
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (hi > lo)
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only */
#else
  (void)p;
  (void)n;
#endif
}

void *mapopt__malloc(mapopt_ctx *ctx, size_t n) {
  void *p = ctx->alloc(ctx->alloc_ud, NULL, 0, n ? n : 1);
  mapopt__advise_huge(p, n);
  return p;
}

void *mapopt__calloc(mapopt_ctx *ctx, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size)
    return NULL;
  void *p = mapopt__malloc(ctx, count * size);
  if (p)
    memset(p, 0, count * size);
  return p;
}

void *mapopt__realloc(mapopt_ctx *ctx, void *p, size_t osize, size_t nsize) {
  return ctx->alloc(ctx->alloc_ud, p, p ? osize : 0, nsize ? nsize : 1);
}

void mapopt__free(mapopt_ctx *ctx, void *p, size_t size) {
  if (p)
    ctx->alloc(ctx->alloc_ud, p, size, 0);
}

char *mapopt__strndup(mapopt_ctx *ctx, const char *s, size_t n) {
  if (n == SIZE_MAX)
    return NULL;
  char *d = mapopt__malloc(ctx, n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

void *mapopt__grow_block(mapopt_ctx *ctx, void *p, size_t osize, size_t nsize) {
  if (nsize < HUGE_MIN || osize >= nsize)
    return mapopt__realloc(ctx, p, osize, nsize);
  void *d = mapopt__malloc(ctx, nsize);
  if (!d)
    return NULL;
  if (p) {
    memcpy(d, p, osize);
    mapopt__free(ctx, p, osize);
  }
  return d;
}

struct mapopt__arena_block {
  mapopt__arena_block *next;
  size_t size;         /* usable bytes at data */
  size_t bytes;        /* bytes taken from the hook, header included */
  unsigned char *data; /* 16-byte aligned; 2 MiB aligned in huge blocks */
};

/* A new chunk holds an eighth of what the arena already has, between 16
 * KiB and 64 MiB: a large arena (a plan, a run of a million ops) takes a
 * few large blocks instead of thousands of small ones, and never leaves
 * more than an eighth of itself unused at the end of its last chunk. A
 * block of HUGE_ALIGN_MIN bytes or more starts on a 2 MiB boundary (it
 * asks for a huge page more, which is never touched) and is advised as
 * huge pages as a whole; a smaller one gets the huge pages inside it. */
enum { ARENA_CHUNK = 16 * 1024, ARENA_CHUNK_MAX = 64 * 1024 * 1024 };

static size_t chunk_size(const mapopt__arena *a, size_t n) {
  size_t size = a->total / 8;
  if (size < ARENA_CHUNK)
    size = ARENA_CHUNK;
  if (size > ARENA_CHUNK_MAX)
    size = ARENA_CHUNK_MAX;
  if (n > size)
    size = n;
  /* A block of one to two huge pages is made two: aligned, all of it is
   * in huge pages, and the arena uses what its first allocation leaves. */
  if (size >= HUGE_PAGE && size < HUGE_ALIGN_MIN)
    size = HUGE_ALIGN_MIN;
  return size;
}

/* A block of size usable bytes, or NULL. */
static mapopt__arena_block *block_new(mapopt__arena *a, size_t size) {
  size_t head = (sizeof(mapopt__arena_block) + 15) & ~(size_t)15;
  size_t pad = head + (size >= HUGE_ALIGN_MIN ? HUGE_PAGE : 0);
  if (size > SIZE_MAX - pad)
    return NULL;
  mapopt__arena_block *b = mapopt__malloc(a->ctx, size + pad);
  if (!b)
    return NULL;
  uintptr_t at = (uintptr_t)b + head;
  if (size >= HUGE_ALIGN_MIN)
    at += (HUGE_PAGE - at % HUGE_PAGE) % HUGE_PAGE;
  b->size = size;
  b->bytes = size + pad;
  b->data = (unsigned char *)at; /* mapopt__malloc advised the pages */
  a->total += size;
  return b;
}

void mapopt__arena_init(mapopt__arena *a, mapopt_ctx *ctx) {
  a->ctx = ctx;
  a->first = a->cur = NULL;
  a->used = 0;
  a->total = 0;
}

void mapopt__arena_destroy(mapopt__arena *a) {
  mapopt__arena_block *b = a->first;
  while (b) {
    mapopt__arena_block *next = b->next;
    mapopt__free(a->ctx, b, b->bytes);
    b = next;
  }
  mapopt__arena_init(a, a->ctx);
}

void mapopt__arena_reset(mapopt__arena *a) {
  /* Keep every block: the next round of allocations reuses them in order,
   * with no allocator calls and no fresh pages to fault in. */
  a->cur = NULL;
  a->used = 0;
}

void *mapopt__arena_alloc(mapopt__arena *a, size_t n) {
  if (n > SIZE_MAX - 15)
    return NULL;
  n = (n + 15) & ~(size_t)15;
  if (n == 0)
    n = 16;
  if (!a->cur || a->cur->size - a->used < n) {
    /* The next kept block that is large enough, else a new one after the
     * current block. Kept blocks too small for n wait for the next reset. */
    mapopt__arena_block *prev = a->cur;
    mapopt__arena_block *b = prev ? prev->next : a->first;
    while (b && b->size < n) {
      prev = b;
      b = b->next;
    }
    if (!b) {
      b = block_new(a, chunk_size(a, n));
      if (!b)
        return NULL;
      b->next = prev ? prev->next : NULL;
      if (prev)
        prev->next = b;
      else
        a->first = b;
    }
    a->cur = b;
    a->used = 0;
  }
  void *p = a->cur->data + a->used;
  a->used += n;
  return p;
}

/* n rounded up to the arena's alignment. */
static size_t rounded(size_t n) {
  n = (n + 15) & ~(size_t)15;
  return n ? n : 16;
}

void *mapopt__arena_grow(mapopt__arena *a, void *p, size_t oldn, size_t newn) {
  if (!p)
    return mapopt__arena_alloc(a, newn);
  if (newn > SIZE_MAX - 15 - sizeof(mapopt__arena_block) - HUGE_PAGE ||
      oldn > newn)
    return NULL;
  mapopt__arena_block *cur = a->cur;
  size_t o = rounded(oldn), n = rounded(newn);
  if (cur && (unsigned char *)p + o == cur->data + a->used &&
      cur->size - (a->used - o) >= n) { /* the latest, with room after it */
    a->used += n - o;
    return p;
  }
  if (o > ARENA_CHUNK) {
    /* A large p may have a block of its own: then the block is replaced by
     * a larger one and freed, so that a list that doubles as it grows
     * costs its final size, not twice that. */
    mapopt__arena_block **link = &a->first;
    while (*link && (*link)->data != (unsigned char *)p)
      link = &(*link)->next;
    mapopt__arena_block *b = *link;
    if (b && b->size == o) {
      mapopt__arena_block *nb = block_new(a, n);
      if (!nb)
        return NULL;
      memcpy(nb->data, b->data, oldn);
      nb->next = b->next;
      *link = nb;
      if (cur == b) {
        a->cur = nb;
        a->used = n;
      }
      a->total -= b->size;
      mapopt__free(a->ctx, b, b->bytes);
      return nb->data;
    }
  }
  if (n > ARENA_CHUNK) {
    /* Past a chunk, the list moves to a block of its own, among the blocks
     * in use (before the current one), so that it grows as above. */
    mapopt__arena_block *nb = block_new(a, n);
    if (!nb)
      return NULL;
    memcpy(nb->data, p, oldn);
    if (!cur) {
      nb->next = a->first;
      a->first = nb;
      a->cur = nb;
      a->used = n;
    } else {
      mapopt__arena_block **link = &a->first;
      while (*link != cur)
        link = &(*link)->next;
      nb->next = cur;
      *link = nb;
    }
    return nb->data;
  }
  void *d = mapopt__arena_alloc(a, newn);
  if (d)
    memcpy(d, p, oldn);
  return d;
}

void *mapopt__arena_zalloc(mapopt__arena *a, size_t n) {
  void *p = mapopt__arena_alloc(a, n);
  if (p)
    memset(p, 0, n);
  return p;
}

char *mapopt__arena_strndup(mapopt__arena *a, const char *s, size_t n) {
  if (n == SIZE_MAX)
    return NULL;
  char *d = mapopt__arena_alloc(a, n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

char *mapopt__arena_vprintf(mapopt__arena *a, const char *fmt, va_list ap) {
  /* Short texts (the common case) are formatted once, into first; a longer
   * one is formatted again, whole, into its exact allocation. */
  char first[128];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(first, sizeof first, fmt, ap2);
  va_end(ap2);
  char *d = n < 0 ? NULL : mapopt__arena_alloc(a, (size_t)n + 1);
  if (d && (size_t)n < sizeof first)
    memcpy(d, first, (size_t)n + 1);
  else if (d)
    vsnprintf(d, (size_t)n + 1, fmt, ap);
  return d;
}

char *mapopt__arena_printf(mapopt__arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *d = mapopt__arena_vprintf(a, fmt, ap);
  va_end(ap);
  return d;
}

/*
 * Allocation through the context's hook, and arenas. An arena hands out
 * 16-byte aligned blocks from large chunks and frees them all at once; it is
 * how parsed programs and evaluation scratch are owned, so that an error
 * anywhere can never leak a partial tree.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

void *mapopt__malloc(mapopt_ctx *ctx, size_t n) {
  return ctx->alloc(ctx->alloc_ud, NULL, 0, n ? n : 1);
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

struct mapopt__arena_block {
  mapopt__arena_block *next;
  size_t size; /* usable bytes after the header */
  _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK = 16 * 1024 };

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
    mapopt__free(a->ctx, b, sizeof *b + b->size);
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
      size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
      if (size > SIZE_MAX - sizeof(mapopt__arena_block))
        return NULL;
      b = mapopt__malloc(a->ctx, sizeof(mapopt__arena_block) + size);
      if (!b)
        return NULL;
      b->size = size;
      a->total += size;
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
  if (newn > SIZE_MAX - 15 - sizeof(mapopt__arena_block) || oldn > newn)
    return NULL;
  mapopt__arena_block *cur = a->cur;
  size_t o = rounded(oldn), n = rounded(newn);
  if (cur && (unsigned char *)p + o == cur->data + a->used &&
      cur->size - (a->used - o) >= n) { /* the latest, with room after it */
    a->used += n - o;
    return p;
  }
  if (o > ARENA_CHUNK) {
    /* A large p has a block of its own: resize the block, so that a list
     * that doubles as it grows costs its final size, not twice that. */
    mapopt__arena_block **link = &a->first;
    while (*link && (*link)->data != (unsigned char *)p)
      link = &(*link)->next;
    mapopt__arena_block *b = *link;
    if (b && b->size == o) {
      mapopt__arena_block *nb =
          mapopt__realloc(a->ctx, b, sizeof *b + o, sizeof *nb + n);
      if (!nb)
        return NULL;
      nb->size = n;
      a->total += n - o;
      *link = nb;
      if (cur == b) {
        a->cur = nb;
        a->used = n;
      }
      return nb->data;
    }
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

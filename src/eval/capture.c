/*
 * Bounded capture of a command's output: the first quarter of the budget
 * keeps the head of the stream (how the program started: its settings,
 * early errors), the rest keeps the tail in a ring (how it ended: the
 * metric line, the final error). A program printing 100 MB costs the same
 * memory as one printing the budget, and the text handed to AutoGuide
 * says how much was dropped between the two parts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "eval/eval.h"

/* The ring holds one byte more than the tail shows: the byte before the
 * tail, which says whether the tail starts at a line boundary. */
static size_t ring_size(const mapopt__capture *c) {
  return c->tail_cap + 1;
}

void mapopt__capture_init(mapopt__capture *c, mapopt_ctx *ctx, size_t cap) {
  memset(c, 0, sizeof *c);
  c->ctx = ctx;
  c->head_cap = cap / 4;
  c->tail_cap = cap - c->head_cap;
}

void mapopt__capture_destroy(mapopt__capture *c) {
  mapopt__free(c->ctx, c->head, c->head_alloc);
  mapopt__free(c->ctx, c->tail, ring_size(c));
  c->head = c->tail = NULL;
  c->head_alloc = 0;
}

/* Room for need bytes in the head, grown geometrically up to head_cap. */
static bool reserve_head(mapopt__capture *c, size_t need) {
  if (need <= c->head_alloc)
    return true;
  size_t n = c->head_alloc ? c->head_alloc : 4096;
  while (n < need)
    n *= 2;
  if (n > c->head_cap)
    n = c->head_cap;
  char *p = mapopt__realloc(c->ctx, c->head, c->head_alloc, n);
  if (!p)
    return false;
  c->head = p;
  c->head_alloc = n;
  return true;
}

mapopt_status mapopt__capture_add(mapopt__capture *c, const char *data,
                                  size_t n) {
  size_t h = c->head_cap - c->head_len;
  if (h > n)
    h = n;
  size_t rest = n - h, ring = ring_size(c);
  /* Allocate first, so that a failure leaves the capture unchanged. */
  if (h && !reserve_head(c, c->head_len + h))
    return MAPOPT_ENOMEM;
  if (rest && !c->tail) {
    c->tail = mapopt__malloc(c->ctx, ring);
    if (!c->tail)
      return MAPOPT_ENOMEM;
  }
  if (h)
    memcpy(c->head + c->head_len, data, h);
  c->head_len += h;
  c->total += n;
  data += h;
  if (!rest)
    return MAPOPT_OK;
  if (rest >= ring) {
    memcpy(c->tail, data + rest - ring, ring);
    c->tail_pos = 0;
    c->tail_len = ring;
    return MAPOPT_OK;
  }
  size_t first = ring - c->tail_pos;
  if (first > rest)
    first = rest;
  memcpy(c->tail + c->tail_pos, data, first);
  memcpy(c->tail, data + first, rest - first);
  c->tail_pos = (c->tail_pos + rest) % ring;
  c->tail_len = c->tail_len + rest > ring ? ring : c->tail_len + rest;
  return MAPOPT_OK;
}

/* Byte i (0 = oldest) of the tail ring. */
static char tail_at(const mapopt__capture *c, size_t i) {
  size_t ring = ring_size(c);
  return c->tail[(c->tail_pos + ring - c->tail_len + i) % ring];
}

mapopt_status mapopt__capture_text(const mapopt__capture *c, char **text,
                                   size_t *len, uint64_t *dropped) {
  uint64_t lost = c->total - c->head_len - c->tail_len;
  size_t skip = 0, head_len = c->head_len;
  char marker[80] = "";
  if (lost) {
    /* The oldest byte of the ring is not shown. When it does not end a
     * line, the tail starts at its first line boundary (if it has one), so
     * the text shows no half line next to the marker. */
    skip = 1;
    if (tail_at(c, 0) != '\n') {
      size_t nl = skip;
      while (nl < c->tail_len && tail_at(c, nl) != '\n')
        nl++;
      if (nl + 1 < c->tail_len)
        skip = nl + 1;
    }
    /* Likewise the head ends at its last line boundary, if it has one. */
    while (head_len > 0 && c->head[head_len - 1] != '\n')
      head_len--;
    if (head_len == 0)
      head_len = c->head_len;
    lost += skip + (c->head_len - head_len);
    bool nl = head_len == 0 || c->head[head_len - 1] == '\n';
    snprintf(marker, sizeof marker,
             "%s[mapopt: %" PRIu64 " bytes of output dropped]\n",
             nl ? "" : "\n", lost);
  }
  size_t mlen = strlen(marker);
  size_t n = head_len + mlen + (c->tail_len - skip);
  char *s = mapopt__malloc(c->ctx, n + 1);
  if (!s)
    return MAPOPT_ENOMEM;
  if (head_len)
    memcpy(s, c->head, head_len);
  memcpy(s + head_len, marker, mlen);
  char *t = s + head_len + mlen;
  for (size_t i = skip; i < c->tail_len; i++)
    *t++ = tail_at(c, i);
  s[n] = '\0';
  /* One C string for AutoGuide, regexec and JSON. */
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\0')
      s[i] = ' ';
  *text = s;
  *len = n;
  *dropped = lost;
  return MAPOPT_OK;
}

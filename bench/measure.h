/*
 * What the benchmarks (bench_sim, bench_scale) measure with: a clock in
 * seconds, and a counting allocator that, given to mapopt_ctx_new, counts
 * the bytes the library holds and their peak, and the allocator calls.
 * Every byte the library allocates goes through the context's hook, so the
 * counts are the library's own memory.
 */
#ifndef MAPOPT_BENCH_MEASURE_H
#define MAPOPT_BENCH_MEASURE_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* The time of clock id (CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC, ...) in
 * seconds. */
static inline double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct counter {
  int64_t live, peak, calls;
} counter;

/* Each block carries its size in a 16-byte header, so the count does not
 * depend on the osize the library passes. */
static inline void *count_alloc(void *ud, void *ptr, size_t osize,
                                size_t nsize) {
  counter *c = ud;
  (void)osize;
  char *base = ptr ? (char *)ptr - 16 : NULL;
  size_t old = base ? *(size_t *)base : 0;
  if (nsize == 0) {
    c->live -= (int64_t)old;
    free(base);
    return NULL;
  }
  char *nb = realloc(base, nsize + 16);
  if (!nb)
    return NULL;
  *(size_t *)nb = nsize;
  c->live += (int64_t)nsize - (int64_t)old;
  if (c->live > c->peak)
    c->peak = c->live;
  c->calls++;
  return nb + 16;
}

#endif

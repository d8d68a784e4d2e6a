/*
 * A result's memory: the result as the library allocates it (the public
 * struct first, then the arena that owns the names it points to), the
 * names it keeps, and its freeing. Below everything that fills a result
 * (result.c, attrib.c) or reads one back (report_read.c).
 */
#include <string.h>

#include "sim/sim.h"

/* A result as the library allocates it: the public struct first, then
 * what mapopt_sim_result_free and the names need. */
typedef struct result_impl {
  mapopt_sim_result pub;
  mapopt_ctx *ctx;
  mapopt__arena strings; /* owns the names the result points to */
} result_impl;

mapopt_sim_result *mapopt__sim_result_new(mapopt_ctx *ctx) {
  result_impl *r = mapopt__calloc(ctx, 1, sizeof *r);
  if (!r)
    return NULL;
  r->ctx = ctx;
  mapopt__arena_init(&r->strings, ctx);
  return &r->pub;
}

const char *mapopt__sim_result_string(mapopt_sim_result *res, const char *str) {
  result_impl *r = (result_impl *)res;
  return mapopt__arena_strndup(&r->strings, str, strlen(str));
}

void mapopt_sim_result_free(mapopt_sim_result *r) {
  if (!r)
    return;
  result_impl *impl = (result_impl *)r;
  mapopt_ctx *ctx = impl->ctx;
  mapopt__free(ctx, r->procs, r->nprocs * sizeof *r->procs);
  mapopt__free(ctx, r->mems, r->nmems * sizeof *r->mems);
  if (r->error_text)
    mapopt__free(ctx, r->error_text, strlen(r->error_text) + 1);
  if (r->log)
    mapopt__free(ctx, r->log, strlen(r->log) + 1);
  if (r->trace)
    mapopt__free(ctx, r->trace, strlen(r->trace) + 1);
  mapopt__free(ctx, r->decisions, r->ndecisions * sizeof *r->decisions);
  mapopt__free(ctx, r->waits, r->nwaits * sizeof *r->waits);
  mapopt__arena_destroy(&impl->strings);
  mapopt__free(ctx, impl, sizeof *impl);
}

/*
 * A result's memory: the result as the library allocates it (the public
 * struct first, then the arena that owns the names and argument lists it
 * points to), the names it keeps, its freeing, and the accessors that read
 * its lists. Below everything that fills a result (result.c,
 * attrib.c) or reads one back (report_read.c).
 */
#include <assert.h>
#include <string.h>

#include "sim/sim.h"

/* A result as the library allocates it: the public struct first, then
 * what mapopt_sim_result_free and the names need. */
typedef struct result_impl {
  mapopt_sim_result pub;
  mapopt_ctx *ctx;
  mapopt__arena owned; /* the names and argument lists it points to */
} result_impl;

mapopt_sim_result *mapopt__sim_result_new(mapopt_ctx *ctx) {
  result_impl *r = mapopt__calloc(ctx, 1, sizeof *r);
  if (!r)
    return NULL;
  r->ctx = ctx;
  mapopt__arena_init(&r->owned, ctx);
  return &r->pub;
}

const char *mapopt__sim_result_string(mapopt_sim_result *res, const char *str) {
  result_impl *r = (result_impl *)res;
  return mapopt__arena_strndup(&r->owned, str, strlen(str));
}

void *mapopt__sim_result_alloc(mapopt_sim_result *res, size_t n, size_t size) {
  result_impl *r = (result_impl *)res;
  if (n == 0 || n > SIZE_MAX / size)
    return NULL;
  return mapopt__arena_zalloc(&r->owned, n * size);
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
  mapopt__arena_destroy(&impl->owned);
  mapopt__free(ctx, impl, sizeof *impl);
}

/* ---- reading the lists ----------------------------------------------------
 *
 * The convention of the narrow view (include/mapopt/sim.h, the same as the
 * app run's getters): a NULL object or an index outside [0, count) is the
 * caller's bug. It asserts in a debug build and yields NULL (0 for a count)
 * in a release one, so that a bug never reads outside the result.
 */

size_t mapopt_sim_result_ntop(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->ntop : 0;
}

const mapopt_sim_task_stats *
mapopt_sim_result_top_task(const mapopt_sim_result *r, size_t i) {
  assert(r && i < r->ntop);
  return r && i < r->ntop ? &r->top_tasks[i] : NULL;
}

const mapopt_sim_task_stats *
mapopt_sim_result_task_named(const mapopt_sim_result *r, const char *task) {
  assert(r);
  for (size_t i = 0; r && task && i < r->ntop; i++)
    if (strcmp(r->top_tasks[i].task, task) == 0)
      return &r->top_tasks[i];
  return NULL;
}

size_t mapopt_sim_task_nreqs(const mapopt_sim_task_stats *t) {
  assert(t);
  return t && t->nreqs > 0 ? (size_t)t->nreqs : 0;
}

const mapopt_sim_req_stats *mapopt_sim_task_req(const mapopt_sim_task_stats *t,
                                                size_t i) {
  assert(t && i < mapopt_sim_task_nreqs(t));
  return t && i < mapopt_sim_task_nreqs(t) ? &t->reqs[i] : NULL;
}

size_t mapopt_sim_result_nwaits(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->nwaits : 0;
}

const mapopt_sim_wait *mapopt_sim_result_wait(const mapopt_sim_result *r,
                                              size_t i) {
  assert(r && i < r->nwaits);
  return r && i < r->nwaits ? &r->waits[i] : NULL;
}

size_t mapopt_sim_result_nprocs(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->nprocs : 0;
}

const mapopt_sim_proc_stats *mapopt_sim_result_proc(const mapopt_sim_result *r,
                                                    size_t i) {
  assert(r && i < r->nprocs);
  return r && i < r->nprocs ? &r->procs[i] : NULL;
}

size_t mapopt_sim_result_nmems(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->nmems : 0;
}

const mapopt_sim_mem_stats *mapopt_sim_result_mem(const mapopt_sim_result *r,
                                                  size_t i) {
  assert(r && i < r->nmems);
  return r && i < r->nmems ? &r->mems[i] : NULL;
}

const mapopt_sim_copy_stats *mapopt_sim_result_copy(const mapopt_sim_result *r,
                                                    int k) {
  assert(r && k >= 0 && k < MAPOPT_SIM_COPY_KINDS);
  return r && k >= 0 && k < MAPOPT_SIM_COPY_KINDS ? &r->copies[k] : NULL;
}

size_t mapopt_sim_result_nsegments(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->critical_path.nsegments : 0;
}

const mapopt_sim_segment *mapopt_sim_result_segment(const mapopt_sim_result *r,
                                                    size_t i) {
  assert(r && i < r->critical_path.nsegments);
  return r && i < r->critical_path.nsegments ? &r->critical_path.segments[i]
                                             : NULL;
}

size_t mapopt_sim_result_ndecisions(const mapopt_sim_result *r) {
  assert(r);
  return r ? r->ndecisions : 0;
}

const mapopt_sim_decision *
mapopt_sim_result_decision(const mapopt_sim_result *r, size_t i) {
  assert(r && i < r->ndecisions);
  return r && i < r->ndecisions ? &r->decisions[i] : NULL;
}

size_t mapopt_sim_decision_nreqs(const mapopt_sim_decision *d) {
  assert(d);
  return d && d->nreqs > 0 ? (size_t)d->nreqs : 0;
}

const mapopt_sim_decision_req *
mapopt_sim_decision_req_at(const mapopt_sim_decision *d, size_t i) {
  assert(d && i < mapopt_sim_decision_nreqs(d));
  return d && i < mapopt_sim_decision_nreqs(d) ? &d->reqs[i] : NULL;
}

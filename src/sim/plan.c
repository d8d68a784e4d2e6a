/*
 * Simulation plans (docs/sim.md, "From C"): the mapping-independent part of
 * simulating a run -- its dependence graph, the lists derived from it
 * (successors, RAW consumers, sibling order, issue
 * contexts) and the lower bound per machine -- built once and shared
 * read-only by concurrent evaluations, plus the pool of per-evaluation
 * workspaces whose memory is reused from one evaluation to the next.
 */
#include <string.h>

#include "sim/engine.h"

void mapopt__sim_workspace_init(pooled_arena *pa) {
  mapopt__vec_init(&pa->insts, sizeof(sim_inst));
  mapopt__vec_init(&pa->hpool, sizeof(hnode));
  mapopt__vec_init(&pa->waiters, sizeof(hnode));
  mapopt__vec_init(&pa->copies, sizeof(sim_copy));
  mapopt__vec_init(&pa->copy_afs, sizeof(caf));
  mapopt__vec_init(&pa->deps, sizeof(dnode));
  mapopt__vec_init(&pa->util_jobs, sizeof(util_job));
  mapopt__vec_init(&pa->flow_set, sizeof(int64_t));
  mapopt__vec_init(&pa->util_events, sizeof(util_event));
  mapopt__heap_init(&pa->events);
}

/* Inverts an adjacency list over n nodes into an m-node one. Without
 * group_off, node i's list is off[i]..off[i + 1] and i becomes an entry
 * of *out. With it, node i owns the sources group_off[i] .. group_off[i +
 * 1] (an op's requirements), each with its list in off, and source q of
 * node i becomes entry i of *out with q - group_off[i] at the same place
 * in *out_pos. The offsets are their own cursors: filling moves each
 * node's to the next one's start, and one pass moves them back. */
static mapopt_status invert(mapopt__arena *a, int64_t n,
                            const int32_t *group_off, const int32_t *off,
                            const int32_t *list, int64_t m, int32_t **out_off,
                            int32_t **out, uint8_t **out_pos) {
  int32_t *at = mapopt__arena_zalloc(a, (size_t)(m + 1) * sizeof *at);
  int64_t total = off[group_off ? group_off[n] : n];
  int32_t *res = mapopt__arena_alloc(a, (size_t)(total ? total : 1) * 4);
  uint8_t *res_pos =
      group_off ? mapopt__arena_alloc(a, (size_t)(total ? total : 1)) : NULL;
  if (!at || !res || (group_off && !res_pos))
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < total; i++)
    at[list[i] + 1]++;
  for (int64_t j = 0; j < m; j++)
    at[j + 1] += at[j];
  for (int64_t i = 0; i < n; i++) {
    int64_t q0 = group_off ? group_off[i] : i;
    int64_t q1 = group_off ? group_off[i + 1] : i + 1;
    for (int64_t q = q0; q < q1; q++)
      for (int64_t k = off[q]; k < off[q + 1]; k++) {
        int32_t e = at[list[k]]++;
        res[e] = (int32_t)i;
        if (res_pos)
          res_pos[e] = (uint8_t)(q - q0);
      }
  }
  /* Filled, at[j] is node j + 1's start. */
  for (int64_t j = m - 1; j > 0; j--)
    at[j] = at[j - 1];
  if (m > 0)
    at[0] = 0;
  *out_off = at;
  *out = res;
  if (out_pos)
    *out_pos = res_pos;
  return MAPOPT_OK;
}

/* The machine with its pointers cleared, for comparing by value. */
static mapopt_machine machine_key(const mapopt_machine *m) {
  mapopt_machine k;
  memset(&k, 0, sizeof k);
  k = *m;
  k.name = NULL;
  for (int i = 0; i < MAPOPT_PROC_KIND_COUNT; i++)
    k.procs[i].socket = NULL;
  return k;
}

mapopt_status mapopt__sim_plan_lower_bound(const mapopt_sim_plan *cplan,
                                           mapopt_ctx *ctx,
                                           const mapopt_machine *m,
                                           int64_t *lb) {
  mapopt_sim_plan *pl = (mapopt_sim_plan *)cplan; /* its cache only */
  mapopt_machine key = machine_key(m);
  pthread_mutex_lock(&pl->lock);
  bool hit = pl->lb_valid && memcmp(&key, &pl->lb_machine, sizeof key) == 0;
  int64_t v = pl->lb_ns;
  pthread_mutex_unlock(&pl->lock);
  if (!hit) {
    mapopt_status st = mapopt__sim_lower_bound(ctx, m, pl->run, &pl->dag, &v);
    if (st != MAPOPT_OK)
      return st;
    pthread_mutex_lock(&pl->lock);
    pl->lb_machine = key;
    pl->lb_ns = v;
    pl->lb_valid = true;
    pthread_mutex_unlock(&pl->lock);
  }
  *lb = v;
  return MAPOPT_OK;
}

/* The issue contexts of a run with inner tasks: each context's children
 * in op order, last to first, and which ops can have children -- an inner
 * task, or an op with a child, which comes after it and so is seen first
 * (ctx_of_op is a flag until the contexts are numbered in op order). */
static mapopt_status nest(mapopt_sim_plan *pl) {
  const mapopt_app_run *run = pl->run;
  mapopt__arena *a = &pl->arena;
  int64_t n = run->nops;
  pl->next_sib = mapopt__arena_alloc(a, (size_t)(n + 1) * 4);
  pl->first_child = mapopt__arena_alloc(a, (size_t)(n + 1) * 4);
  pl->ctx_of_op = mapopt__arena_zalloc(a, (size_t)(n + 1) * 4);
  if (!pl->next_sib || !pl->first_child || !pl->ctx_of_op)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i <= n; i++)
    pl->first_child[i] = -1;
  for (int64_t i = n - 1; i >= 0; i--) {
    const mapopt_app_op *o = &run->ops[i];
    int64_t c = o->parent + 1;
    pl->next_sib[i] = pl->first_child[c];
    pl->first_child[c] = (int32_t)i;
    if (o->parent >= 0)
      pl->ctx_of_op[o->parent] = 1;
    if (o->kind == MAPOPT_OP_TASK && run->tasks[o->task].inner)
      pl->ctx_of_op[i] = 1;
  }
  pl->nctx = 1;
  for (int64_t i = 0; i < n; i++)
    pl->ctx_of_op[i] = pl->ctx_of_op[i] ? (int32_t)pl->nctx++ : -1;
  pl->ctx_first = mapopt__arena_alloc(a, (size_t)pl->nctx * 4);
  if (!pl->ctx_first)
    return MAPOPT_ENOMEM;
  pl->ctx_first[0] = pl->first_child[0];
  for (int64_t i = 0; i < n; i++)
    if (pl->ctx_of_op[i] > 0)
      pl->ctx_first[pl->ctx_of_op[i]] = pl->first_child[i + 1];
  return MAPOPT_OK;
}

/* The mapping-independent part of a simulation: the DAG and the lists
 * derived from it, built once per run and shared by every evaluation; what
 * only building them needs is in scratch. */
static mapopt_status plan_build(mapopt_sim_plan *pl, mapopt__arena *scratch) {
  const mapopt_app_run *run = pl->run;
  mapopt__arena *a = &pl->arena;
  mapopt_status st = mapopt__sim_dag_build(a, scratch, run, &pl->dag);
  if (st != MAPOPT_OK)
    return st;
  const mapopt__sim_dag *dag = &pl->dag;
  int64_t n = run->nops;
  pl->task_reqs = mapopt__arena_zalloc(a, (size_t)(run->ntasks + 1) *
                                              sizeof *pl->task_reqs);
  if (!pl->task_reqs)
    return MAPOPT_ENOMEM;
  /* One pass over the ops (168 bytes apart in the app run: a cache line
   * each): the most requirements per op and per task, and whether the run
   * is flat -- no inner task, so every op is the top level's. */
  pl->max_reqs = 1;
  bool flat = true;
  /* The log's launches per iteration: the top-level task ops of the first
   * timed iteration, a run of consecutive ops of one launch counting once
   * (counting last to first finds as many runs). */
  int64_t first_timed = run->iterations_warmup, last_launch = -1;
  pl->launches_per_iteration = 0;
  for (int64_t i = n - 1; i >= 0; i--) {
    const mapopt_app_op *o = &run->ops[i];
    if (o->timing.iteration == first_timed && o->kind == MAPOPT_OP_TASK &&
        o->parent < 0 && o->launch != last_launch) {
      pl->launches_per_iteration++;
      last_launch = o->launch;
    }
    if (o->nreqs > MAPOPT_APP_MAX_ARGS) /* SIM_REQ_BITS */
      return MAPOPT_EINVAL;
    if ((int64_t)o->nreqs > pl->max_reqs)
      pl->max_reqs = (int64_t)o->nreqs;
    if (o->kind == MAPOPT_OP_TASK && o->nreqs > pl->task_reqs[o->task])
      pl->task_reqs[o->task] = (uint8_t)o->nreqs;
    if (o->parent >= 0 ||
        (o->kind == MAPOPT_OP_TASK && run->tasks[o->task].inner))
      flat = false;
  }
  /* A flat run's contexts are the top level alone, whose ops follow each
   * other: it keeps no sibling lists (mapopt__sim_next_sib). */
  pl->nctx = 1;
  pl->ctx_first = mapopt__arena_alloc(a, sizeof *pl->ctx_first);
  if (!pl->ctx_first)
    return MAPOPT_ENOMEM;
  pl->ctx_first[0] = n > 0 ? 0 : -1;
  if (!flat) {
    st = nest(pl);
    if (st != MAPOPT_OK)
      return st;
  }
  st = invert(a, n, NULL, dag->pred_off, dag->preds, n, &pl->succ_off,
              &pl->succ, NULL);
  if (st == MAPOPT_OK)
    st = invert(a, n, dag->req_off, dag->raw_off, dag->raw, n, &pl->rawsucc_off,
                &pl->rawsucc, &pl->rawsucc_pos);
  pl->dag.raw = NULL; /* in scratch */
  return st;
}

mapopt_status mapopt_sim_plan_new(mapopt_ctx *ctx, const mapopt_app_run *run,
                                  mapopt_sim_plan **out) {
  if (!ctx || !run || !out)
    return MAPOPT_EINVAL;
  mapopt_sim_plan *pl = mapopt__calloc(ctx, 1, sizeof *pl);
  if (!pl)
    return MAPOPT_ENOMEM;
  pl->ctx = ctx;
  pl->run = run;
  mapopt__arena_init(&pl->arena, ctx);
  pthread_mutex_init(&pl->lock, NULL);
  mapopt__arena scratch;
  mapopt__arena_init(&scratch, ctx);
  mapopt_status st = plan_build(pl, &scratch);
  mapopt__arena_destroy(&scratch);
  if (st != MAPOPT_OK) {
    mapopt_sim_plan_free(pl);
    return st;
  }
  *out = pl;
  return MAPOPT_OK;
}

static void destroy_containers(pooled_arena *pa, mapopt_ctx *ctx) {
  mapopt__vec *vs[] = {&pa->insts,     &pa->hpool,    &pa->waiters,
                       &pa->copies,    &pa->copy_afs, &pa->deps,
                       &pa->util_jobs, &pa->flow_set, &pa->util_events};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
    mapopt__vec_destroy(vs[i], ctx);
  mapopt__heap_destroy(&pa->events, ctx);
}

void mapopt_sim_plan_free(mapopt_sim_plan *pl) {
  if (!pl)
    return;
  while (pl->pool) {
    pooled_arena *p = pl->pool;
    pl->pool = p->next;
    destroy_containers(p, pl->ctx);
    mapopt__arena_destroy(&p->arena);
    mapopt__free(pl->ctx, p, sizeof *p);
  }
  pthread_mutex_destroy(&pl->lock);
  mapopt__arena_destroy(&pl->arena);
  mapopt__free(pl->ctx, pl, sizeof *pl);
}

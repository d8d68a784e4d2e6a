/*
 * Simulation plans (docs/sim.md, "From C"): the mapping-independent part of
 * simulating a run -- its dependence graph, the lists derived from it
 * (successors, RAW consumers, produced versions, sibling order, issue
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

/* Inverts an adjacency list given as (off, list) over n nodes into a (its
 * cursors in scratch): node i becomes map[i] in *out64, or i in *out32
 * without a map. */
static mapopt_status invert(mapopt__arena *a, mapopt__arena *scratch, int64_t n,
                            const int32_t *off, const int32_t *list, int64_t m,
                            const int64_t *map, int32_t **out_off,
                            int32_t **out32, int64_t **out64) {
  int32_t *cnt = mapopt__arena_zalloc(a, (size_t)(m + 1) * sizeof *cnt);
  int64_t total = off[n];
  size_t elem = map ? sizeof **out64 : sizeof **out32;
  void *res = mapopt__arena_alloc(a, (size_t)(total ? total : 1) * elem);
  int32_t *pos = mapopt__arena_alloc(scratch, (size_t)(m + 1) * sizeof *pos);
  if (!cnt || !res || !pos)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < total; i++)
    cnt[list[i] + 1]++;
  for (int64_t j = 0; j < m; j++)
    cnt[j + 1] += cnt[j];
  memcpy(pos, cnt, (size_t)(m + 1) * sizeof *pos);
  int64_t *res64 = map ? res : NULL;
  int32_t *res32 = map ? NULL : res;
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = off[i]; k < off[i + 1]; k++) {
      int32_t at = pos[list[k]]++;
      if (map)
        res64[at] = map[i];
      else
        res32[at] = (int32_t)i;
    }
  *out_off = cnt;
  if (map)
    *out64 = res64;
  else
    *out32 = res32;
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

/* The mapping-independent part of a simulation: the DAG and the lists
 * derived from it, built once per run and shared by every evaluation; what
 * only building them needs is in scratch. */
static mapopt_status plan_build(mapopt_sim_plan *pl, mapopt__arena *scratch) {
  const mapopt_app_run *run = pl->run;
  mapopt__arena *a = &pl->arena;
  pl->max_reqs = 1;
  if (run->npieces > MAPOPT__SIM_INDEX_MAX) /* req_piece is 32-bit */
    return MAPOPT_EINVAL;
  pl->task_reqs = mapopt__arena_zalloc(a, (size_t)(run->ntasks + 1) *
                                              sizeof *pl->task_reqs);
  if (!pl->task_reqs)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = &run->ops[i];
    if (o->nreqs > MAPOPT_APP_MAX_ARGS) /* SIM_REQ_BITS */
      return MAPOPT_EINVAL;
    if ((int64_t)o->nreqs > pl->max_reqs)
      pl->max_reqs = (int64_t)o->nreqs;
    if (o->kind == MAPOPT_OP_TASK && o->nreqs > pl->task_reqs[o->task])
      pl->task_reqs[o->task] = (uint8_t)o->nreqs;
  }
  mapopt_status st = mapopt__sim_dag_build(a, run, &pl->dag);
  if (st != MAPOPT_OK)
    return st;
  const mapopt__sim_dag *dag = &pl->dag;
  int64_t n = run->nops, nv = dag->nversions;
  int64_t *req_code =
      mapopt__arena_alloc(scratch, (size_t)(dag->nreqs + 1) * 8);
  pl->next_sib = mapopt__arena_alloc(a, (size_t)(n + 1) * 4);
  pl->first_child = mapopt__arena_alloc(a, (size_t)(n + 1) * 4);
  pl->af_off = mapopt__arena_alloc(a, (size_t)(run->natoms + 1) * 8);
  pl->vprod_off = mapopt__arena_zalloc(a, (size_t)(n + 2) * 4);
  pl->vprod = mapopt__arena_alloc(a, (size_t)(nv + 1) * 4);
  int32_t *fillp = mapopt__arena_alloc(scratch, (size_t)(n + 1) * 4);
  pl->req_piece = mapopt__arena_alloc(a, (size_t)(dag->nreqs + 1) * 4);
  pl->req_priv = mapopt__arena_alloc(a, (size_t)(dag->nreqs + 1));
  if (!req_code || !pl->next_sib || !pl->first_child || !pl->af_off ||
      !pl->vprod_off || !pl->vprod || !fillp || !pl->req_piece || !pl->req_priv)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < n; i++)
    for (size_t r = 0; r < run->ops[i].nreqs; r++) {
      int64_t q = dag->req_off[i] + (int64_t)r;
      const mapopt_app_req *rq = &run->ops[i].reqs[r];
      req_code[q] = SIM_REQ_CODE(i, (int64_t)r);
      pl->req_piece[q] = (int32_t)rq->piece->id;
      pl->req_priv[q] = (uint8_t)rq->priv;
    }
  for (int64_t i = 0; i <= n; i++)
    pl->first_child[i] = -1;
  for (int64_t i = n - 1; i >= 0; i--) {
    int64_t c = run->ops[i].parent + 1;
    pl->next_sib[i] = pl->first_child[c];
    pl->first_child[c] = (int32_t)i;
  }
  /* Contexts: the top level and every op that can have children. */
  pl->ctx_of_op = mapopt__arena_alloc(a, (size_t)(n + 1) * 4);
  if (!pl->ctx_of_op)
    return MAPOPT_ENOMEM;
  pl->nctx = 1;
  for (int64_t i = 0; i < n; i++) {
    const mapopt_app_op *o = &run->ops[i];
    bool parent = pl->first_child[i + 1] >= 0 ||
                  (o->kind == MAPOPT_OP_TASK && run->tasks[o->task].inner);
    pl->ctx_of_op[i] = parent ? (int32_t)pl->nctx++ : -1;
  }
  pl->ctx_first = mapopt__arena_alloc(a, (size_t)pl->nctx * 4);
  if (!pl->ctx_first)
    return MAPOPT_ENOMEM;
  pl->ctx_first[0] = pl->first_child[0];
  for (int64_t i = 0; i < n; i++)
    if (pl->ctx_of_op[i] > 0)
      pl->ctx_first[pl->ctx_of_op[i]] = pl->first_child[i + 1];
  pl->naf = 0;
  for (int64_t at = 0; at < run->natoms; at++) {
    pl->af_off[at] = pl->naf;
    pl->naf += run->regions[run->atom_region[at]].nfields;
  }
  st = invert(a, scratch, n, dag->pred_off, dag->preds, n, NULL, &pl->succ_off,
              &pl->succ, NULL);
  if (st == MAPOPT_OK)
    st = invert(a, scratch, dag->nreqs, dag->raw_off, dag->raw, n, req_code,
                &pl->rawsucc_off, NULL, &pl->rawsucc);
  if (st != MAPOPT_OK)
    return st;
  /* The versions each op produces (writes and fills). */
  for (int64_t v = 0; v < nv; v++)
    if (dag->versions[v].kind != VER_REDUCTION)
      pl->vprod_off[dag->versions[v].producer + 1]++;
  for (int64_t i = 0; i < n; i++)
    pl->vprod_off[i + 1] += pl->vprod_off[i];
  memcpy(fillp, pl->vprod_off, (size_t)(n + 1) * sizeof *fillp);
  for (int64_t v = 0; v < nv; v++)
    if (dag->versions[v].kind != VER_REDUCTION)
      pl->vprod[fillp[dag->versions[v].producer]++] = (int32_t)v;
  /* The requirements that read reduced data (their folds are planned as
   * their reducers complete, engine.c). */
  pl->reads_reduction = mapopt__arena_zalloc(a, (size_t)(dag->nreqs + 1));
  if (!pl->reads_reduction)
    return MAPOPT_ENOMEM;
  for (int64_t q = 0; q < dag->nreqs; q++)
    for (int64_t k = dag->need_off[q]; k < dag->need_off[q + 1]; k++)
      if (dag->need[k] >= 0 &&
          dag->versions[dag->need[k]].kind == VER_REDUCTION)
        pl->reads_reduction[q] = 1;
  return MAPOPT_OK;
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

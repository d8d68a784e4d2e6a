/*
 * The results of a simulation (docs/sim.md, "What comes out"): the timed
 * window(s) and elapsed time, the metric, per-processor, per-channel and
 * per-memory statistics, the critical path and its attribution (attrib.c),
 * the busiest tasks with their requirements, the decisions applied (for
 * `mapopt show --app`) and the lower bound. Everything the result points
 * to is owned by it (resmem.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

/* ---- results ------------------------------------------------------------- */

/* The timed window(s): [lo[i], hi[i]) for i < *n (docs/apps.md, `timing`);
 * lo and hi hold one per timed fence at least. */
static void windows(const sim_t *s, int64_t *lo, int64_t *hi, int64_t *n) {
  const mapopt_app_run *run = s->run;
  *n = 0;
  if (run->timing == MAPOPT_TIMING_FENCED) {
    for (int64_t i = 0; i < run->nops; i++) {
      const mapopt_app_op *o = &run->ops[i];
      if (o->kind != MAPOPT_OP_FENCE || !o->timing.timed)
        continue;
      if (o->timing.fence_role == 1)
        lo[*n] = s->ops[i].complete_at;
      else if (o->timing.fence_role == 2)
        hi[(*n)++] = s->ops[i].complete_at;
    }
    return;
  }
  /* The engine kept the completions that bound the window (op_complete). */
  int64_t t0 = s->warmup_end_at, t1 = s->timed_end_at;
  if (t1 == 0) /* no time-step loop: the whole run */
    t1 = s->last_complete_at;
  lo[0] = t0;
  hi[0] = t1 > t0 ? t1 : t0;
  *n = 1;
}

static int64_t overlap(int64_t a, int64_t b, int64_t lo, int64_t hi) {
  int64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
  return y > x ? y - x : 0;
}

/* Marks in s->timed_task each task op of the timed work (its iteration or
 * block is timed) that executed on a processor (TIMED_RAN), and of those
 * the ones that started in the timed window(s) (TIMED_TASK as well); in
 * the same pass over the ops, adds each TIMED_RAN op's time within the
 * window(s) to its processor's busy_ns in procs, and counts the TIMED_TASK
 * ones in its tasks. */
static mapopt_status mark_timed(sim_t *s, mapopt_sim_proc_stats *procs) {
  const mapopt_app_run *run = s->run;
  s->timed_task = mapopt__arena_alloc(&s->arena, (size_t)run->nops + 1);
  if (!s->timed_task)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < run->nops; i++) {
    const sim_op *o = &s->ops[i];
    uint8_t m = 0;
    if (run->ops[i].kind == MAPOPT_OP_TASK && run->ops[i].timing.timed &&
        o->state >= OS_EXECUTED) {
      if (o->proc >= 0)
        m |= TIMED_RAN;
      if (mapopt__sim_in_windows(s, o->start_at))
        m |= TIMED_TASK;
    }
    s->timed_task[i] = m;
    if (!(m & TIMED_RAN))
      continue;
    for (int64_t w = 0; w < s->nwin; w++)
      procs[o->proc].busy_ns +=
          overlap(o->start_at, o->end_at, s->win_lo[w], s->win_hi[w]);
    if (m & TIMED_TASK)
      procs[o->proc].tasks++;
  }
  return MAPOPT_OK;
}

/* A name of the run kept by the result; "" when out of memory. */
static const char *result_string(mapopt_sim_result *res, const char *str) {
  const char *c = mapopt__sim_result_string(res, str);
  return c ? c : "";
}

static int cmp_task_stats(const void *a, const void *b) {
  const mapopt_sim_task_stats *x = a, *y = b;
  if (!x->task || !y->task) /* unused entries last */
    return (x->task == NULL) - (y->task == NULL);
  if (x->busy_ns != y->busy_ns)
    return x->busy_ns < y->busy_ns ? 1 : -1;
  int c = strcmp(x->task, y->task);
  return c ? c : (int)x->kind - (int)y->kind;
}

/* A timed copy into an argument of its op (not a fill). */
static bool timed_copy_in(const sim_t *s, const sim_copy *c) {
  return c->kind != COPY_FILL && c->src_mem >= 0 &&
         mapopt__sim_timed_copy(s, c);
}

/* A timed task op as top_task_sources needs it: its (task, processor kind)
 * entry, processor and time. top_tasks writes them as it reads the ops, so
 * that the second look at every op reads 16 bytes instead of two cache
 * lines. */
typedef struct timed_point {
  int32_t stat, proc;
  int64_t ns;
} timed_point;

/* For the busiest tasks chosen by top_tasks: how their points spread over
 * the processors (points: the timed task ops, npoints of them), and which
 * task produced what each argument copied in. */
static mapopt_status top_task_sources(sim_t *s, mapopt_sim_result *res,
                                      const timed_point *points,
                                      size_t npoints) {
  const mapopt_app_run *run = s->run;
  size_t max_reqs = (size_t)s->plan->max_reqs;
  size_t nt = (size_t)run->ntasks, nstats = nt * MAPOPT_PROC_KIND_COUNT;
  int *top_of = mapopt__arena_alloc(&s->arena, nstats * sizeof *top_of);
  int64_t *busy = mapopt__arena_zalloc(
      &s->arena, res->ntop * (size_t)s->nprocs * sizeof *busy);
  int64_t *prod =
      mapopt__arena_zalloc(&s->arena, res->ntop * max_reqs * nt * sizeof *prod);
  if (!top_of || !busy || !prod)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < nstats; i++)
    top_of[i] = -1;
  for (size_t k = 0; k < res->ntop; k++)
    for (size_t t = 0; t < nt; t++)
      if (strcmp(run->tasks[t].name, res->top_tasks[k].task) == 0)
        top_of[t * MAPOPT_PROC_KIND_COUNT + res->top_tasks[k].kind] = (int)k;
  for (size_t i = 0; i < npoints; i++) {
    int k = top_of[points[i].stat];
    if (k >= 0)
      busy[(int64_t)k * s->nprocs + points[i].proc] += points[i].ns;
  }
  for (size_t k = 0; k < res->ntop; k++)
    for (int64_t p = 0; p < s->nprocs; p++) {
      int64_t b = busy[(int64_t)k * s->nprocs + p];
      res->top_tasks[k].procs_used += b > 0;
      if (b > res->top_tasks[k].proc_max_ns)
        res->top_tasks[k].proc_max_ns = b;
    }
  for (size_t c = 0; c < s->copies.len; c++) {
    const sim_copy *cp = copy_at(s, (int64_t)c);
    if (!timed_copy_in(s, cp))
      continue;
    const mapopt_app_op *ao = &run->ops[cp->op];
    int k = top_of[ao->task * MAPOPT_PROC_KIND_COUNT + s->ops[cp->op].kind];
    int64_t p = mapopt__sim_copy_producer(s, cp);
    if (k >= 0 && p >= 0 && run->ops[p].kind == MAPOPT_OP_TASK) {
      int64_t *sum = &prod[((size_t)k * max_reqs + (size_t)cp->req) * nt +
                           (size_t)run->ops[p].task];
      *sum = mapopt__sat_add(*sum, cp->bytes);
    }
  }
  for (size_t k = 0; k < res->ntop; k++) {
    mapopt_sim_task_stats *t = &res->top_tasks[k];
    for (int r = 0; r < t->nreqs; r++) {
      const int64_t *b = &prod[((size_t)k * max_reqs + (size_t)r) * nt];
      size_t best = 0;
      for (size_t j = 1; j < nt; j++)
        if (b[j] > b[best])
          best = j;
      if (nt == 0 || b[best] == 0)
        continue;
      mapopt_sim_req_stats *q = &t->reqs[r];
      q->producer = result_string(res, run->tasks[best].name);
      q->producer_kind =
          (mapopt_proc_kind)(s->task_kind[best] >= 0 ? s->task_kind[best]
                                                     : MAPOPT_PROC_CPU);
      q->producer_bytes = b[best];
    }
  }
  return MAPOPT_OK;
}

/* What the busiest tasks' statistics take from a leaf op's price: its
 * requirements' memories and layout factors, their memory and access
 * times, and the parts of its time; state: the engine's memo state that
 * priced the op (s->price_state), -1 none. */
typedef struct op_price {
  int64_t state;
  mapopt_mem_kind mems[MAPOPT_APP_MAX_ARGS];
  int64_t ppm[MAPOPT_APP_MAX_ARGS], mem_ns[MAPOPT_APP_MAX_ARGS],
      acc_ns[MAPOPT_APP_MAX_ARGS];
  mapopt__task_cost_parts parts;
} op_price;

/* The price of leaf op i (with instances): the last one kept for its task
 * (known) when the engine priced both with the same memo state -- most ops
 * of a task are, and pricing again is most of these statistics' work --
 * else priced again through memo into known (scratch when the engine's
 * price was not memoized). */
static const op_price *price_of(sim_t *s, int64_t i, op_price *known,
                                op_price *scratch,
                                mapopt__task_cost_memo *memo) {
  int64_t state = s->price_state[i];
  if (state >= 0 && known->state == state)
    return known;
  op_price *p = state >= 0 ? known : scratch;
  const mapopt_app_op *ao = &s->run->ops[i];
  mapopt__sim_cost_inputs(s, i, p->mems, p->ppm, ao->nreqs);
  mapopt__task_cost_in cin = {s->m,    s->run, i, s->ops[i].variant,
                              p->mems, p->ppm, 0, 0};
  mapopt__sim_task_ns_memo(memo, &cin, p->mem_ns, p->acc_ns, &p->parts, NULL);
  p->state = state;
  return p;
}

/* The statistics of every timed (task, processor kind), each with room for
 * the most region arguments of the task's ops (in the run's arena); the
 * busiest of them go into the result. */
static mapopt_status top_tasks(sim_t *s, mapopt_sim_result *res) {
  const mapopt_app_run *run = s->run;
  int64_t nstats = run->ntasks * MAPOPT_PROC_KIND_COUNT;
  mapopt_sim_task_stats *all =
      mapopt__arena_zalloc(&s->arena, (size_t)(nstats + 1) * sizeof *all);
  mapopt__task_cost_memo *memo =
      mapopt__arena_zalloc(&s->arena, (size_t)(run->ntasks + 1) * sizeof *memo);
  op_price *known =
      mapopt__arena_alloc(&s->arena, (size_t)(run->ntasks + 1) * sizeof *known);
  op_price *scratch = mapopt__arena_alloc(&s->arena, sizeof *scratch);
  timed_point *points =
      mapopt__arena_alloc(&s->arena, (size_t)(run->nops + 1) * sizeof *points);
  size_t npoints = 0;
  const uint8_t *task_reqs = s->plan->task_reqs;
  if (!all || !memo || !known || !scratch || !points)
    return MAPOPT_ENOMEM;
  for (int t = 0; t < run->ntasks; t++)
    known[t].state = -1;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *ao = &run->ops[i];
    const sim_op *o = &s->ops[i];
    if (!mapopt__sim_timed_task(s, i))
      continue;
    mapopt_sim_task_stats *t =
        &all[ao->task * MAPOPT_PROC_KIND_COUNT + o->kind];
    if (!t->task) { /* once per entry: the result keeps one copy */
      t->task = result_string(res, run->tasks[ao->task].name);
      t->reqs = mapopt__arena_zalloc(&s->arena, (task_reqs[ao->task] + 1) *
                                                    sizeof *t->reqs);
      if (!t->reqs)
        return MAPOPT_ENOMEM;
    }
    t->kind = (mapopt_proc_kind)o->kind;
    t->variant_kinds = run->tasks[ao->task].variant_kinds;
    t->is_index |= ao->is_index;
    int64_t d = o->end_at - o->start_at;
    points[npoints++] =
        (timed_point){ao->task * MAPOPT_PROC_KIND_COUNT + o->kind, o->proc, d};
    t->points++;
    t->busy_ns += d;
    if (d > t->max_ns)
      t->max_ns = d;
    /* Waiting: for data, from when it was mapped and its predecessors
     * were done until it was ready; then for its processor. */
    int64_t after = o->mapped_at;
    if (o->last_pred >= 0 && s->ops[o->last_pred].complete_at > after)
      after = s->ops[o->last_pred].complete_at;
    t->wait_data_ns += o->ready_at > after ? o->ready_at - after : 0;
    t->wait_proc_ns +=
        o->start_at > o->ready_at ? o->start_at - o->ready_at : 0;
    if (run->tasks[ao->task].inner || !o->inst) {
      /* An inner task's time is the runtime's; a leaf without instances is
       * not split. */
      *(run->tasks[ao->task].inner ? &t->overhead_ns : &t->compute_ns) += d;
      continue;
    }
    const op_price *pr =
        price_of(s, i, &known[ao->task], scratch, &memo[ao->task]);
    const mapopt_mem_kind *mems = pr->mems;
    const int64_t *ppm = pr->ppm, *mem_ns = pr->mem_ns, *acc_ns = pr->acc_ns;
    size_t n = ao->nreqs; /* at most MAPOPT_APP_MAX_ARGS (the plan's limit) */
    /* The parts are noise-free; the noise goes to compute, so that the
     * three add up to the time the point took. */
    int64_t over = pr->parts.overhead < d ? pr->parts.overhead : d;
    int64_t mem = pr->parts.memory < d - over ? pr->parts.memory : d - over;
    t->overhead_ns += over;
    t->memory_ns += mem;
    t->compute_ns += d - over - mem;
    for (size_t r = 0; r < n; r++) {
      mapopt_sim_req_stats *q = &t->reqs[r];
      const mapopt_app_req *rq = &ao->reqs[r];
      if ((int)r >= t->nreqs) {
        t->nreqs = (int)r + 1;
        q->index = (int)r;
        q->name = result_string(res, rq->nnames ? rq->names[0] : "");
        q->memory = mems[r];
        if (o->inst[r] >= 0)
          q->layout = inst_at(s, o->inst[r])->layout;
        q->priv = rq->priv;
        q->fields = __builtin_popcountll(rq->fields);
        q->region_fields = run->regions[rq->piece->region].nfields;
      }
      q->mem_ns += mem_ns[r];
      q->access_ns += acc_ns[r];
      if (ppm[r] > q->layout_ppm)
        q->layout_ppm = ppm[r];
      if (o->inst[r] >= 0 && inst_at(s, o->inst[r])->bytes > q->instance_bytes)
        q->instance_bytes = inst_at(s, o->inst[r])->bytes;
    }
  }
  for (size_t k = 0; k < s->copies.len; k++) {
    const sim_copy *c = copy_at(s, (int64_t)k);
    if (!timed_copy_in(s, c))
      continue;
    const sim_op *o = &s->ops[c->op];
    mapopt_sim_task_stats *t =
        &all[run->ops[c->op].task * MAPOPT_PROC_KIND_COUNT + o->kind];
    if (c->req < t->nreqs) {
      int64_t *in = &t->reqs[c->req].copy_in_bytes[s->mems[c->src_mem].kind];
      int64_t *ch = &t->reqs[c->req].copy_in_channel_bytes[c->kind];
      *in = mapopt__sat_add(*in, c->bytes);
      *ch = mapopt__sat_add(*ch, c->bytes);
    }
  }
  qsort(all, (size_t)nstats, sizeof *all, cmp_task_stats);
  for (int64_t k = 0; k < nstats; k++) {
    if (!all[k].points)
      continue;
    if (res->ntop == MAPOPT_SIM_MAX_TOP_TASKS) {
      res->top_tasks_left_out++;
      continue;
    }
    mapopt_sim_task_stats *t = &res->top_tasks[res->ntop++];
    *t = all[k];
    t->reqs = mapopt__sim_result_alloc(res, (size_t)t->nreqs, sizeof *t->reqs);
    if (!t->reqs && t->nreqs > 0)
      return MAPOPT_ENOMEM;
    if (t->nreqs > 0)
      memcpy(t->reqs, all[k].reqs, (size_t)t->nreqs * sizeof *t->reqs);
  }
  return top_task_sources(s, res, points, npoints);
}

/* The decisions applied to every mapped task op, for `mapopt show`. */
static mapopt_status record_decisions(sim_t *s, mapopt_sim_result *res) {
  const mapopt_app_run *run = s->run;
  size_t n = 0;
  for (int64_t i = 0; i < run->nops; i++)
    n += run->ops[i].kind == MAPOPT_OP_TASK && s->ops[i].state >= OS_MAPPED;
  res->decisions = mapopt__calloc(s->ctx, n ? n : 1, sizeof *res->decisions);
  if (!res->decisions)
    return MAPOPT_ENOMEM;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *ao = &run->ops[i];
    const sim_op *o = &s->ops[i];
    if (ao->kind != MAPOPT_OP_TASK || o->state < OS_MAPPED)
      continue;
    mapopt_sim_decision *d = &res->decisions[res->ndecisions++];
    d->op = i;
    d->task = result_string(res, run->tasks[ao->task].name);
    d->is_index = ao->is_index;
    d->dims = ao->dims;
    memcpy(d->point, ao->point, sizeof d->point);
    d->proc =
        (mapopt_proc_point){(mapopt_proc_kind)o->kind, s->procs[o->proc].as,
                            s->procs[o->proc].local};
    d->inner = run->tasks[ao->task].inner;
    d->nreqs = (int)ao->nreqs;
    d->reqs = mapopt__sim_result_alloc(res, ao->nreqs, sizeof *d->reqs);
    if (!d->reqs && ao->nreqs > 0)
      return MAPOPT_ENOMEM;
    for (int r = 0; r < d->nreqs; r++) {
      d->reqs[r].name =
          result_string(res, ao->reqs[r].nnames ? ao->reqs[r].names[0] : "");
      d->reqs[r].memory = MAPOPT_MEM_VIRTUAL;
      if (!o->inst || o->inst[r] < 0)
        continue;
      const sim_inst *in = inst_at(s, o->inst[r]);
      d->reqs[r].memory = s->mems[in->mem].kind;
      d->reqs[r].layout = in->layout;
      d->reqs[r].instance_bytes = in->bytes;
    }
  }
  return MAPOPT_OK;
}

mapopt_status mapopt__sim_fill_result(sim_t *s, mapopt_sim_result *res) {
  const mapopt_app_run *run = s->run;
  /* One window per timed repetition in fenced mode (each closed by a
   * timed fence), else one. */
  int64_t cap = 1;
  if (run->timing == MAPOPT_TIMING_FENCED)
    for (int64_t i = 0; i < run->nops; i++)
      cap += run->ops[i].kind == MAPOPT_OP_FENCE && run->ops[i].timing.timed;
  int64_t *lo = mapopt__arena_alloc(&s->arena, (size_t)cap * sizeof *lo);
  int64_t *hi = mapopt__arena_alloc(&s->arena, (size_t)cap * sizeof *hi);
  if (!lo || !hi)
    return MAPOPT_ENOMEM;
  int64_t nw = 0;
  windows(s, lo, hi, &nw);
  s->win_lo = lo;
  s->win_hi = hi;
  s->nwin = nw;
  int64_t elapsed = 0;
  for (int64_t i = 0; i < nw; i++)
    elapsed += hi[i] - lo[i];
  res->error = s->error;
  res->error_time_ns = failed(s) ? s->error_time : 0;
  res->elapsed_ns = failed(s) ? 0 : elapsed;
  res->iterations_timed = run->iterations_timed;
  res->iterations_warmup = run->iterations_warmup;
  /* Events: ops, copies, fills and folds. */
  res->events = s->ops_done + (int64_t)s->copies.len;
  /* Metric. */
  double secs = (double)elapsed / 1e9;
  if (run->metric_gflops) {
    res->metric_name = "gflops";
    res->metric_unit = run->per_node ? "GFLOP/s per node" : "GFLOP/s";
    double reps = run->timing == MAPOPT_TIMING_FENCED
                      ? (double)nw
                      : (double)run->iterations_timed;
    double v =
        secs > 0 ? (double)run->flops_per_iteration * reps / secs / 1e9 : 0;
    res->metric_value = run->per_node ? v / (double)s->m->nodes : v;
  } else {
    res->metric_name = "throughput";
    res->metric_unit = "1/s";
    res->metric_value = secs > 0 ? 1.0 / secs : 0;
  }
  if (failed(s))
    res->metric_value = 0;
  /* Processors, restricted to the window(s). */
  res->procs = mapopt__calloc(s->ctx, (size_t)(s->nprocs ? s->nprocs : 1),
                              sizeof *res->procs);
  res->mems = mapopt__calloc(s->ctx, (size_t)(s->nmems ? s->nmems : 1),
                             sizeof *res->mems);
  if (!res->procs || !res->mems)
    return MAPOPT_ENOMEM;
  static const char *const cls_names[] = {"CPU", "GPU", "OMP", "UTIL"};
  res->nprocs = (size_t)s->nprocs;
  for (int64_t p = 0; p < s->nprocs; p++) {
    const sim_proc *sp = &s->procs[p];
    res->procs[p] = (mapopt_sim_proc_stats){
        sp->node, sp->rank, cls_names[sp->cls], sp->local, 0, 0};
  }
  if (mark_timed(s, res->procs) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  for (size_t k = 0; k < s->util_jobs.len; k++) {
    const util_job *j = &MAPOPT__VEC_AT(&s->util_jobs, util_job, k);
    for (int64_t w = 0; w < nw; w++)
      res->procs[j->proc].busy_ns += overlap(j->start, j->end, lo[w], hi[w]);
    if (mapopt__sim_in_windows(s, j->start))
      res->procs[j->proc].tasks++;
  }
  for (size_t k = 0; k < s->copies.len; k++) {
    const sim_copy *c = copy_at(s, (int64_t)k);
    if (c->end_at == 0 && c->start_at == 0)
      continue;
    if (!mapopt__sim_timed_copy(s, c))
      continue;
    mapopt_sim_copy_stats *cs = &res->copies[c->kind];
    cs->bytes = mapopt__sat_add(cs->bytes, c->bytes);
    cs->count++;
    cs->busy_ns += c->end_at - c->start_at;
  }
  res->nmems = (size_t)s->nmems;
  for (int64_t i = 0; i < s->nmems; i++) {
    const sim_mem *m = &s->mems[i];
    res->mems[i] =
        (mapopt_sim_mem_stats){m->node,     m->rank, m->kind,     m->index,
                               m->capacity, m->peak, m->peak_inst};
  }
  if (s->opts->record_decisions && record_decisions(s, res) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  if (!failed(s)) {
    if (s->opts->trace) {
      s->on_path_op = mapopt__arena_zalloc(&s->arena, (size_t)run->nops + 1);
      s->on_path_copy = mapopt__arena_zalloc(&s->arena, s->copies.len + 1);
      if (!s->on_path_op || !s->on_path_copy)
        return MAPOPT_ENOMEM;
    }
    if (mapopt__sim_attribute(s, res) != MAPOPT_OK ||
        top_tasks(s, res) != MAPOPT_OK)
      return MAPOPT_ENOMEM;
  }
  if (mapopt__sim_plan_lower_bound(s->plan, s->ctx, s->m,
                                   &res->lower_bound_ns) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  /* With noise, tasks may run up to that fraction faster than the bound's
   * costs assume; each part of the bound shrinks by at most the factor. */
  int64_t noise_ppm = (int64_t)(s->opts->noise * 1e6 + 0.5);
  if (noise_ppm > 0)
    res->lower_bound_ns = (int64_t)((__int128)res->lower_bound_ns *
                                    (1000000 - noise_ppm) / 1000000);
  res->efficiency = !failed(s) && elapsed > 0
                        ? (double)res->lower_bound_ns / (double)elapsed
                        : 0;
  return MAPOPT_OK;
}

const char *mapopt_sim_error_name(mapopt_sim_error e) {
  switch (e) {
#define NAME_CASE(name)                                                        \
  case MAPOPT_SIM_##name:                                                      \
    return #name;
    MAPOPT_SIM_ERROR_LIST(NAME_CASE)
#undef NAME_CASE
  }
  return "UNKNOWN";
}

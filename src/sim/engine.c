/*
 * The discrete-event engine (docs/sim.md, "How it models a run"), its top:
 * issues the ops of a run, has them placed and mapped (mapping.c), plans the
 * copies each needs (data.c), schedules tasks on processors, completes ops, and
 * stops at the end of the run or at the first error, which it words as a real
 * runtime would. It also owns the event loop and mapopt_sim_run_plan, and
 * lends a plan's workspace to each run.
 *
 * Events are (time, sequence) keyed in a binary heap, so equal-time events
 * happen in creation order and runs are reproducible. Everything lives in
 * one arena per run.
 *
 * Simplifications, each deliberate and documented in docs/sim.md:
 *  - copies for a requirement are planned once the op is mapped and the ops
 *    that produced the data it needs have completed (so inputs are
 *    prefetched as soon as they exist, unless InstanceLimit holds the op
 *    back);
 *  - a version is copied only from complete holders; a second reader of a
 *    version whose folds are still in flight waits for them;
 *  - fills and fences pay no launch cost; index and single launches pay
 *    launch_ns once per launch statement;
 *  - without GPUDirect a network copy with an FB endpoint adds the FB_HOST
 *    latency of the staging leg on the same ports.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/engine.h"

static void try_ready(sim_t *s, int64_t op);
static void op_complete(sim_t *s, int64_t op);
static void plan_copies(sim_t *s, int64_t op, int64_t r);
static void wake_waiters(sim_t *s, int64_t v, int64_t by);
static void issue_op(sim_t *s, int64_t op);
static void try_start(sim_t *s, int64_t proc);

/* ---- issuing ------------------------------------------------------------- */

/*
 * Runs a context's body forward, within its window: each launch statement
 * is placed when the body reaches it (so the default round-robin follows
 * program order), and its ops are issued once the runtime's launch
 * work on a UTIL processor ends. The body does not wait for that
 * work, as a task's body does not wait for the runtime's analysis.
 *
 * A fence is different: the program waits for it (a Regent blocking fence;
 * the fence whose future a benchmark reads to stop its timer), so nothing
 * after it is issued -- or mapped, or given instances -- until it
 * completes. Only the fence that opens a timed block is not waited for:
 * its time is read at the end. Without this, the next repetition's
 * instances would be created while the current one still runs, and peak
 * memory would grow with the number of repetitions.
 */
static void ctx_issue(sim_t *s, int64_t parent) {
  sim_ctx *c = ctx_of(s, parent);
  int64_t window =
      s->m->runtime.window_ops > 0 ? s->m->runtime.window_ops : 1024;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  /* What is issued now after the window was full waited for it. */
  bool held = c->window_full;
  while (!failed(s) && c->next >= 0 && c->outstanding < window &&
         c->blocked_on < 0) {
    int64_t op = c->next;
    const mapopt_app_op *o = &s->run->ops[op];
    s->ops[op].window_held = held;
    /* Counted as the parent's children from here, so the parent cannot
     * complete while they are still being launched. */
    if (o->kind != MAPOPT_OP_TASK) {
      c->next = mapopt__sim_next_sib(s, op);
      c->outstanding++;
      if (parent >= 0)
        s->ops[parent].children_left++;
      if (o->kind == MAPOPT_OP_FENCE && o->timing.fence_role != 1)
        c->blocked_on = op;
      issue_op(s, op);
      continue;
    }
    int64_t last = op;
    for (int64_t k = op; k >= 0 && s->run->ops[k].launch == o->launch &&
                         s->run->ops[k].kind == MAPOPT_OP_TASK;
         k = mapopt__sim_next_sib(s, k)) {
      last = k;
      s->ops[k].window_held = held;
      c->outstanding++;
      if (parent >= 0)
        s->ops[parent].children_left++;
    }
    c->next = mapopt__sim_next_sib(s, last);
    if (o->is_index)
      mapopt__sim_place_index_launch(s, op);
    else
      mapopt__sim_place_single(s, op);
    int64_t cost = o->timing.traced ? rt->launch_traced_ns : rt->launch_ns;
    mapopt__sim_util_work(s, c->as, cost, op, UTIL_LAUNCH, EV_LAUNCHED);
  }
  c->window_full = c->next >= 0 && c->outstanding >= window;
}

static void launched(sim_t *s, int64_t first) {
  const mapopt_app_op *o = &s->run->ops[first];
  for (int64_t op = first;
       op >= 0 && !failed(s) && s->run->ops[op].launch == o->launch &&
       s->run->ops[op].kind == MAPOPT_OP_TASK;
       op = mapopt__sim_next_sib(s, op))
    issue_op(s, op);
}

static void issue_op(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  o->state = OS_ISSUED;
  o->issued = true;
  o->issued_at = s->now;
  mapopt__sim_try_mappable(s, op);
}

/* ---- copies of requirements ---------------------------------------------- */

/* The copies a plan is building: one per source instance and kind. It
 * remembers the first COPY_PLAN_SOURCES of them for sharing; a source past
 * those gets a copy of its own, which costs time but changes no data. */
enum { COPY_PLAN_SOURCES = 64 };
typedef struct copy_plan {
  int64_t op, r, dst;
  int64_t src[COPY_PLAN_SOURCES];
  int kind[COPY_PLAN_SOURCES];
  int64_t copy[COPY_PLAN_SOURCES];
  int n;
} copy_plan;

/* An empty plan into dst; its arrays are filled up to n, so they are not
 * cleared (a plan is made per requirement, several times per op). */
static void copy_plan_init(copy_plan *p, int64_t op, int64_t r, int64_t dst) {
  p->op = op;
  p->r = r;
  p->dst = dst;
  p->n = 0;
}

static int64_t plan_copy(sim_t *s, copy_plan *p, int kind, int64_t src) {
  for (int i = 0; i < p->n; i++)
    if (p->src[i] == src && p->kind[i] == kind)
      return p->copy[i];
  int64_t c = mapopt__sim_new_copy(s, kind, src, p->dst, p->op, p->r);
  if (c >= 0 && p->n < COPY_PLAN_SOURCES) {
    p->src[p->n] = src;
    p->kind[p->n] = kind;
    p->copy[p->n++] = c;
  }
  return c;
}

static void add_waiter(sim_t *s, int64_t v, int64_t op, int64_t r) {
  hnode *w = mapopt__vec_push(&s->waiters, s->ctx);
  if (!w) {
    mapopt__sim_out_of_memory(s);
    return;
  }
  w->inst = SIM_REQ_CODE(op, r);
  w->next = s->wait_head[v];
  s->wait_head[v] = (int64_t)s->waiters.len - 1;
  s->ops[op].pending++;
}

static int64_t field_bytes(const sim_t *s, int64_t atom, int f) {
  return s->run->regions[s->run->atom_region[atom]].field_bytes[f];
}

/* Holds fold copy c back until reducer op rop completes (op_complete). */
static void fold_waits_for(sim_t *s, int64_t c, int64_t rop) {
  dnode *d = mapopt__vec_push(&s->deps, s->ctx);
  if (!d) {
    mapopt__sim_out_of_memory(s);
    return;
  }
  d->copy = c;
  d->next = s->fold_wait[rop];
  s->fold_wait[rop] = (int64_t)s->deps.len - 1;
  copy_at(s, c)->after++;
}

/* Brings version v of (atom, f) into the plan's destination. Returns the
 * copy that delivers it (for dependences), or -1. */
static int64_t need_version(sim_t *s, copy_plan *p, int64_t atom, int f,
                            int64_t v, int64_t count, int depth) {
  sim_inst *dst = inst_at(s, p->dst);
  int64_t a = atom_index(dst->piece, atom);
  if (a < 0 || depth > 8)
    return -1;
  int64_t k = slot_of(s, dst, (size_t)a, f);
  if (dst->held[k] == v || dst->incoming[k] == v)
    return -1;
  const mapopt__version *ver = &s->dag.versions[v];
  int64_t bytes = mapopt__sat_mul(count, field_bytes(s, atom, f));
  if (ver->kind == VER_FILL) {
    int64_t c = plan_copy(s, p, COPY_FILL, -1);
    if (c >= 0)
      mapopt__sim_copy_add_af(s, c, atom, f, v, bytes);
    return c;
  }
  int64_t src =
      mapopt__sim_best_source(s, v, dst->piece, atom, f, dst->mem, bytes);
  if (src >= 0) {
    int64_t c = plan_copy(s, p, -1, src);
    if (c >= 0)
      mapopt__sim_copy_add_af(s, c, atom, f, v, bytes);
    return c;
  }
  if (ver->kind != VER_REDUCTION)
    return -1; /* the data is nowhere (never materialized): nothing to move */
  if (s->fold_target[v] >= 0) {
    add_waiter(s, v, p->op, p->r);
    return -1;
  }
  /* This instance becomes the fold target: base first, then the folds,
   * each as soon as its own reducer has completed. Reducers that shared a
   * reduction instance fold through one copy of its data, which waits for
   * each of them. */
  s->fold_target[v] = p->dst;
  const mapopt__red_set *rs = mapopt__sim_red_set(&s->dag, v);
  int64_t base = rs->base >= 0
                     ? need_version(s, p, atom, f, rs->base, count, depth + 1)
                     : -1;
  dst->incoming[k] = v;
  int64_t mark = ++s->fold_stamp;
  for (int64_t i = 0; i < rs->nred; i++) {
    int64_t rop = s->dag.reducers[rs->red_off + i];
    for (size_t r = 0; r < s->run->ops[rop].nreqs; r++) {
      int64_t rc = 0;
      int64_t rinst = mapopt__sim_reducer_instance(s, rop, r, atom, f, &rc);
      if (rinst < 0)
        continue;
      bool fresh = true;
      for (int j = 0; j < p->n; j++)
        fresh = fresh && !(p->src[j] == rinst && p->kind[j] == COPY_FOLD);
      int64_t c = plan_copy(s, p, COPY_FOLD, rinst);
      if (c < 0)
        return -1;
      if (copy_at(s, c)->reducer < 0)
        copy_at(s, c)->reducer = rop;
      bool shared = inst_at(s, rinst)->fold_mark == mark;
      inst_at(s, rinst)->fold_mark = mark;
      mapopt__sim_copy_add_af(
          s, c, atom, f, v,
          shared ? 0 : mapopt__sat_mul(rc, field_bytes(s, atom, f)));
      s->fold_left[v]++;
      if (base >= 0 && !shared)
        mapopt__sim_copy_depends(s, c, base);
      if ((fresh || shared) && s->ops[rop].state != OS_COMPLETE)
        fold_waits_for(s, c, rop);
    }
  }
  if (s->fold_left[v] == 0) {
    /* No reducer left an instance (inner reducers map virtually): the
     * version is complete here at once, and readers waiting for it go on,
     * instead of waiting for folds that will never come. */
    mapopt__sim_hold(s, p->dst, atom, f, v);
    wake_waiters(s, v, -1);
  }
  return -1;
}

/* Whether version v can be brought to dst now: it is there or on its way,
 * it is a fill whose fill op has completed, or a complete holder has it.
 * A fill is not at hand before its op completes: the op waits for the
 * readers of the data it overwrites, and an early fold's base filled into
 * an instance those readers still use would destroy what they read. */
static bool version_at_hand(sim_t *s, int64_t v, const sim_inst *dst,
                            int64_t atom, int f) {
  int64_t a = atom_index(dst->piece, atom);
  if (a < 0)
    return false;
  int64_t k = slot_of(s, dst, (size_t)a, f);
  const mapopt__version *ver = &s->dag.versions[v];
  if (dst->held[k] == v || dst->incoming[k] == v ||
      (ver->kind == VER_FILL && s->ops[ver->producer].state == OS_COMPLETE))
    return true;
  for (int64_t h = s->holder_head[v]; h >= 0;
       h = MAPOPT__VEC_AT(&s->hpool, hnode, h).next) {
    const sim_inst *in = inst_at(s, MAPOPT__VEC_AT(&s->hpool, hnode, h).inst);
    int64_t ia = atom_index(in->piece, atom);
    if (!in->freed && !in->reduction && ia >= 0 &&
        in->held[slot_of(s, in, (size_t)ia, f)] == v)
      return true;
  }
  return false;
}

/*
 * Plans, for a requirement whose producers are not all complete yet, the
 * folds of the reduced data it reads: Legion issues each reduction copy
 * when the reader maps, with its own reducer's completion as its
 * precondition, so each fold starts when its reducer ends instead of
 * after the last one. A version is planned once every reducer is mapped
 * and its base is at hand; this is tried when the reader maps and again
 * as each producer completes, and what is left waits for plan_copies.
 */
static void plan_folds_early(sim_t *s, int64_t op, int64_t r) {
  sim_op *o = &s->ops[op];
  const mapopt_app_req *req = &s->run->ops[op].reqs[r];
  int64_t q = s->dag.req_off[op] + r;
  if (!s->dag.reads_reduction[q] || !o->inst || o->inst[r] < 0 ||
      req->priv == MAPOPT_PRIV_WD || req->priv == MAPOPT_PRIV_REDUCE)
    return;
  const int32_t *need = &s->dag.need[s->dag.need_off[q]];
  copy_plan p;
  copy_plan_init(&p, op, r, o->inst[r]);
  const mapopt_app_piece *pc = req->piece;
  int64_t k = 0;
  for (size_t a = 0; a < pc->natoms; a++)
    for (uint64_t fm = req->fields; fm; fm &= fm - 1) {
      int f = __builtin_ctzll(fm); /* the fields, in order */
      int64_t v = need[k++];
      if (v < 0 || s->dag.versions[v].kind != VER_REDUCTION ||
          s->fold_target[v] >= 0)
        continue;
      const mapopt__red_set *rs = mapopt__sim_red_set(&s->dag, v);
      bool ready =
          rs->base < 0 ||
          version_at_hand(s, rs->base, inst_at(s, p.dst), pc->atoms[a].atom, f);
      for (int64_t i = 0; ready && i < rs->nred; i++)
        ready = s->ops[s->dag.reducers[rs->red_off + i]].state >= OS_MAPPED;
      if (ready)
        need_version(s, &p, pc->atoms[a].atom, f, v, pc->atoms[a].count, 0);
    }
  for (int i = 0; i < p.n; i++)
    if (copy_at(s, p.copy[i])->after == 0)
      mapopt__sim_schedule(s, s->now, EV_COPY_READY, p.copy[i]);
}

/* Plans the copies of requirement r of op, once it is mapped and its
 * data exists. Idempotent: what is held or in flight is not planned again. */
static void plan_copies(sim_t *s, int64_t op, int64_t r) {
  sim_op *o = &s->ops[op];
  if (!o->inst || o->inst[r] < 0)
    return;
  const mapopt_app_req *req = &s->run->ops[op].reqs[r];
  if (req->priv == MAPOPT_PRIV_WD || req->priv == MAPOPT_PRIV_REDUCE)
    return;
  int64_t q = s->dag.req_off[op] + r;
  const int32_t *need = &s->dag.need[s->dag.need_off[q]];
  copy_plan p;
  copy_plan_init(&p, op, r, o->inst[r]);
  const mapopt_app_piece *pc = req->piece;
  int64_t k = 0;
  for (size_t a = 0; a < pc->natoms; a++)
    for (uint64_t fm = req->fields; fm; fm &= fm - 1) {
      int f = __builtin_ctzll(fm); /* the fields, in order */
      int64_t v = need[k++];
      if (v >= 0)
        need_version(s, &p, pc->atoms[a].atom, f, v, pc->atoms[a].count, 0);
    }
  for (int i = 0; i < p.n; i++) {
    sim_copy *c = copy_at(s, p.copy[i]);
    if (c->after == 0)
      mapopt__sim_schedule(s, s->now, EV_COPY_READY, p.copy[i]);
  }
}

/* The readers waiting for reduced version v go on; by is the fold that
 * completed it (-1: none). */
static void wake_waiters(sim_t *s, int64_t v, int64_t by) {
  int64_t w = s->wait_head[v];
  s->wait_head[v] = -1;
  while (w >= 0) {
    hnode n = MAPOPT__VEC_AT(&s->waiters, hnode, w);
    int64_t op = SIM_REQ_CODE_OP(n.inst), r = SIM_REQ_CODE_POS(n.inst);
    s->ops[op].pending--;
    s->ops[op].woken_by = by;
    plan_copies(s, op, r);
    try_ready(s, op);
    w = n.next;
  }
}

static void copy_done(sim_t *s, int64_t c) {
  sim_copy cp = *copy_at(s, c);
  for (int64_t k = cp.first_af; k >= 0;) {
    caf e = MAPOPT__VEC_AT(&s->copy_afs, caf, k);
    k = e.next;
    if (cp.kind != COPY_FOLD) {
      mapopt__sim_hold(s, cp.dst_inst, e.atom, e.field, e.version);
      inst_at(s, cp.dst_inst)->copied = cp.kind != COPY_FILL;
      continue;
    }
    sim_inst *src = inst_at(s, cp.src_inst);
    if (--src->fold_left <= 0)
      mapopt__sim_mem_release(s, cp.src_inst);
    if (--s->fold_left[e.version] == 0) {
      mapopt__sim_hold(s, cp.dst_inst, e.atom, e.field, e.version);
      wake_waiters(s, e.version, c);
    }
  }
  for (int64_t d = cp.dep_head; d >= 0;) {
    dnode n = MAPOPT__VEC_AT(&s->deps, dnode, d);
    sim_copy *dc = copy_at(s, n.copy);
    dc->last_dep = c;
    if (--dc->after == 0)
      mapopt__sim_schedule(s, s->now, EV_COPY_READY, n.copy);
    d = n.next;
  }
  if (cp.src_inst >= 0)
    mapopt__sim_release_user(s, cp.src_inst);
  mapopt__sim_release_user(s, cp.dst_inst);
  sim_op *o = &s->ops[cp.op];
  o->last_copy = c;
  o->pending--;
  try_ready(s, cp.op);
}

/* ---- mapped, ready, running, complete ------------------------------------ */

static void on_mapped(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  if (ao->kind == MAPOPT_OP_TASK && !mapopt__sim_map_instances(s, op))
    return;
  o->state = OS_MAPPED;
  o->mapped_at = s->now;
  if (o->proc >= 0)
    s->procs[o->proc].assigned++;
  for (int64_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
    int64_t succ = s->succ[k];
    s->ops[succ].preds_unmapped--;
    mapopt__sim_try_mappable(s, succ);
    try_ready(s, succ); /* inner successors wait only for mapping */
  }
  for (size_t r = 0; r < ao->nreqs; r++) {
    if (o->raw_left[r] == 0)
      plan_copies(s, op, (int64_t)r);
    else
      plan_folds_early(s, op, (int64_t)r);
  }
  try_ready(s, op);
}

static bool fence_preds_complete(const sim_t *s, int64_t op) {
  for (int64_t k = s->dag.pred_off[op]; k < s->dag.pred_off[op + 1]; k++) {
    int64_t p = s->dag.preds[k];
    if (s->run->ops[p].kind == MAPOPT_OP_FENCE &&
        s->ops[p].state != OS_COMPLETE)
      return false;
  }
  return true;
}

static void try_ready(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  if (failed(s) || o->state != OS_MAPPED || o->pending > 0)
    return;
  const mapopt_app_op *ao = &s->run->ops[op];
  bool inner = ao->kind == MAPOPT_OP_TASK && s->run->tasks[ao->task].inner;
  if (inner ? !fence_preds_complete(s, op) : o->preds_incomplete > 0)
    return;
  o->state = OS_READY;
  o->ready_at = s->now;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  switch (ao->kind) {
  case MAPOPT_OP_TASK:
    if (mapopt__fifo_push(&s->procs[o->proc].ready, s->ctx, op) != MAPOPT_OK) {
      mapopt__sim_out_of_memory(s);
      return;
    }
    try_start(s, o->proc);
    break;
  case MAPOPT_OP_FILL:
    o->state = OS_EXECUTED;
    o->start_at = o->end_at = s->now;
    op_complete(s, op);
    break;
  case MAPOPT_OP_FENCE:
    mapopt__sim_schedule(s, mapopt__sat_add(s->now, rt->fence_ns), EV_COMPLETE,
                         op);
    break;
  case MAPOPT_OP_FUTURE_REDUCE:
    mapopt__sim_schedule(s, mapopt__sat_add(s->now, rt->future_ns), EV_COMPLETE,
                         op);
    break;
  }
}

/* Checks the variant's layout requirements: a violation is the
 * kernel's error when the task starts. */
static bool check_layout(sim_t *s, int64_t op) {
  const sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_variant *v = &s->run->tasks[ao->task].variants[o->variant];
  for (size_t k = 0; k < v->nrequires; k++) {
    const mapopt_app_layout_rule *rule = &v->requires[k];
    for (size_t r = 0; r < ao->nreqs; r++) { /* < MAPOPT_APP_MAX_ARGS */
      if (!((rule->args >> r) & 1u) || o->inst[r] < 0)
        continue;
      const sim_inst *in = inst_at(s, o->inst[r]);
      bool single = __builtin_popcountll(in->fields) == 1;
      bool bad = (rule->c_order != MAPOPT_LAYOUT_UNSET &&
                  rule->c_order != in->layout.c_order) ||
                 (!single && rule->soa != MAPOPT_LAYOUT_UNSET &&
                  rule->soa != in->layout.soa);
      if (!bad)
        continue;
      if (rule->error == MAPOPT_LAYOUT_ERROR_DGEMM) {
        mapopt__sim_error(
            s, MAPOPT_SIM_LAYOUT,
            "** On entry to DGEMM parameter number 8 had an illegal "
            "value");
      } else {
        mapopt__sim_error(
            s, MAPOPT_SIM_LAYOUT,
            "Assertion failed: stride does not match expected value.\n"
            "[mapopt-sim] task %s, region requirement %zu (%s), layout "
            "%s %s, on %s %" PRId64,
            task_name(s, op), r,
            ao->reqs[r].nnames ? ao->reqs[r].names[0] : "?",
            in->layout.soa == MAPOPT_LAYOUT_YES ? "SOA" : "AOS",
            in->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order",
            mapopt_shape_proc_name((mapopt_proc_kind)o->kind),
            s->procs[o->proc].local);
      }
      return false;
    }
  }
  return true;
}

static void start_task(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  sim_proc *p = &s->procs[o->proc];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_task *t = &s->run->tasks[ao->task];
  o->state = OS_RUNNING;
  o->start_at = s->now;
  o->behind = p->last_op;
  p->last_op = op;
  if (s->now > o->ready_at)
    o->cause = CAUSE_QUEUE;
  int64_t dur;
  if (t->inner) {
    dur = s->m->procs[o->kind].inner_overhead_ns;
  } else {
    if (!check_layout(s, op))
      return;
    mapopt_mem_kind mems[MAPOPT_APP_MAX_ARGS]; /* the plan's limit */
    int64_t ppm[MAPOPT_APP_MAX_ARGS];
    mapopt__sim_cost_inputs(s, op, mems, ppm, ao->nreqs);
    mapopt__task_cost_in in = {s->m,
                               s->run,
                               op,
                               o->variant,
                               mems,
                               ppm,
                               (int64_t)(s->opts->noise * 1e6 + 0.5),
                               s->opts->seed};
    int64_t state;
    dur = mapopt__sim_task_ns_memo(&s->cost_memo[ao->task], &in, NULL, NULL,
                                   NULL, &state);
    s->price_state[op] = (int32_t)state;
  }
  p->running = true;
  /* Times saturate: a task that would end past INT64_MAX ns ends there,
   * beyond every time limit, so the run is a TIMEOUT, not a wrapped clock
   * (whose elapsed time would sit below the lower bound). */
  p->free_at = mapopt__sat_add(s->now, dur);
  mapopt__sim_schedule(s, p->free_at, EV_TASK_END, op);
  if (t->inner) {
    /* The body is issued from this task's address space. */
    sim_ctx *c = ctx_of(s, op);
    c->as = o->as;
    c->replicated = mapopt_policy_replicated(s->prog, t->name, false, s->nas);
    o->children_left++; /* held until the body has run */
    ctx_issue(s, op);
  }
}

static void try_start(sim_t *s, int64_t proc) {
  sim_proc *p = &s->procs[proc];
  if (failed(s) || p->running || p->free_at > s->now)
    return;
  int64_t op;
  if (mapopt__fifo_pop(&p->ready, &op))
    start_task(s, op);
}

/* Writers' instances hold the versions they produced. */
static void publish_writes(sim_t *s, int64_t op) {
  const mapopt_app_op *ao = &s->run->ops[op];
  sim_op *o = &s->ops[op];
  for (int64_t v = s->dag.ver_off[op]; v < s->dag.ver_off[op + 1]; v++) {
    const mapopt__version *ver = &s->dag.versions[v];
    if (ver->kind == VER_REDUCTION) /* folded, never written by op */
      continue;
    int64_t af = ver->af, atom = s->af_atom[af];
    int f = (int)(af - s->af_off[atom]);
    if (ver->kind == VER_FILL) {
      if (s->newest[af] < v)
        s->newest[af] = v;
      continue;
    }
    for (size_t r = 0; r < ao->nreqs; r++) {
      const mapopt_app_req *req = &ao->reqs[r];
      if ((req->priv == MAPOPT_PRIV_RW || req->priv == MAPOPT_PRIV_WD) &&
          o->inst && o->inst[r] >= 0 && ((req->fields >> f) & 1u) &&
          atom_index(req->piece, atom) >= 0) {
        mapopt__sim_hold(s, o->inst[r], atom, f, v);
        inst_at(s, o->inst[r])->copied = false;
        break;
      }
    }
  }
}

static void task_end(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  sim_proc *p = &s->procs[o->proc];
  const mapopt_app_op *ao = &s->run->ops[op];
  p->running = false;
  p->assigned--;
  o->state = OS_EXECUTED;
  o->end_at = s->now;
  publish_writes(s, op);
  /* Instances: users, CollectMemory (docs/dsl.md, "CollectMemory"). */
  for (size_t r = 0; r < ao->nreqs; r++) {
    if (!o->inst || o->inst[r] < 0)
      continue;
    const mapopt_app_req *req = &ao->reqs[r];
    const req_policy *pol =
        mapopt__sim_req_decision(s, ao->task, r, req, o->kind);
    /* CollectMemory untracks the instance now, unless it is the only
     * holder of the newest data; it is freed when its last user is
     * done, and no later op reuses it. Only copies are collected: the
     * instance the data was written or filled in is its home, which the
     * mapper keeps. */
    if (req->priv == MAPOPT_PRIV_RO && pol && pol->collect &&
        inst_at(s, o->inst[r])->copied &&
        !mapopt__sim_only_newest_holder(s, o->inst[r]))
      inst_at(s, o->inst[r])->collect_pending = true;
    mapopt__sim_release_user(s, o->inst[r]);
  }
  /* InstanceLimit: the next waiting op of this task on this processor. */
  int64_t limit = s->task_limit[ao->task];
  if (limit > 0) {
    int64_t key = ao->task * s->nprocs + o->proc;
    s->limit_count[key]--;
    mapopt__heap_item it;
    if (mapopt__heap_pop(&s->limit_wait[key], &it)) {
      s->limit_count[key]++;
      mapopt__sim_admit(s, EV_ID(it.data));
    }
  }
  if (s->run->tasks[ao->task].inner) {
    if (--o->children_left == 0)
      op_complete(s, op);
  } else {
    op_complete(s, op);
  }
  try_start(s, o->proc);
}

static void op_complete(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  o->state = OS_COMPLETE;
  o->complete_at = s->now;
  s->ops_done++;
  s->last_complete_at = s->now;
  int64_t warmup = s->run->iterations_warmup;
  if (warmup > 0 && ao->timing.iteration == warmup - 1)
    s->warmup_end_at = s->now;
  if (ao->timing.iteration == warmup + s->run->iterations_timed - 1)
    s->timed_end_at = s->now;
  if (ao->kind == MAPOPT_OP_FILL)
    publish_writes(s, op);
  /* The folds of this reducer's contributions may go now. */
  for (int64_t d = s->fold_wait[op]; d >= 0;) {
    dnode n = MAPOPT__VEC_AT(&s->deps, dnode, d);
    if (--copy_at(s, n.copy)->after == 0)
      mapopt__sim_schedule(s, s->now, EV_COPY_READY, n.copy);
    d = n.next;
  }
  s->fold_wait[op] = -1;
  /* Consumers plan their copies first: a successor must not become ready
   * before the copies of the data this op produced are requested. */
  for (int64_t k = s->rawsucc_off[op]; k < s->rawsucc_off[op + 1]; k++) {
    int64_t cop = s->rawsucc[k], r = s->rawsucc_pos[k];
    if (s->ops[cop].state < OS_MAPPED)
      --s->ops[cop].raw_left[r];
    else if (--s->ops[cop].raw_left[r] == 0)
      plan_copies(s, cop, r);
    else /* a base or a reducer is done: some folds may go now */
      plan_folds_early(s, cop, r);
  }
  for (int64_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
    int64_t succ = s->succ[k];
    s->ops[succ].preds_incomplete--;
    s->ops[succ].last_pred = op;
    try_ready(s, succ);
  }
  sim_ctx *c = ctx_of(s, ao->parent);
  c->outstanding--;
  if (c->blocked_on == op)
    c->blocked_on = -1;
  if (ao->parent >= 0) {
    sim_op *parent = &s->ops[ao->parent];
    if (--parent->children_left == 0 && parent->state == OS_EXECUTED)
      op_complete(s, ao->parent);
  }
  ctx_issue(s, ao->parent);
}

/* ---- setup and the workspace --------------------------------------------- */

/* The per-evaluation state (only mapping results, instances, copies
 * and events). */
static mapopt_status setup(sim_t *s) {
  const mapopt_app_run *run = s->run;
  const mapopt_sim_plan *pl = s->plan;
  mapopt__arena *a = &s->arena;
  s->dag = pl->dag;
  s->succ_off = pl->succ_off;
  s->succ = pl->succ;
  s->rawsucc_off = pl->rawsucc_off;
  s->rawsucc = pl->rawsucc;
  s->rawsucc_pos = pl->rawsucc_pos;
  s->next_sib = pl->next_sib;
  s->af_off = pl->dag.af_off;
  s->af_atom = pl->dag.af_atom;
  mapopt_status st = mapopt__sim_build_machine(s);
  if (st != MAPOPT_OK)
    return st;
  mapopt__sim_ports_init(s);
  int64_t n = run->nops;
  /* Every field is set in the loop below: one pass over the ops. The
   * array starts on a cache line, so that each op has two of its own (the
   * arena gives 16-byte alignment). */
  unsigned char *ops_at =
      mapopt__arena_alloc(a, (size_t)(n ? n : 1) * sizeof *s->ops + 48);
  s->ops = ops_at ? (sim_op *)(ops_at + (-(uintptr_t)ops_at & 63)) : NULL;
  s->ctxs = mapopt__arena_zalloc(a, (size_t)pl->nctx * sizeof *s->ctxs);
  s->task_kind =
      mapopt__arena_alloc(a, (size_t)(run->ntasks + 1) * sizeof(int));
  s->task_limit = mapopt__arena_alloc(a, (size_t)(run->ntasks + 1) * 8);
  s->cost_memo =
      mapopt__arena_zalloc(a, (size_t)(run->ntasks + 1) * sizeof *s->cost_memo);
  s->price_state =
      mapopt__arena_alloc(a, (size_t)(n ? n : 1) * sizeof *s->price_state);
  /* Rounded up to a cache line inside a block one line larger. */
  uintptr_t answers = (uintptr_t)mapopt__arena_alloc(
      a, (size_t)(PIECE_ANSWERS * run->npieces + 1) * sizeof(inst_answer) +
             PIECE_ANSWERS_ALIGN);
  s->piece_answers = (inst_answer *)((answers + PIECE_ANSWERS_ALIGN - 1) &
                                     ~(uintptr_t)(PIECE_ANSWERS_ALIGN - 1));
  s->rr = mapopt__arena_zalloc(a, (size_t)(s->nas * 3 + 1) * 8);
  s->limit_count =
      mapopt__arena_zalloc(a, (size_t)(run->ntasks * s->nprocs + 1) * 8);
  s->limit_wait = mapopt__arena_zalloc(
      a, (size_t)(run->ntasks * s->nprocs + 1) * sizeof(mapopt__heap));
  int64_t nv = s->dag.nversions;
  s->holder_head = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->fold_target = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->fold_left = mapopt__arena_zalloc(a, (size_t)(nv + 1) * 8);
  s->wait_head = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->newest = mapopt__arena_alloc(a, (size_t)(pl->dag.naf + 1) * 8);
  s->fold_wait = mapopt__arena_alloc(a, (size_t)(n + 1) * 8);
  if (!s->ops || !s->ctxs || !s->task_kind || !s->task_limit || !s->cost_memo ||
      !s->price_state || !answers || !s->rr || !s->limit_count ||
      !s->limit_wait || !s->holder_head || !s->fold_target || !s->wait_head ||
      !s->newest || !s->fold_wait)
    return MAPOPT_ENOMEM;
  for (int64_t v = 0; v < nv; v++)
    s->holder_head[v] = s->fold_target[v] = s->wait_head[v] = -1;
  for (int64_t k = 0; k < pl->dag.naf; k++)
    s->newest[k] = -1;
  for (int64_t k = 0; k < PIECE_ANSWERS * run->npieces; k++)
    s->piece_answers[k].inst = -1;
  for (int t = 0; t < run->ntasks; t++) {
    s->task_kind[t] = -1;
    s->task_limit[t] =
        mapopt_policy_instance_limit(s->prog, run->tasks[t].name);
  }
  for (int64_t i = 0; i < pl->nctx; i++) {
    s->ctxs[i].next = pl->ctx_first[i];
    s->ctxs[i].blocked_on = -1;
  }
  s->ctxs[0].as = 0;
  s->ctxs[0].replicated =
      mapopt_policy_replicated(s->prog, "main", true, s->nas);
  /* Per requirement, in one array each: the RAW producers left, and the
   * instances (an op's inst points into it once the op is mapped). */
  int32_t *raw_left = mapopt__arena_alloc(a, (size_t)(s->dag.nreqs + 1) * 4);
  s->inst_slots = mapopt__arena_alloc(a, (size_t)(s->dag.nreqs + 1) * 8);
  if (!raw_left || !s->inst_slots)
    return MAPOPT_ENOMEM;
  for (int64_t q = 0; q < s->dag.nreqs; q++)
    raw_left[q] = s->dag.raw_off[q + 1] - s->dag.raw_off[q];
  for (int64_t i = 0; i < n; i++) {
    sim_op *o = &s->ops[i];
    *o = (sim_op){.proc = -1,
                  .last_pred = -1,
                  .last_copy = -1,
                  .behind = -1,
                  .woken_by = -1};
    s->fold_wait[i] = -1;
    o->preds_unmapped = o->preds_incomplete =
        s->dag.pred_off[i + 1] - s->dag.pred_off[i];
    o->raw_left = &raw_left[s->dag.req_off[i]];
  }
  s->policy_cache = mapopt__arena_zalloc(
      a, (size_t)(run->ntasks * pl->max_reqs * MAPOPT_PROC_KIND_COUNT *
                      POLICY_WAYS +
                  1) *
             sizeof *s->policy_cache);
  if (!s->policy_cache)
    return MAPOPT_ENOMEM;
  for (int64_t k = 0; k < run->ntasks * s->nprocs; k++)
    mapopt__heap_init(&s->limit_wait[k]);
  return MAPOPT_OK;
}

/* The growable state, initialized before anything can fail so that
 * teardown always sees valid containers. */

/* Lends the workspace's containers to an evaluation, and takes them back
 * emptied: their memory serves the next evaluation. */
static void borrow(sim_t *s, const pooled_arena *pa) {
  s->insts = pa->insts;
  s->hpool = pa->hpool;
  s->waiters = pa->waiters;
  s->copies = pa->copies;
  s->copy_afs = pa->copy_afs;
  s->deps = pa->deps;
  s->util_jobs = pa->util_jobs;
  s->flow_set = pa->flow_set;
  s->util_events = pa->util_events;
  s->util_free = -1;
  s->events = pa->events;
}

static void give_back(sim_t *s, pooled_arena *pa) {
  mapopt__vec *vs[] = {&s->insts,     &s->hpool,    &s->waiters,
                       &s->copies,    &s->copy_afs, &s->deps,
                       &s->util_jobs, &s->flow_set, &s->util_events};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
    vs[i]->len = 0;
  s->events.len = 0;
  pa->insts = s->insts;
  pa->hpool = s->hpool;
  pa->waiters = s->waiters;
  pa->copies = s->copies;
  pa->copy_afs = s->copy_afs;
  pa->deps = s->deps;
  pa->util_jobs = s->util_jobs;
  pa->flow_set = s->flow_set;
  pa->util_events = s->util_events;
  pa->events = s->events;
}

static void teardown(sim_t *s) {
  for (int64_t i = 0; s->procs && i < s->nprocs; i++)
    mapopt__fifo_destroy(&s->procs[i].ready, s->ctx);
  for (int64_t i = 0; s->mems && i < s->nmems; i++)
    mapopt__vec_destroy(&s->mems[i].insts, s->ctx);
  for (int64_t k = 0; s->limit_wait && k < (int64_t)s->run->ntasks * s->nprocs;
       k++)
    mapopt__heap_destroy(&s->limit_wait[k], s->ctx);
  mapopt__sb_destroy(&s->errtext);
  mapopt__sb_destroy(&s->log);
}

/* ---- the event loop ------------------------------------------------------ */

static void dispatch(sim_t *s, int type, int64_t id) {
  switch (type) {
  case EV_ISSUE:
    ctx_issue(s, id - 1);
    break;
  case EV_LAUNCHED:
    launched(s, id);
    break;
  case EV_MAPPED:
    on_mapped(s, id);
    break;
  case EV_COPY_READY:
    mapopt__sim_copy_ready(s, id);
    break;
  case EV_FLOW_START:
    copy_at(s, id)->flowing = true;
    mapopt__sim_flow_start(s, id);
    break;
  case EV_COPY_DONE:
    if (mapopt__sim_flow_end(s, id))
      copy_done(s, MAPOPT__SIM_COPY_EVENT_COPY(id));
    break;
  case EV_TASK_END:
    task_end(s, id);
    break;
  case EV_COMPLETE:
    s->ops[id].state = OS_EXECUTED;
    op_complete(s, id);
    break;
  }
}

static void event_loop(sim_t *s) {
  int64_t max_events =
      s->opts->max_events > 0 ? s->opts->max_events : 1000000000;
  mapopt__sim_schedule(s, 0, EV_ISSUE, 0);
  mapopt__heap_item it;
  while (!failed(s) && mapopt__heap_pop(&s->events, &it)) {
    if (EV_TYPE(it.data) == EV_UTIL_NEXT)
      it = mapopt__sim_util_next(s, EV_ID(it.data));
    if (it.time > s->time_limit || s->nevents >= max_events) {
      s->now = it.time < s->time_limit ? it.time : s->time_limit;
      mapopt__sim_error(s, MAPOPT_SIM_TIMEOUT,
                        "simulated time limit exceeded (%g s)",
                        (double)s->time_limit / 1e9);
      break;
    }
    s->now = it.time;
    s->nevents++;
    dispatch(s, EV_TYPE(it.data), EV_ID(it.data));
    if (s->opts->progress && (s->nevents & 0xFFFF) == 0)
      s->opts->progress(s->opts->progress_ud, s->ops_done, s->run->nops,
                        s->now);
  }
  if (!failed(s) && s->ops_done < s->run->nops)
    mapopt__sim_error(s, MAPOPT_SIM_DEADLOCK,
                      "simulation deadlock: %" PRId64 " of %" PRId64
                      " operations never completed (internal error)",
                      s->run->nops - s->ops_done, s->run->nops);
}

mapopt_status
mapopt_sim_run_plan(mapopt_ctx *ctx, const mapopt_machine *machine,
                    const mapopt_sim_plan *plan, const mapopt_program *prog,
                    const mapopt_sim_options *opts, mapopt_sim_result **out) {
  static const mapopt_sim_options defaults;
  if (!ctx || !machine || !plan || !prog || !out)
    return MAPOPT_EINVAL;
  const mapopt_app_run *run = plan->run;
  if (!opts)
    opts = &defaults;
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  sim_t s;
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.m = machine;
  s.run = run;
  s.plan = plan;
  s.prog = prog;
  mapopt_sim_plan *mplan = (mapopt_sim_plan *)plan; /* its pool only */
  pthread_mutex_lock(&mplan->lock);
  pooled_arena *pa = mplan->pool;
  if (pa)
    mplan->pool = pa->next;
  pthread_mutex_unlock(&mplan->lock);
  if (!pa) {
    pa = mapopt__malloc(ctx, sizeof *pa);
    if (!pa)
      return MAPOPT_ENOMEM;
    mapopt__arena_init(&pa->arena, ctx);
    mapopt__sim_workspace_init(pa);
  }
  s.opts = opts;
  s.time_limit = opts->time_limit_ns <= 0 ? MAPOPT_SIM_DEFAULT_TIME_LIMIT_NS
                 : opts->time_limit_ns > MAPOPT_SIM_MAX_TIME_NS
                     ? MAPOPT_SIM_MAX_TIME_NS
                     : opts->time_limit_ns;
  s.arena = pa->arena;
  borrow(&s, pa);
  mapopt__vec_init(&s.mem_log, 3 * sizeof(int64_t));
  mapopt__sb_init(&s.errtext, ctx);
  mapopt__sb_init(&s.log, ctx);
  mapopt_sim_result *res = mapopt__sim_result_new(ctx);
  mapopt_status st = res ? mapopt_diags_new(ctx, &s.diags) : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    st = setup(&s);
  if (st == MAPOPT_OK) {
    event_loop(&s);
    st = s.out_of_memory ? MAPOPT_ENOMEM : mapopt__sim_fill_result(&s, res);
  }
  if (st == MAPOPT_OK) {
    clock_gettime(CLOCK_MONOTONIC, &w1);
    res->sim_wall_us =
        (w1.tv_sec - w0.tv_sec) * 1000000 + (w1.tv_nsec - w0.tv_nsec) / 1000;
    res->error_text = s.errtext.len
                          ? mapopt__strndup(ctx, s.errtext.data, s.errtext.len)
                          : NULL;
    st = mapopt__sim_write_log(&s, res);
  }
  if (st == MAPOPT_OK && opts->trace)
    st = mapopt__sim_write_trace(&s, res);
  if (s.diags)
    mapopt_diags_free(s.diags);
  mapopt__vec_destroy(&s.mem_log, ctx);
  teardown(&s);
  give_back(&s, pa);
  mapopt__arena_reset(&s.arena);
  pa->arena = s.arena;
  pthread_mutex_lock(&mplan->lock);
  pa->next = mplan->pool;
  mplan->pool = pa;
  pthread_mutex_unlock(&mplan->lock);
  if (st != MAPOPT_OK) {
    mapopt_sim_result_free(res);
    return st;
  }
  *out = res;
  return MAPOPT_OK;
}

mapopt_status mapopt_sim_run(mapopt_ctx *ctx, const mapopt_machine *machine,
                             const mapopt_app_run *run,
                             const mapopt_program *prog,
                             const mapopt_sim_options *opts,
                             mapopt_sim_result **out) {
  mapopt_sim_plan *plan;
  mapopt_status st = mapopt_sim_plan_new(ctx, run, &plan);
  if (st != MAPOPT_OK)
    return st;
  st = mapopt_sim_run_plan(ctx, machine, plan, prog, opts, out);
  mapopt_sim_plan_free(plan);
  return st;
}

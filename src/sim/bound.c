/*
 * The lower bound on the elapsed time (SIMULATOR.md §6): the largest of a
 * work bound, a critical-path bound and the longest task, each computed
 * from the best-case costs c(p, k) of cost.c over the ops of the timed
 * window -- or, in fenced mode, over each timed repetition and summed.
 *
 * The bound ignores data movement, runtime overheads and memory capacity;
 * it must never exceed the makespan of any schedule the engine can
 * produce, so every rounding goes down and every doubt (an op that may run
 * as an inner task, a missing memory) resolves towards a smaller value.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"
#include "mapopt/machine.h"

/* The kinds a variant can have that the machine models (CPU, GPU, OMP are
 * the first three values of mapopt_proc_kind). */
#define NKINDS 3
/* The simplex grid of §6.2: mu_k = i_k / GRID. */
#define GRID 64

/* One op of the window with its costs. */
typedef struct lb_op {
  int64_t op;
  int64_t group;     /* fenced mode: the repetition; else 0 */
  int64_t c[NKINDS]; /* c(p, k), or -1 when p cannot run on k */
  int64_t w;         /* min_k c(p, k), 0 when it runs nowhere */
  bool inner;        /* some variant it may run as is inner */
} lb_op;

/* A distinct cost vector and how many ops of the group have it. */
typedef struct lb_vec {
  int64_t c[NKINDS];
  int64_t mult;
} lb_vec;

static int cmp_group_op(const void *pa, const void *pb) {
  const lb_op *a = pa, *b = pb;
  if (a->group != b->group)
    return a->group < b->group ? -1 : 1;
  return a->op < b->op ? -1 : a->op > b->op;
}

static bool same_vec(const int64_t *a, const int64_t *b) {
  for (int k = 0; k < NKINDS; k++)
    if (a[k] != b[k])
      return false;
  return true;
}

/* The distinct vectors of vecs[0..n) with their multiplicities, in place
 * (in the order first seen: work_bound only sums over them); returns how
 * many. slots: scratch of cap entries, cap a power of two above 2n. */
static size_t distinct_vecs(lb_vec *vecs, size_t n, uint32_t *slots,
                            size_t cap) {
  memset(slots, 0, cap * sizeof *slots);
  size_t nd = 0;
  for (size_t j = 0; j < n; j++) {
    if (nd > 0 && same_vec(vecs[nd - 1].c, vecs[j].c)) { /* runs are common */
      vecs[nd - 1].mult++;
      continue;
    }
    uint64_t h = 0;
    for (int k = 0; k < NKINDS; k++)
      h = (h ^ (uint64_t)vecs[j].c[k]) * UINT64_C(0x9e3779b97f4a7c15);
    size_t i = (size_t)(h >> 32) & (cap - 1);
    while (slots[i] && !same_vec(vecs[slots[i] - 1].c, vecs[j].c))
      i = (i + 1) & (cap - 1);
    if (slots[i]) {
      vecs[slots[i] - 1].mult++;
    } else {
      vecs[nd] = vecs[j];
      slots[i] = (uint32_t)++nd;
    }
  }
  return nd;
}

/* Whether ops a and b, of one task, have the figures c(p, k) is computed
 * from (per variant: flops, fixed time; per requirement: bytes, gathers,
 * atomics), so that they have the same costs. */
static bool same_figures(const mapopt_app_run *run, int64_t a, int64_t b) {
  const mapopt_app_op *x = &run->ops[a], *y = &run->ops[b];
  if (x->task != y->task || x->nreqs != y->nreqs)
    return false;
  for (int v = 0; v < run->tasks[x->task].nvariants; v++)
    if ((x->flops ? x->flops[v] : 0) != (y->flops ? y->flops[v] : 0) ||
        (x->fixed_ns ? x->fixed_ns[v] : 0) !=
            (y->fixed_ns ? y->fixed_ns[v] : 0))
      return false;
  for (size_t r = 0; r < x->nreqs; r++)
    if (x->reqs[r].bytes != y->reqs[r].bytes ||
        x->reqs[r].gathers != y->reqs[r].gathers ||
        x->reqs[r].atomics != y->reqs[r].atomics)
      return false;
  return true;
}

/* floor(i * c / (GRID * n)) for 0 <= i <= GRID, c >= 0, n >= 1, exact and
 * without overflow (c is split by the divisor first). */
static int64_t grid_term(int64_t i, int64_t c, int64_t n) {
  int64_t d;
  if (mapopt__mul_ovf(n, GRID, &d))
    return 0;
  return i * (c / d) + i * (c % d) / d;
}

/*
 * LB_work of §6.2 over the distinct cost vectors vecs[0..nvec): the best
 * point of the grid mu_k = i_k / GRID over the kinds present. A kind with
 * i_k = 0 charges nothing, so an op whose kinds all have i_k = 0 adds 0.
 */
static int64_t work_bound(const lb_vec *vecs, size_t nvec,
                          const int64_t n[NKINDS]) {
  bool present[NKINDS] = {false};
  for (size_t j = 0; j < nvec; j++)
    for (int k = 0; k < NKINDS; k++)
      if (vecs[j].c[k] >= 0)
        present[k] = true;
  int64_t best = 0;
  for (int a = 0; a <= GRID; a++)
    for (int b = 0; a + b <= GRID; b++) {
      int64_t i[NKINDS] = {a, b, GRID - a - b};
      bool ok = true;
      for (int k = 0; k < NKINDS; k++)
        if (i[k] > 0 && !present[k])
          ok = false;
      if (!ok)
        continue;
      int64_t sum = 0;
      for (size_t j = 0; j < nvec; j++) {
        int64_t t = -1;
        for (int k = 0; k < NKINDS; k++) {
          if (vecs[j].c[k] < 0)
            continue;
          int64_t x = grid_term(i[k], vecs[j].c[k], n[k]);
          if (t < 0 || x < t)
            t = x;
        }
        if (t > 0)
          sum = mapopt__sat_add(sum, mapopt__sat_mul(t, vecs[j].mult));
      }
      if (sum > best)
        best = sum;
    }
  return best;
}

/*
 * LB_cp of §6.3 over the ops g[0..ng) (sorted by op index): F[y] bounds
 * y's completion from the start of the window. A leaf, fill, fence or
 * future reduction starts after every predecessor in the window is
 * COMPLETE. An inner task needs its predecessors only MAPPED (fences
 * excepted, §4.1), so only fences chain into it; it is COMPLETE no earlier
 * than any of its descendants, which the walk up the parent chain records.
 * stamp[op] == tag marks the ops of the window.
 */
static int64_t cp_bound(const mapopt_app_run *run, const mapopt__sim_dag *dag,
                        const lb_op *g, size_t ng, int64_t *F, int64_t *stamp,
                        int64_t tag) {
  for (size_t j = 0; j < ng; j++) {
    stamp[g[j].op] = tag;
    F[g[j].op] = 0;
  }
  int64_t best = 0;
  for (size_t j = 0; j < ng; j++) {
    int64_t y = g[j].op;
    int64_t base = 0;
    if (dag && dag->pred_off && y < dag->nops) {
      for (int64_t e = dag->pred_off[y]; e < dag->pred_off[y + 1]; e++) {
        int64_t p = dag->preds[e];
        /* Canonical order puts predecessors first; anything else is
         * ignored, which can only lower the bound. */
        if (p < 0 || p >= y || stamp[p] != tag)
          continue;
        if (g[j].inner && run->ops[p].kind != MAPOPT_OP_FENCE)
          continue;
        if (F[p] > base)
          base = F[p];
      }
    }
    F[y] = mapopt__sat_add(base, g[j].w);
    int64_t child = y;
    for (int64_t a = run->ops[y].parent; a >= 0 && a < child;
         child = a, a = run->ops[a].parent)
      if (stamp[a] == tag && F[a] < F[y])
        F[a] = F[y];
  }
  for (size_t j = 0; j < ng; j++)
    if (F[g[j].op] > best)
      best = F[g[j].op];
  return best;
}

/* max(LB_work, LB_cp, LB_task) of one window. vecs: scratch of ng, slots
 * of cap (distinct_vecs). */
static int64_t window_bound(const mapopt_app_run *run,
                            const mapopt__sim_dag *dag, const lb_op *g,
                            size_t ng, const int64_t n[NKINDS], lb_vec *vecs,
                            uint32_t *slots, size_t cap, int64_t *F,
                            int64_t *stamp, int64_t tag) {
  int64_t lb_task = 0;
  size_t nv = 0;
  for (size_t j = 0; j < ng; j++) {
    if (g[j].w > lb_task)
      lb_task = g[j].w;
    bool any = false;
    for (int k = 0; k < NKINDS; k++)
      any = any || g[j].c[k] >= 0;
    if (!any)
      continue;
    for (int k = 0; k < NKINDS; k++)
      vecs[nv].c[k] = g[j].c[k];
    vecs[nv].mult = 1;
    nv++;
  }
  size_t nd = distinct_vecs(vecs, nv, slots, cap);
  int64_t lb = work_bound(vecs, nd, n);
  int64_t cp = cp_bound(run, dag, g, ng, F, stamp, tag);
  if (cp > lb)
    lb = cp;
  return lb_task > lb ? lb_task : lb;
}

mapopt_status mapopt__sim_lower_bound(mapopt_ctx *ctx,
                                      const mapopt_machine *machine,
                                      const mapopt_app_run *run,
                                      const mapopt__sim_dag *dag,
                                      int64_t *out) {
  bool fenced = run->timing == MAPOPT_TIMING_FENCED;
  size_t nsel = 0;
  for (int64_t i = 0; i < run->nops; i++)
    nsel += run->ops[i].timing.timed;
  if (nsel == 0) {
    *out = 0;
    return MAPOPT_OK;
  }
  size_t nops = (size_t)run->nops;
  lb_op *sel = mapopt__calloc(ctx, nsel, sizeof *sel);
  lb_vec *vecs = mapopt__calloc(ctx, nsel, sizeof *vecs);
  size_t cap = 16;
  while (cap < 2 * nsel && cap < SIZE_MAX / 4)
    cap *= 2;
  uint32_t *slots = nsel < UINT32_MAX / 2
                        ? mapopt__malloc(ctx, cap * sizeof *slots)
                        : NULL; /* vectors are numbered in 32 bits */
  int64_t *F = mapopt__calloc(ctx, nops, sizeof *F);
  int64_t *stamp = mapopt__calloc(ctx, nops, sizeof *stamp);
  /* Per task: the last op priced, whose costs an op with the same figures
   * has too (the points of a launch mostly do). */
  int64_t *last = mapopt__malloc(ctx, (size_t)(run->ntasks + 1) * sizeof *last);
  mapopt_status st = MAPOPT_ENOMEM;
  if (!sel || !vecs || !slots || !F || !stamp || !last)
    goto done;
  for (int t = 0; t < run->ntasks; t++)
    last[t] = -1;

  int64_t n[NKINDS];
  for (int k = 0; k < NKINDS; k++)
    n[k] = mapopt__sim_proc_total(machine, run, (mapopt_proc_kind)k);
  size_t j = 0;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = &run->ops[i];
    if (!o->timing.timed)
      continue;
    lb_op *s = &sel[j++];
    s->op = i;
    s->group = fenced ? o->timing.repetition : 0;
    s->w = -1;
    int64_t *prev =
        o->kind == MAPOPT_OP_TASK && o->task >= 0 && o->task < run->ntasks
            ? &last[o->task]
            : NULL;
    const lb_op *like =
        prev && *prev >= 0 && same_figures(run, sel[*prev].op, i) ? &sel[*prev]
                                                                  : NULL;
    for (int k = 0; k < NKINDS; k++) {
      s->c[k] =
          like ? like->c[k]
               : mapopt__sim_best_cost(machine, run, i, (mapopt_proc_kind)k);
      if (s->c[k] >= 0 && (s->w < 0 || s->c[k] < s->w))
        s->w = s->c[k];
    }
    if (prev)
      *prev = (int64_t)(j - 1);
    if (s->w < 0)
      s->w = 0; /* not a task, or it runs nowhere (NO_VARIANT) */
    if (o->kind == MAPOPT_OP_TASK && o->task >= 0) {
      const mapopt_app_task *t = &run->tasks[o->task];
      for (int v = 0; v < t->nvariants; v++)
        if (t->variants[v].inner && (unsigned)t->variants[v].kind < NKINDS &&
            s->c[t->variants[v].kind] >= 0)
          s->inner = true;
    }
  }
  /* The ops were taken in order, so one group (window mode) or groups in
   * order are sorted already: the sort is for the rest. */
  bool sorted = true;
  for (size_t i = 1; i < nsel && sorted; i++)
    sorted = cmp_group_op(&sel[i - 1], &sel[i]) < 0;
  if (!sorted)
    qsort(sel, nsel, sizeof *sel, cmp_group_op);
  for (size_t i = 0; i < nops; i++)
    stamp[i] = -1;
  int64_t lb = 0;
  for (size_t a = 0, b; a < nsel; a = b) {
    for (b = a + 1; b < nsel && sel[b].group == sel[a].group; b++)
      ;
    lb = mapopt__sat_add(lb, window_bound(run, dag, sel + a, b - a, n, vecs,
                                          slots, cap, F, stamp, (int64_t)a));
  }
  *out = lb;
  st = MAPOPT_OK;
done:
  mapopt__free(ctx, sel, nsel * sizeof *sel);
  mapopt__free(ctx, vecs, nsel * sizeof *vecs);
  mapopt__free(ctx, slots, cap * sizeof *slots);
  mapopt__free(ctx, last, (size_t)(run->ntasks + 1) * sizeof *last);
  mapopt__free(ctx, F, nops * sizeof *F);
  mapopt__free(ctx, stamp, nops * sizeof *stamp);
  return st;
}

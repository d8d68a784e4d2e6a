/*
 * The lower bound on the elapsed time (docs/sim.md, "The lower bound"):
 * the largest of a work bound, a critical-path bound and the longest task,
 * each computed from the best-case costs c(p, k) of cost.c over the ops of
 * the timed window -- or, in fenced mode, over each timed repetition and
 * summed. The critical path also counts the folds a reduction cannot
 * avoid: a reader of reduced data waits for every contribution to be
 * folded into one instance, and a contribution made on another processor
 * than that instance's is folded by a copy between two memories, which no
 * placement makes free (fold_join).
 *
 * The bound ignores other data movement, runtime overheads and memory
 * capacity; it must never exceed the makespan of any schedule the engine
 * can produce, so every rounding goes down and every doubt (an op that may
 * run as an inner task, a missing memory, a reducer outside the window)
 * resolves towards a smaller value.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"
#include "mapopt/machine.h"

/* The kinds a variant can have that the machine models (CPU, GPU, OMP are
 * the first three values of mapopt_proc_kind). */
#define NKINDS 3
/* The simplex grid of the work bound: mu_k = i_k / GRID. */
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
 * LB_work (the work term of docs/sim.md, "The lower bound") over the distinct
 * cost vectors vecs[0..nvec): the best point of the grid mu_k = i_k / GRID over
 * the kinds present. A kind with i_k = 0 charges nothing, so an op whose kinds
 * all have i_k = 0 adds 0.
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

/* ---- the folds of a reduction ---------------------------------------------
 */

/* One requirement of a reducer that contributes to a reader, and the bytes
 * its fold moves. */
typedef struct contrib {
  int64_t op;
  size_t req;
  int64_t bytes;
} contrib;

/* A reducer's place in the join: its earliest start, its least work and
 * completion, and the earliest its folds can end when it runs on another
 * processor than the fold target. */
typedef struct joiner {
  int64_t start, work, end, remote;
} joiner;

/* What the bound needs besides the window's ops: the machine, the dag, the
 * scratch of the joins. */
typedef struct lb_ctx {
  const mapopt_machine *machine;
  const mapopt_app_run *run;
  const mapopt__sim_dag *dag;
  contrib *c;
  joiner *j;
  size_t cap; /* of c and j */
} lb_ctx;

static int cmp_contrib(const void *pa, const void *pb) {
  const contrib *a = pa, *b = pb;
  if (a->op != b->op)
    return a->op < b->op ? -1 : 1;
  return a->req < b->req ? -1 : a->req > b->req;
}

static int cmp_remote_desc(const void *pa, const void *pb) {
  const joiner *a = pa, *b = pb;
  return a->remote > b->remote ? -1 : a->remote < b->remote;
}

/*
 * The least time a fold out of an instance in memory kind from can take to
 * reach a memory of another processor: its latency and bytes at the
 * fastest channel such a copy can use. A fold between two processors'
 * instances is never FB_LOCAL (a framebuffer is its GPU's alone): from a
 * framebuffer it goes to a peer, to host memory or over the network; from
 * host memory to another host memory, a framebuffer or the network. -1
 * when no channel can carry it.
 */
static int64_t fold_ns(const mapopt_machine *m, mapopt_mem_kind from,
                       int64_t bytes) {
  static const int fb[] = {MAPOPT_CHAN_FB_FB_PEER, MAPOPT_CHAN_FB_HOST,
                           MAPOPT_CHAN_NETWORK};
  static const int host[] = {MAPOPT_CHAN_HOST_HOST, MAPOPT_CHAN_FB_HOST,
                             MAPOPT_CHAN_NETWORK};
  const int *ch = from == MAPOPT_MEM_FBMEM ? fb : host;
  int64_t bw = 0, lat = -1;
  for (int i = 0; i < 3; i++) {
    const mapopt_channel_params *p = &m->channels[ch[i]];
    if (!p->present || (ch[i] == MAPOPT_CHAN_NETWORK && m->nodes < 2))
      continue;
    int64_t b = p->bw_mbps > p->cross_socket_bw_mbps ? p->bw_mbps
                                                     : p->cross_socket_bw_mbps;
    if (b <= 0)
      continue;
    if (b > bw)
      bw = b;
    if (lat < 0 || p->lat_ns < lat)
      lat = p->lat_ns;
  }
  return bw > 0 ? mapopt__sat_add(lat, bytes * 1000 / bw) : -1;
}

/* The earliest the folds of contribution c can end when its reducer (start
 * s) runs on another processor than the fold target: over the kinds the
 * reducer can run on and the memories its reduction instance can be in,
 * its least cost with that instance there, then the fold; -1 when none. */
static int64_t remote_end(const lb_ctx *L, const contrib *c, int64_t s) {
  int64_t best = -1;
  for (int k = 0; k < NKINDS; k++)
    for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++) {
      int64_t t = mapopt__sim_best_cost_in(L->machine, L->run, c->op,
                                           (mapopt_proc_kind)k, c->req,
                                           (mapopt_mem_kind)mk);
      int64_t f =
          t >= 0 ? fold_ns(L->machine, (mapopt_mem_kind)mk, c->bytes) : -1;
      if (f < 0)
        continue;
      int64_t end = mapopt__sat_add(mapopt__sat_add(s, t), f);
      if (best < 0 || end < best)
        best = end;
    }
  return best;
}

/* The op's entry in g[0..ng) (sorted by op), or NULL. */
static const lb_op *find_op(const lb_op *g, size_t ng, int64_t op) {
  size_t lo = 0, hi = ng;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g[mid].op < op)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < ng && g[lo].op == op ? &g[lo] : NULL;
}

/* The count of atom in op's requirement r's piece; 0 when not there. */
static int64_t atom_count(const mapopt_app_req *q, int64_t atom) {
  size_t lo = 0, hi = q->piece->natoms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (q->piece->atoms[mid].atom < atom)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < q->piece->natoms && q->piece->atoms[lo].atom == atom
             ? q->piece->atoms[lo].count
             : 0;
}

/*
 * The earliest requirement q of reader y can have its reduced data (0:
 * nothing to add). Every contribution is folded into one instance, after
 * its reducer: the reducers on that instance's processor run there one
 * after another (their completion is at least their least start plus
 * their summed work, and at least each one's own), the others' folds
 * cross between memories (remote_end). Whichever reducers share the
 * target's processor, the data is complete no earlier than the larger of
 * the two; the bound is the least of that over every choice of them --
 * for a choice, the ones whose remote folds end latest are the ones worth
 * keeping local, so the choices to try are the prefixes of the reducers
 * in decreasing order of remote end. A reducer outside the window, one
 * that may run as an inner task (no instance, no fold) or one without a
 * remote path makes the join unknown: 0.
 */
static int64_t fold_join(lb_ctx *L, const lb_op *g, size_t ng, const int64_t *F,
                         const int64_t *stamp, int64_t tag, int64_t y,
                         size_t q) {
  const mapopt_app_run *run = L->run;
  const mapopt__sim_dag *dag = L->dag;
  const mapopt_app_req *rq = &run->ops[y].reqs[q];
  if (rq->priv != MAPOPT_PRIV_RO && rq->priv != MAPOPT_PRIV_RW)
    return 0;
  int64_t qi = dag->req_off[y] + (int64_t)q;
  const int32_t *need = &dag->need[dag->need_off[qi]];
  const mapopt_app_region *reg = &run->regions[rq->piece->region];
  size_t n = 0, k = 0;
  for (size_t a = 0; a < rq->piece->natoms; a++)
    for (uint64_t fm = rq->fields; fm; fm &= fm - 1) {
      int f = __builtin_ctzll(fm);
      int64_t v = need[k++];
      if (v < 0 || dag->versions[v].kind != VER_REDUCTION)
        continue;
      const mapopt__red_set *rs = mapopt__sim_red_set(dag, v);
      for (int64_t i = 0; i < rs->nred; i++) {
        int64_t r = dag->reducers[rs->red_off + i];
        const mapopt_app_op *ro = &run->ops[r];
        for (size_t j = 0; j < ro->nreqs; j++) {
          const mapopt_app_req *x = &ro->reqs[j];
          int64_t cnt = x->priv == MAPOPT_PRIV_REDUCE && (x->fields >> f & 1u)
                            ? atom_count(x, rq->piece->atoms[a].atom)
                            : 0;
          if (!cnt)
            continue;
          if (n == L->cap)
            return 0; /* more than the scratch holds: no join */
          L->c[n++] =
              (contrib){r, j, mapopt__sat_mul(cnt, reg->field_bytes[f])};
          break;
        }
      }
    }
  if (n == 0)
    return 0;
  qsort(L->c, n, sizeof *L->c, cmp_contrib);
  size_t m = 0;
  for (size_t i = 0; i < n;) {
    int64_t r = L->c[i].op;
    const lb_op *e = find_op(g, ng, r);
    if (!e || r >= y || stamp[r] != tag || e->inner)
      return 0;
    joiner *jn = &L->j[m++];
    *jn = (joiner){F[r] - e->w, e->w, F[r], 0};
    for (; i < n && L->c[i].op == r;) {
      contrib c = L->c[i];
      for (i++; i < n && L->c[i].op == r && L->c[i].req == c.req; i++)
        c.bytes = mapopt__sat_add(c.bytes, L->c[i].bytes);
      int64_t end = remote_end(L, &c, jn->start);
      if (end < 0)
        return 0;
      if (end > jn->remote)
        jn->remote = end;
    }
  }
  qsort(L->j, m, sizeof *L->j, cmp_remote_desc);
  int64_t best = L->j[0].remote; /* no reducer on the target's processor */
  int64_t least_start = INT64_MAX, work = 0, last = 0;
  for (size_t i = 0; i < m; i++) {
    const joiner *jn = &L->j[i];
    least_start = jn->start < least_start ? jn->start : least_start;
    work = mapopt__sat_add(work, jn->work);
    last = jn->end > last ? jn->end : last;
    int64_t local = mapopt__sat_add(least_start, work);
    if (last > local)
      local = last;
    int64_t rest = i + 1 < m ? L->j[i + 1].remote : 0;
    int64_t v = local > rest ? local : rest;
    if (v < best)
      best = v;
  }
  return best;
}

/*
 * LB_cp (the critical-path term of docs/sim.md, "The lower bound") over the ops
 * g[0..ng) (sorted by op index): F[y] bounds y's completion from the start of
 * the window. A leaf, fill, fence or future reduction starts after every
 * predecessor in the window is COMPLETE. An inner task needs its predecessors
 * only MAPPED (fences excepted: a fence holds back what follows), so only
 * fences chain into it; it is COMPLETE no earlier than any of its descendants,
 * which the walk up the parent chain records. stamp[op] == tag marks the ops of
 * the window.
 */
static int64_t cp_bound(lb_ctx *L, const lb_op *g, size_t ng, int64_t *F,
                        int64_t *stamp, int64_t tag) {
  const mapopt_app_run *run = L->run;
  const mapopt__sim_dag *dag = L->dag;
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
    const mapopt_app_op *yo = &run->ops[y];
    for (size_t q = 0; !g[j].inner && dag && dag->need && y < dag->nops &&
                       yo->kind == MAPOPT_OP_TASK && q < yo->nreqs;
         q++) {
      int64_t t = fold_join(L, g, ng, F, stamp, tag, y, q);
      if (t > base)
        base = t;
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
static int64_t window_bound(lb_ctx *L, const lb_op *g, size_t ng,
                            const int64_t n[NKINDS], lb_vec *vecs,
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
  int64_t cp = cp_bound(L, g, ng, F, stamp, tag);
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
  /* The joins' scratch: contributions to one requirement, at most this
   * many (a larger join is left out, which only lowers the bound). */
  lb_ctx L = {machine, run, dag, NULL, NULL, 4096};
  L.c = mapopt__calloc(ctx, L.cap, sizeof *L.c);
  L.j = mapopt__calloc(ctx, L.cap, sizeof *L.j);
  mapopt_status st = MAPOPT_ENOMEM;
  if (!sel || !vecs || !slots || !F || !stamp || !last || !L.c || !L.j)
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
    lb = mapopt__sat_add(lb, window_bound(&L, sel + a, b - a, n, vecs, slots,
                                          cap, F, stamp, (int64_t)a));
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
  mapopt__free(ctx, L.c, L.cap * sizeof *L.c);
  mapopt__free(ctx, L.j, L.cap * sizeof *L.j);
  return st;
}

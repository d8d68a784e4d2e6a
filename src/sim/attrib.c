/*
 * Where the time went, by cause (docs/sim.md, "The critical path adds
 * up"): the critical path of every timed window, and what every timed
 * task waited for before it started, both split into (task, argument,
 * cause) entries -- a copy of one argument from one memory to another, a
 * fold of a reducer's contribution, the folds of reduced data into
 * another task's instance, a processor busy with another task,
 * InstanceLimit, the window of outstanding operations, the runtime's own
 * work -- so that AutoGuide can say what each cost in time.
 *
 * The path is walked back from the op that completed last in a window,
 * through the predecessor that completed last; each step explains the
 * time between that predecessor's completion and the op's, one interval
 * at a time and backwards, so the intervals never overlap and add up to
 * the window: the op's completion delay, its execution, its wait for its
 * processor, the copy that arrived last and, behind it, the copy it
 * waited for (a fold's base) or the fold that completed the reduced data
 * it copies, InstanceLimit's hold, its issue. A task's own wait is the
 * same split of the time from its last predecessor's completion to its
 * start. The engine records only what these walks need (the last
 * predecessor and copy of each op, the copy each copy waited for last,
 * the op each processor ran before, the fold that woke a waiting reader);
 * everything else is read from the finished run here.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

/* ---- the timed work ------------------------------------------------------ */

bool mapopt__sim_timed_copy(const sim_t *s, const sim_copy *c) {
  return s->run->ops[c->op].timing.timed &&
         mapopt__sim_in_windows(s, c->start_at);
}

/* ---- the (task, argument, cause) table ------------------------------------
 */

/* One entry while it is being gathered; ends are memory ids (copies) or a
 * processor id (to, for PROCESSOR), -1 when none. */
typedef struct acc {
  int task, arg, cause, channel, other;
  int pred; /* PROCESSOR: the last predecessor's task, -1 */
  int64_t exposed, waited, count, bytes, copies, pieces, spread;
  int64_t counted_for; /* the op it was last counted for */
  int64_t path_piece, wait_piece;
  bool path_last;    /* a fold: the largest piece's contribution ended last */
  bool keep;         /* the result keeps it (choose) */
  int64_t path_copy; /* the copy of the largest exposed piece, -1 */
  int64_t path_from, path_to, wait_from, wait_to;
} acc;

typedef struct table {
  mapopt__arena *arena;
  acc *a;
  size_t n, cap;
  int64_t *slot; /* index into a, -1: free; nslot a power of two */
  size_t nslot;
  /* Per cause: 1 + the entry its last lookup found, 0 none. The walks
   * charge the ops of a launch in turn, and one op's charges have one
   * cause each: most lookups ask for the key their cause asked for last,
   * which compares faster than it hashes. */
  size_t last[MAPOPT_SIM_CAUSE_COUNT];
  bool failed;
} table;

static uint64_t key_hash(int task, int arg, int cause, int channel, int other) {
  uint64_t h = (uint64_t)(uint32_t)task * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)(uint32_t)arg << 32 | (uint32_t)other) +
       0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= ((uint64_t)(uint32_t)cause << 8 | (uint32_t)(channel + 1)) +
       0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2);
  return h ^ (h >> 29);
}

static bool same_key(const acc *e, int task, int arg, int cause, int channel,
                     int other) {
  return e->task == task && e->arg == arg && e->cause == cause &&
         e->channel == channel && e->other == other;
}

/* Grows the index to twice the entries' capacity, so it stays at most
 * half full. */
static bool table_grow(table *t) {
  size_t cap = t->cap ? 2 * t->cap : 64, nslot = 2 * cap;
  acc *a = mapopt__arena_alloc(t->arena, cap * sizeof *a);
  int64_t *slot = mapopt__arena_alloc(t->arena, nslot * sizeof *slot);
  if (!a || !slot)
    return false;
  if (t->n)
    memcpy(a, t->a, t->n * sizeof *a);
  for (size_t i = 0; i < nslot; i++)
    slot[i] = -1;
  for (size_t i = 0; i < t->n; i++) {
    const acc *e = &a[i];
    size_t k =
        key_hash(e->task, e->arg, e->cause, e->channel, e->other) & (nslot - 1);
    while (slot[k] >= 0)
      k = (k + 1) & (nslot - 1);
    slot[k] = (int64_t)i;
  }
  t->a = a;
  t->cap = cap;
  t->slot = slot;
  t->nslot = nslot;
  return true;
}

/* table_get past the key its cause asked for last: the index's lookup,
 * and the entry's creation when new. Out of line, so that table_get's
 * common case is a short function. */
__attribute__((noinline)) static acc *
table_find(table *t, int task, int arg, int cause, int channel, int other) {
  size_t *last = &t->last[cause];
  if (t->n == t->cap && !table_grow(t)) {
    t->failed = true;
    return NULL;
  }
  size_t k = key_hash(task, arg, cause, channel, other) & (t->nslot - 1);
  for (; t->slot[k] >= 0; k = (k + 1) & (t->nslot - 1)) {
    acc *e = &t->a[t->slot[k]];
    if (same_key(e, task, arg, cause, channel, other)) {
      *last = (size_t)t->slot[k] + 1;
      return e;
    }
  }
  *last = t->n + 1;
  acc *e = &t->a[t->n];
  *e = (acc){.task = task,
             .arg = arg,
             .cause = cause,
             .channel = channel,
             .other = other,
             .pred = -1,
             .counted_for = -1,
             .path_from = -1,
             .path_to = -1,
             .wait_from = -1,
             .wait_to = -1,
             .path_copy = -1};
  t->slot[k] = (int64_t)t->n++;
  return e;
}

/* The entry of the key, created empty if new; NULL when out of memory. */
static acc *table_get(table *t, int task, int arg, int cause, int channel,
                      int other) {
  if (t->failed)
    return NULL;
  size_t last = t->last[cause];
  if (last && same_key(&t->a[last - 1], task, arg, cause, channel, other))
    return &t->a[last - 1];
  return table_find(t, task, arg, cause, channel, other);
}

/* ---- walking ------------------------------------------------------------- */

enum { W_PATH, W_WAIT, W_PROBE };

typedef struct walk {
  sim_t *s;
  table *t;
  int mode;
  mapopt_sim_result *res; /* W_PATH: the parts and segments */
  int64_t op;             /* W_WAIT, W_PROBE: the op whose wait it is */
  sim_op_wait *probe;
} walk;

/* What a charged interval is about; last: a fold of the contribution that
 * completed last of those the reader waited for. */
typedef struct what {
  int task, arg, cause, channel, other, pred;
  int64_t from, to;
  bool last;
  int64_t copy;                    /* the copy it is, -1 */
  const char *seg_kind, *seg_name; /* W_PATH: a segment of the path */
} what;

/* What is about task's cause, with no argument, channel, other or ends. */
static what about(int task, int cause) {
  return (what){.task = task,
                .arg = -1,
                .cause = cause,
                .channel = -1,
                .other = -1,
                .pred = -1,
                .from = -1,
                .to = -1,
                .copy = -1};
}

/* Keeps the MAPOPT_SIM_MAX_SEGMENTS longest segments of the path and
 * counts the others; the result keeps the names of those it keeps. */
static void add_segment(mapopt_sim_result *res, const char *kind,
                        const char *name, int64_t start, int64_t dur) {
  mapopt_sim_critical_path *cp = &res->critical_path;
  size_t n = cp->nsegments, at = n;
  while (at > 0 && cp->segments[at - 1].duration_ns < dur)
    at--;
  if (at >= MAPOPT_SIM_MAX_SEGMENTS) {
    cp->segments_left_out++;
    return;
  }
  name = mapopt__sim_result_string(res, name);
  if (!name)
    name = "";
  if (n == MAPOPT_SIM_MAX_SEGMENTS) { /* the shortest kept one goes */
    n--;
    cp->segments_left_out++;
  }
  memmove(&cp->segments[at + 1], &cp->segments[at],
          (n - at) * sizeof cp->segments[0]);
  cp->segments[at] = (mapopt_sim_segment){kind, name, start, dur};
  cp->nsegments = n + 1;
}

/* The part of the critical path's summary each cause adds to. */
static int64_t *part_of(mapopt_sim_critical_path *cp, int cause) {
  switch (cause) {
  case MAPOPT_SIM_CAUSE_COMPUTE:
    return &cp->compute_ns;
  case MAPOPT_SIM_CAUSE_COPY:
  case MAPOPT_SIM_CAUSE_FILL:
  case MAPOPT_SIM_CAUSE_FOLD:
  case MAPOPT_SIM_CAUSE_REDUCTION:
    return &cp->copy_ns;
  case MAPOPT_SIM_CAUSE_PROCESSOR:
    return &cp->queue_ns;
  case MAPOPT_SIM_CAUSE_INSTANCE_LIMIT:
    return &cp->backpressure_ns;
  default:
    return &cp->runtime_ns;
  }
}

/* Charges [a, *hi) (a at least the floor, below *hi): see charge. */
static int64_t charge_interval(walk *w, const what *x, int64_t a, int64_t *hi) {
  int64_t d = *hi - a;
  *hi = a;
  if (w->mode == W_PROBE) {
    sim_op_wait *p = w->probe;
    p->total_ns += d;
    if (x->cause != MAPOPT_SIM_CAUSE_RUNTIME && d > p->ns) {
      p->ns = d;
      p->cause = x->cause;
      p->arg = x->arg;
      p->from = x->from;
      p->to = x->to;
    }
    return d;
  }
  acc *e = table_get(w->t, x->task, x->arg, x->cause, x->channel, x->other);
  if (!e)
    return d;
  if (w->mode == W_PATH) {
    mapopt_sim_critical_path *cp = &w->res->critical_path;
    *part_of(cp, x->cause) += d;
    e->exposed += d;
    if (d > e->path_piece) {
      e->path_piece = d;
      e->path_from = x->from;
      e->path_to = x->to;
      e->path_last = x->last;
      e->path_copy = x->copy;
      e->pred = x->pred;
    }
    if (x->seg_kind)
      add_segment(w->res, x->seg_kind, x->seg_name, a, d);
    return d;
  }
  e->waited += d;
  if (e->counted_for != w->op) {
    e->counted_for = w->op;
    e->count++;
  }
  if (d > e->wait_piece) {
    e->wait_piece = d;
    e->wait_from = x->from;
    e->wait_to = x->to;
    if (e->exposed == 0)
      e->pred = x->pred;
  }
  return d;
}

/* Whether charge would charge anything: [max(a, floor), hi) is not empty.
 * The walks ask it before they build what an interval is about; most of
 * a task's wait is one or two of the intervals op_step explains. */
static inline bool charges(int64_t a, int64_t floor, int64_t hi) {
  return (a > floor ? a : floor) < hi;
}

/*
 * Explains [a, *hi) clipped below at floor: the interval is charged to
 * what it is about and *hi lowers to its start, so a walk explains a span
 * backwards one interval at a time. Returns the length charged.
 */
static inline int64_t charge(walk *w, const what *x, int64_t a, int64_t floor,
                             int64_t *hi) {
  if (!charges(a, floor, *hi))
    return 0;
  return charge_interval(w, x, a > floor ? a : floor, hi);
}

static int task_of(const sim_t *s, int64_t op) {
  return op >= 0 && s->run->ops[op].kind == MAPOPT_OP_TASK
             ? s->run->ops[op].task
             : -1;
}

/* The cause a copy's own time is: fills, folds, other copies. */
static int copy_cause(const sim_copy *c) {
  return c->kind == COPY_FILL   ? MAPOPT_SIM_CAUSE_FILL
         : c->kind == COPY_FOLD ? MAPOPT_SIM_CAUSE_FOLD
                                : MAPOPT_SIM_CAUSE_COPY;
}

/* The channel of a copy's path: a fold's is classified as its copy would
 * be (mapopt__sim_copy_path), a fill is FILL. */
static int copy_channel(const sim_t *s, const sim_copy *c) {
  if (c->kind != COPY_FOLD)
    return c->kind;
  sim_copy probe = *c;
  int64_t bw, lat;
  mapopt__sim_copy_path(s, &probe, &bw, &lat);
  return probe.kind;
}

/* The task that made what copy c moves: the writer of its data, or for a
 * fold the reducer it folds; -1 for a fill. */
static int copy_source_task(const sim_t *s, const sim_copy *c) {
  if (c->kind == COPY_FILL)
    return -1;
  if (c->kind == COPY_FOLD && c->reducer >= 0)
    return task_of(s, c->reducer);
  return task_of(s, mapopt__sim_copy_producer(s, c));
}

static void mark_copy(walk *w, const sim_copy *c) {
  if (w->mode == W_PATH && w->s->on_path_copy)
    w->s->on_path_copy[c - copy_at(w->s, 0)] = 1;
}

/*
 * Copy c, which delivered data of argument arg to op (a task's), as cause:
 * its time from start to end, then what it waited for -- the copy that
 * finished last of those it had to wait for (a fold's base), or, for a
 * copy planned when the reduced data it copies was complete, the fold
 * that completed it (everything behind that fold is the reduction's).
 */
static void copy_chain(walk *w, int64_t op, int arg, const sim_copy *c,
                       int cause, int64_t floor, int64_t *hi, int depth) {
  sim_t *s = w->s;
  int task = task_of(s, op);
  what x = about(task, cause);
  x.arg = arg;
  x.channel = copy_channel(s, c);
  x.other = copy_source_task(s, c);
  x.from = c->src_mem;
  x.to = c->dst_mem;
  x.last = c->kind == COPY_FOLD && c->reducer >= 0 &&
           c->reducer == s->ops[op].last_pred;
  x.copy = c - copy_at(s, 0);
  x.seg_kind = mapopt_sim_copy_kind_name(c->kind);
  x.seg_name = mapopt_shape_mem_name(s->mems[c->dst_mem].kind);
  if (charge(w, &x, c->start_at, floor, hi) > 0)
    mark_copy(w, c);
  if (depth >= 16)
    return;
  what gap = about(task, MAPOPT_SIM_CAUSE_RUNTIME);
  if (c->last_dep >= 0 && copy_at(s, c->last_dep)->end_at > floor) {
    const sim_copy *dep = copy_at(s, c->last_dep);
    charge(w, &gap, dep->end_at, floor, hi);
    copy_chain(w, op, arg, dep,
               cause == MAPOPT_SIM_CAUSE_REDUCTION ? cause : copy_cause(dep),
               floor, hi, depth + 1);
    return;
  }
  int64_t f = s->ops[op].woken_by;
  if (f >= 0 && f != c - copy_at(s, 0) &&
      copy_at(s, f)->end_at == c->ready_at && c->ready_at > floor) {
    charge(w, &gap, c->ready_at, floor, hi);
    copy_chain(w, op, arg, copy_at(s, f), MAPOPT_SIM_CAUSE_REDUCTION, floor, hi,
               depth + 1);
  }
}

/* Explains the time of op from *hi down to floor (its last predecessor's
 * completion): its completion delay, execution and wait for a processor,
 * the copy that arrived last and what was behind it, InstanceLimit's hold
 * and its issue. */
static void op_step(walk *w, int64_t op, int64_t floor, int64_t *hi) {
  sim_t *s = w->s;
  const sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  int task = task_of(s, op);
  what run = about(task, MAPOPT_SIM_CAUSE_RUNTIME);
  if (ao->kind == MAPOPT_OP_TASK) {
    charge(w, &run, o->end_at, floor, hi);
    if (charges(o->start_at, floor, *hi)) {
      what compute = about(task, MAPOPT_SIM_CAUSE_COMPUTE);
      compute.seg_kind = "task";
      compute.seg_name = s->run->tasks[ao->task].name;
      charge(w, &compute, o->start_at, floor, hi);
    }
    if (charges(o->ready_at, floor, *hi)) {
      what queue = about(task, MAPOPT_SIM_CAUSE_PROCESSOR);
      queue.other = task_of(s, o->behind);
      queue.to = o->proc;
      if (o->last_pred >= 0 && s->ops[o->last_pred].proc >= 0) {
        queue.pred = task_of(s, o->last_pred);
        queue.from = s->ops[o->last_pred].proc;
      }
      charge(w, &queue, o->ready_at, floor, hi);
    }
  } else {
    static const char *const kinds[] = {"task", "fill", "fence", "future"};
    charge(w, &run, o->complete_at, floor, hi);
    what delay = run;
    delay.seg_kind = delay.seg_name = kinds[ao->kind];
    charge(w, &delay, o->ready_at, floor, hi);
  }
  if (o->last_copy >= 0) {
    const sim_copy *c = copy_at(s, o->last_copy);
    charge(w, &run, c->end_at, floor, hi);
    copy_chain(w, op, (int)c->req, c, copy_cause(c), floor, hi, 0);
  }
  if (o->cause == CAUSE_BACKPRESSURE) {
    charge(w, &run, o->mapped_at, floor, hi);
    what limit = run;
    limit.cause = MAPOPT_SIM_CAUSE_INSTANCE_LIMIT;
    charge(w, &limit, o->mappable_at, floor, hi);
  }
  charge(w, &run, o->issued_at, floor, hi);
  what issue = run;
  if (o->window_held)
    issue.cause = MAPOPT_SIM_CAUSE_WINDOW;
  charge(w, &issue, floor, floor, hi);
}

/* The critical path of one timed window [t0, t1). */
static void path_window(walk *w, int64_t t0, int64_t t1) {
  sim_t *s = w->s;
  int64_t cur = -1;
  for (int64_t i = 0; i < s->run->nops; i++)
    if (s->ops[i].state == OS_COMPLETE && s->ops[i].complete_at <= t1 &&
        (cur < 0 || s->ops[i].complete_at > s->ops[cur].complete_at))
      cur = i;
  w->res->critical_path.length_ns += t1 - t0;
  int64_t hi = t1; /* [t0, hi) is still to be explained */
  for (int guard = 0; cur >= 0 && hi > t0 && guard < 1000000; guard++) {
    const sim_op *o = &s->ops[cur];
    const mapopt_app_op *ao = &s->run->ops[cur];
    int64_t floor = t0;
    if (o->last_pred >= 0 && s->ops[o->last_pred].complete_at > floor)
      floor = s->ops[o->last_pred].complete_at;
    if (floor > hi)
      floor = hi;
    if (s->on_path_op)
      s->on_path_op[cur] = 1;
    if (ao->kind == MAPOPT_OP_TASK && o->complete_at > o->end_at &&
        s->run->tasks[ao->task].inner) {
      /* An inner task completes with its last child: follow the child. */
      int64_t last = -1;
      for (int64_t k = s->plan->first_child[cur + 1]; k >= 0;
           k = mapopt__sim_next_sib(s, k))
        if (s->ops[k].state == OS_COMPLETE &&
            (last < 0 || s->ops[k].complete_at > s->ops[last].complete_at))
          last = k;
      if (last >= 0 && s->ops[last].complete_at > floor) {
        what run = about(ao->task, MAPOPT_SIM_CAUSE_RUNTIME);
        charge(w, &run, s->ops[last].complete_at, floor, &hi);
        cur = last;
        continue;
      }
    }
    op_step(w, cur, floor, &hi);
    cur = o->last_pred;
  }
  what start = about(-1, MAPOPT_SIM_CAUSE_RUNTIME);
  charge(w, &start, t0, t0, &hi);
}

/* The time op waited before it started, from its last predecessor's
 * completion (or its issue, without predecessors). */
static void op_wait(walk *w, int64_t op) {
  const sim_op *o = &w->s->ops[op];
  int64_t floor =
      o->last_pred >= 0 ? w->s->ops[o->last_pred].complete_at : o->issued_at;
  int64_t hi = o->start_at;
  w->op = op;
  if (floor < hi)
    op_step(w, op, floor, &hi);
}

void mapopt__sim_op_wait(sim_t *s, int64_t op, sim_op_wait *out) {
  *out = (sim_op_wait){.cause = -1, .arg = -1, .from = -1, .to = -1};
  walk w = {.s = s, .mode = W_PROBE, .probe = out};
  op_wait(&w, op);
}

/* ---- spread: processors per piece ---------------------------------------- */

/* One read or reduction of a piece in one iteration, on a processor. */
typedef struct use {
  int64_t piece, iteration, repetition, proc, start;
  bool reduce;
} use;

/* The uses of the pieces the kept entries' copies move into, sorted
 * (cmp_use), and per such piece (wanted, sorted ids) the most processors
 * reading it (spread[k]) or reducing into it (spread[nwanted + k]) in one
 * iteration. */
typedef struct spread_t {
  use *uses;
  size_t n;
  const int64_t *wanted;
  size_t nwanted;
  int64_t *spread;
  /* Per piece id: its index in wanted, -1 not wanted. Every timed
   * requirement asks (twice) whether its piece is wanted: a lookup, not a
   * search of wanted, which at a million ops was a sizeable part of the
   * result's statistics. */
  int64_t *wanted_of;
} spread_t;

/* -1, 0 or 1 as x is less than, equal to or greater than y. */
static int cmp_i64(int64_t x, int64_t y) {
  return (x > y) - (x < y);
}

/* Orders uses by (reduce, piece, iteration, repetition, start, proc). The
 * sorts call it a few times per use: a chain of compares, no arrays. */
static int cmp_use(const void *pa, const void *pb) {
  const use *a = pa, *b = pb;
  int c = cmp_i64(a->reduce, b->reduce);
  if (!c)
    c = cmp_i64(a->piece, b->piece);
  if (!c)
    c = cmp_i64(a->iteration, b->iteration);
  if (!c)
    c = cmp_i64(a->repetition, b->repetition);
  if (!c)
    c = cmp_i64(a->start, b->start);
  return c ? c : cmp_i64(a->proc, b->proc);
}

/* The piece id of requirement r of op (the DAG's flat array). */
static int64_t req_piece_of(const sim_t *s, int64_t op, int64_t r) {
  return s->dag.req_piece[s->dag.req_off[op] + r];
}

/* The index of piece in the sorted wanted ids, or -1. */
static int64_t wanted_at(const spread_t *sp, int64_t piece) {
  return sp->wanted_of[piece];
}

/*
 * The reads and reductions in the timed work of the pieces wanted[0..n)
 * (sorted, distinct), and how many processors each is read on or reduced
 * on in one iteration. false when out of memory.
 */
static bool piece_spread(sim_t *s, const int64_t *wanted, size_t nwanted,
                         spread_t *out) {
  const mapopt_app_run *run = s->run;
  *out = (spread_t){NULL, 0, wanted, nwanted, NULL, NULL};
  out->spread =
      mapopt__arena_zalloc(&s->arena, (2 * nwanted + 1) * sizeof *out->spread);
  out->wanted_of = mapopt__arena_alloc(&s->arena, (size_t)(run->npieces + 1) *
                                                      sizeof *out->wanted_of);
  if (!out->spread || !out->wanted_of)
    return false;
  for (int64_t k = 0; k < run->npieces; k++)
    out->wanted_of[k] = -1;
  for (size_t k = 0; k < nwanted; k++)
    out->wanted_of[wanted[k]] = (int64_t)k;
  const int32_t *req_piece = s->dag.req_piece;
  const uint8_t *req_priv = s->dag.req_priv;
  /* Each use goes straight to its (reduce, piece) group, the groups in
   * cmp_use's order (the uses that do not reduce first, then pieces in id
   * order, as wanted is): the first pass counts the groups, the second
   * places the uses, in op order; then each group is sorted on its own,
   * which compares far fewer pairs than one sort of all the uses. */
  size_t ngroups = 2 * nwanted;
  size_t *group =
      mapopt__arena_zalloc(&s->arena, (ngroups + 1) * sizeof *group);
  size_t *cursor =
      mapopt__arena_alloc(&s->arena, (ngroups + 1) * sizeof *cursor);
  if (!group || !cursor)
    return false;
  for (int pass = 0; pass < 2 && nwanted > 0; pass++) {
    if (pass == 1) {
      for (size_t g = 0; g < ngroups; g++)
        group[g + 1] += group[g];
      memcpy(cursor, group, ngroups * sizeof *cursor);
      out->uses = mapopt__arena_alloc(
          &s->arena, (group[ngroups] ? group[ngroups] : 1) * sizeof *out->uses);
      if (!out->uses)
        return false;
    }
    for (int64_t i = 0; i < run->nops; i++) {
      if (!mapopt__sim_timed_task(s, i))
        continue;
      for (int64_t q = s->dag.req_off[i]; q < s->dag.req_off[i + 1]; q++) {
        int64_t piece = req_piece[q];
        int64_t w = wanted_at(out, piece);
        if (req_priv[q] == MAPOPT_PRIV_WD || w < 0)
          continue;
        bool reduce = req_priv[q] == MAPOPT_PRIV_REDUCE;
        size_t g = (reduce ? nwanted : 0) + (size_t)w;
        if (pass == 0) {
          group[g + 1]++;
          continue;
        }
        const mapopt_op_timing *tm = &run->ops[i].timing;
        out->uses[cursor[g]++] =
            (use){piece,          tm->iteration,      tm->repetition,
                  s->ops[i].proc, s->ops[i].start_at, reduce};
      }
    }
  }
  size_t nuse = group[ngroups];
  out->n = nuse;
  use *uses = out->uses;
  for (size_t g = 0; g < ngroups; g++)
    if (group[g + 1] - group[g] > 1)
      qsort(uses + group[g], group[g + 1] - group[g], sizeof *uses, cmp_use);
  for (size_t a = 0, b; a < nuse; a = b) {
    int64_t distinct = 1;
    for (b = a + 1; b < nuse && uses[b].reduce == uses[a].reduce &&
                    uses[b].piece == uses[a].piece &&
                    uses[b].iteration == uses[a].iteration &&
                    uses[b].repetition == uses[a].repetition;
         b++)
      distinct += uses[b].proc != uses[b - 1].proc;
    int64_t *at = &out->spread[(uses[a].reduce ? nwanted : 0) +
                               (size_t)wanted_at(out, uses[a].piece)];
    if (distinct > *at)
      *at = distinct;
  }
  return true;
}

/* The processor that read copy c's piece first in c's iteration (the
 * earliest start, then the lowest processor), or -1. */
static int64_t first_reader(const sim_t *s, const spread_t *sp,
                            const sim_copy *c) {
  const mapopt_app_op *ao = &s->run->ops[c->op];
  use key = {req_piece_of(s, c->op, c->req),
             ao->timing.iteration,
             ao->timing.repetition,
             INT64_MIN,
             INT64_MIN,
             false};
  size_t lo = 0, hi = sp->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cmp_use(&sp->uses[mid], &key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  const use *u = lo < sp->n ? &sp->uses[lo] : NULL;
  return u && !u->reduce && u->piece == key.piece &&
                 u->iteration == key.iteration &&
                 u->repetition == key.repetition
             ? u->proc
             : -1;
}

/* Orders uses by (proc, piece, iteration, repetition): what copies served,
 * the entry in proc. */
static int cmp_served(const void *pa, const void *pb) {
  const use *a = pa, *b = pb;
  int c = cmp_i64(a->proc, b->proc);
  if (!c)
    c = cmp_i64(a->piece, b->piece);
  if (!c)
    c = cmp_i64(a->iteration, b->iteration);
  return c ? c : cmp_i64(a->repetition, b->repetition);
}

/* ---- the result ---------------------------------------------------------- */

static int cmp_acc(const void *pa, const void *pb) {
  const acc *a = pa, *b = pb;
  const int64_t x[] = {-a->exposed, -a->waited, -a->bytes,  a->task,
                       a->arg,      a->cause,   a->channel, a->other};
  const int64_t y[] = {-b->exposed, -b->waited, -b->bytes,  b->task,
                       b->arg,      b->cause,   b->channel, b->other};
  for (int i = 0; i < 8; i++)
    if (x[i] != y[i])
      return x[i] < y[i] ? -1 : 1;
  return 0;
}

static mapopt_sim_end mem_end(const sim_t *s, int64_t m) {
  if (m < 0)
    return (mapopt_sim_end){NULL, 0, 0, 0};
  const sim_mem *mm = &s->mems[m];
  return (mapopt_sim_end){mapopt_shape_mem_name(mm->kind), mm->node,
                          mm->rank < 0 ? 0 : mm->rank, mm->index};
}

static mapopt_sim_end proc_end(const sim_t *s, int64_t p) {
  static const char *const cls[] = {"CPU", "GPU", "OMP", "UTIL"};
  if (p < 0)
    return (mapopt_sim_end){NULL, 0, 0, 0};
  const sim_proc *sp = &s->procs[p];
  /* A GPU by its index on the node, which its framebuffer's has too. */
  return (mapopt_sim_end){cls[sp->cls], sp->node, sp->rank,
                          sp->cls == PK_GPU ? sp->gpu : sp->local};
}

static const char *name_or_null(mapopt_sim_result *res, const char *s) {
  return s ? mapopt__sim_result_string(res, s) : NULL;
}

/* The entries into res->waits, the kept ones in cmp_acc order. */
static mapopt_status store(sim_t *s, table *t, const spread_t *sp,
                           mapopt_sim_result *res) {
  size_t keep = 0;
  for (size_t i = 0; i < t->n; i++)
    keep += t->a[i].keep;
  if (t->n > 1)
    qsort(t->a, t->n, sizeof *t->a, cmp_acc);
  res->waits = mapopt__calloc(s->ctx, keep ? keep : 1, sizeof *res->waits);
  if (!res->waits)
    return MAPOPT_ENOMEM;
  const mapopt_app_run *run = s->run;
  for (size_t i = 0; i < t->n; i++) {
    const acc *e = &t->a[i];
    if (!e->keep)
      continue;
    mapopt_sim_wait *x = &res->waits[res->nwaits++];
    x->task = e->task >= 0 ? name_or_null(res, run->tasks[e->task].name) : NULL;
    x->arg = e->arg;
    x->arg_name = NULL;
    for (int64_t o = 0; e->arg >= 0 && e->task >= 0 && o < run->nops; o++)
      if (run->ops[o].task == e->task && (size_t)e->arg < run->ops[o].nreqs) {
        const mapopt_app_req *q = &run->ops[o].reqs[e->arg];
        x->arg_name = name_or_null(res, q->nnames ? q->names[0] : "");
        break;
      }
    x->cause = (mapopt_sim_cause)e->cause;
    x->channel = e->channel;
    x->other =
        e->other >= 0 ? name_or_null(res, run->tasks[e->other].name) : NULL;
    bool path = e->exposed > 0;
    int64_t from = path ? e->path_from : e->wait_from;
    int64_t to = path ? e->path_to : e->wait_to;
    if (e->cause == MAPOPT_SIM_CAUSE_PROCESSOR) {
      x->to = proc_end(s, to);
      x->from = proc_end(s, from);
      x->pred =
          e->pred >= 0 ? name_or_null(res, run->tasks[e->pred].name) : NULL;
    } else {
      x->from = mem_end(s, from);
      x->to = mem_end(s, to);
    }
    x->exposed_ns = e->exposed;
    x->waited_ns = e->waited;
    x->count = e->count;
    x->bytes = e->bytes;
    x->copies = e->copies;
    x->pieces = e->pieces;
    x->spread = e->spread;
    x->last_contribution = e->path_last;
    if (e->cause == MAPOPT_SIM_CAUSE_COPY && e->path_copy >= 0)
      x->first_reader =
          proc_end(s, first_reader(s, sp, copy_at(s, e->path_copy)));
  }
  return MAPOPT_OK;
}

/* Marks the entries the result keeps: every one with exposed time, and of
 * the others (with a wait or bytes) the MAPOPT_SIM_MAX_HIDDEN_WAITS first
 * in cmp_acc order. */
static void choose(table *t) {
  size_t top[MAPOPT_SIM_MAX_HIDDEN_WAITS], n = 0;
  for (size_t i = 0; i < t->n; i++) {
    acc *e = &t->a[i];
    e->keep = e->exposed > 0;
    if (e->keep || (e->waited <= 0 && e->bytes <= 0))
      continue;
    size_t at = n;
    while (at > 0 && cmp_acc(e, &t->a[top[at - 1]]) < 0)
      at--;
    if (at >= MAPOPT_SIM_MAX_HIDDEN_WAITS)
      continue;
    if (n < MAPOPT_SIM_MAX_HIDDEN_WAITS)
      n++;
    memmove(&top[at + 1], &top[at], (n - 1 - at) * sizeof top[0]);
    top[at] = i;
  }
  for (size_t k = 0; k < n; k++)
    t->a[top[k]].keep = true;
}

/* Whether copy c counts in the attribution's copies (timed, done). */
static bool counted(const sim_t *s, const sim_copy *c) {
  return !(c->end_at == 0 && c->start_at == 0) && mapopt__sim_timed_copy(s, c);
}

/*
 * What the kept copy, fold and reduction entries' pieces say: over how
 * many processors each is read or reduced in an iteration (spread), how
 * many (piece, iteration) their copies served (pieces), and, for the
 * first reader, the pieces' uses (sp).
 */
static mapopt_status pieces_of(sim_t *s, table *t, const int64_t *entry_of,
                               spread_t *sp) {
  const mapopt_app_run *run = s->run;
  size_t nserved = 0;
  for (size_t k = 0; k < s->copies.len; k++)
    nserved += entry_of[k] >= 0 && t->a[entry_of[k]].keep &&
               copy_at(s, (int64_t)k)->kind != COPY_FILL;
  use *served = mapopt__arena_alloc(&s->arena, (nserved + 1) * sizeof *served);
  int64_t *wanted =
      mapopt__arena_alloc(&s->arena, (nserved + 1) * sizeof *wanted);
  /* The wanted pieces, sorted and each once: marked per piece id, then
   * collected in id order (the ids are dense, a sort would cost more). */
  uint8_t *is_wanted =
      mapopt__arena_zalloc(&s->arena, (size_t)run->npieces + 1);
  if (!served || !wanted || !is_wanted)
    return MAPOPT_ENOMEM;
  size_t n = 0;
  for (size_t k = 0; k < s->copies.len; k++) {
    const sim_copy *c = copy_at(s, (int64_t)k);
    if (entry_of[k] < 0 || !t->a[entry_of[k]].keep || c->kind == COPY_FILL)
      continue;
    const mapopt_app_op *ao = &run->ops[c->op];
    served[n] = (use){.piece = req_piece_of(s, c->op, c->req),
                      .iteration = ao->timing.iteration,
                      .repetition = ao->timing.repetition,
                      .proc = entry_of[k]};
    is_wanted[served[n].piece] = 1;
    n++;
  }
  size_t nw = 0;
  for (int64_t p = 0; p < run->npieces; p++)
    if (is_wanted[p])
      wanted[nw++] = p;
  if (!piece_spread(s, wanted, nw, sp))
    return MAPOPT_ENOMEM;
  qsort(served, n, sizeof *served, cmp_served);
  for (size_t k = 0; k < n; k++) {
    acc *e = &t->a[served[k].proc];
    if (k == 0 || cmp_served(&served[k - 1], &served[k]) != 0)
      e->pieces++;
    int64_t w = wanted_at(sp, served[k].piece);
    int64_t x =
        sp->spread[(e->cause == MAPOPT_SIM_CAUSE_FOLD ? nw : 0) + (size_t)w];
    if (x > e->spread)
      e->spread = x;
  }
  /* A reduction's wait spreads as its folds' reducers do. */
  for (size_t i = 0; i < t->n; i++)
    if (t->a[i].keep && t->a[i].cause == MAPOPT_SIM_CAUSE_REDUCTION)
      for (size_t j = 0; j < t->n; j++)
        if (t->a[j].keep && t->a[j].cause == MAPOPT_SIM_CAUSE_FOLD &&
            t->a[j].other == t->a[i].other && t->a[j].spread > t->a[i].spread)
          t->a[i].spread = t->a[j].spread;
  return MAPOPT_OK;
}

mapopt_status mapopt__sim_attribute(sim_t *s, mapopt_sim_result *res) {
  table t = {.arena = &s->arena};
  walk w = {.s = s, .t = &t, .mode = W_PATH, .res = res};
  for (int64_t k = 0; k < s->nwin; k++)
    path_window(&w, s->win_lo[k], s->win_hi[k]);
  w.mode = W_WAIT;
  const mapopt_app_run *run = s->run;
  for (int64_t i = 0; i < run->nops; i++) {
    if (!mapopt__sim_timed_task(s, i))
      continue;
    op_wait(&w, i);
    acc *e =
        table_get(&t, run->ops[i].task, -1, MAPOPT_SIM_CAUSE_COMPUTE, -1, -1);
    if (e) {
      e->waited += s->ops[i].end_at - s->ops[i].start_at;
      e->count++;
    }
  }
  /* What the copies moved, whether anyone waited for them or not. */
  int64_t *entry_of =
      mapopt__arena_alloc(&s->arena, (s->copies.len + 1) * sizeof *entry_of);
  if (!entry_of)
    return MAPOPT_ENOMEM;
  for (size_t k = 0; k < s->copies.len; k++) {
    const sim_copy *c = copy_at(s, (int64_t)k);
    entry_of[k] = -1;
    if (!counted(s, c))
      continue;
    acc *e = table_get(&t, task_of(s, c->op), (int)c->req, copy_cause(c),
                       copy_channel(s, c), copy_source_task(s, c));
    if (!e)
      break;
    entry_of[k] = e - t.a;
    e->bytes = mapopt__sat_add(e->bytes, c->bytes);
    e->copies++;
    if (e->wait_from < 0 && e->path_from < 0) {
      e->wait_from = c->src_mem;
      e->wait_to = c->dst_mem;
    }
  }
  if (t.failed)
    return MAPOPT_ENOMEM;
  choose(&t);
  spread_t sp;
  if (pieces_of(s, &t, entry_of, &sp) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  return store(s, &t, &sp, res);
}

const char *mapopt_sim_copy_kind_name(int k) {
  static const char *const names[MAPOPT_SIM_COPY_KINDS] = {
      "FB_LOCAL", "FB_FB_PEER", "FB_HOST", "HOST_HOST",
      "NETWORK",  "FILL",       "FOLD"};
  return k >= 0 && k < MAPOPT_SIM_COPY_KINDS ? names[k] : NULL;
}

const char *mapopt_sim_cause_name(mapopt_sim_cause c) {
  static const char *const names[] = {
#define CAUSE_NAME(id, name) name,
      MAPOPT_SIM_CAUSE_LIST(CAUSE_NAME)
#undef CAUSE_NAME
  };
  return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : NULL;
}

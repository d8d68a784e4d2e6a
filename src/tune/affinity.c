/*
 * Data-affinity placements (docs/tuning.md, "Placements near the data"):
 * the values "affinity/consumer", "affinity/producer" and
 * "affinity/prefetch" of a task's index-map parameter.
 *
 * They come from the instantiated run's data flow alone: which piece each
 * point of each index launch writes and reads, in the order of the ops.
 * A point that writes a piece goes where the first other task's point
 * that reads it runs (so the read needs no copy, and starts as soon as
 * the write ends); a point that reads goes where the last other task's
 * point that wrote its first read piece ran (owner computes); a point of
 * a task that only reads goes where the first later reader of its first
 * piece runs that is not where the piece was written, so that the copy
 * that reader needs is made ahead of it (a prefetch: the point's own read
 * brings the piece there while the reader's predecessors run). Where that
 * other point runs is a matter of the candidate: its own placement, with
 * every affinity value taken as the default (so that two affinity values
 * never wait on each other). No closed form is looked for: the function
 * is a lookup tuple indexed by the linearized point, which the portable
 * subset accepts (docs/dsl.md, "Tuples"). space.c resolves each point's
 * processor under the candidate and writes the function with
 * mapopt__affinity_write_lookup; this file calls nothing of space.c's or
 * decide.c's, which both place points with mapopt__space_place_point
 * and size requests with mapopt__space_request_bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

/* Launches with more points than this are offered no affinity value: the
 * lookup tuples grow with the points. */
enum { AFFINITY_MAX_POINTS = 1024 };

/* The linearization of o's point over its extents (dimension 0 fastest),
 * or -1 when a coordinate lies outside them. */
static int64_t linear_point(const mapopt_app_op *o) {
  int64_t l = 0;
  for (int d = o->dims - 1; d >= 0; d--) {
    if (o->point[d] < 0 || o->point[d] >= o->extents[d])
      return -1;
    l = l * o->extents[d] + o->point[d];
  }
  return l;
}

/* Whether task t's index launches can take an affinity value: one set of
 * extents of 1 to 3 dimensions, top-level, at most AFFINITY_MAX_POINTS
 * points. Fills a with their shape. */
static bool launch_shape(const mapopt_space *sp, int t, space_affinity *a) {
  const mapopt_app_run *run = sp->run;
  int dims = sp->tasks[t].index_dims;
  if (dims < 1 || dims > 3)
    return false;
  bool seen = false;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || o->task != t || !o->is_index)
      continue;
    if (o->parent >= 0 || linear_point(o) < 0)
      return false; /* a nested launch's points are placed on its parent's node
                     */
    if (!seen) {
      a->dims = dims;
      a->npoints = 1;
      for (int d = 0; d < dims; d++) {
        a->extents[d] = o->extents[d];
        a->npoints *= o->extents[d];
      }
      seen = true;
    } else if (memcmp(a->extents, o->extents, (size_t)dims * sizeof(int64_t))) {
      return false;
    }
  }
  return seen && a->npoints <= AFFINITY_MAX_POINTS;
}

static bool writes(mapopt_priv p) {
  return p != MAPOPT_PRIV_RO;
}

static bool reads(mapopt_priv p) {
  return p == MAPOPT_PRIV_RO || p == MAPOPT_PRIV_RW;
}

/* The per-atom state of the pass of mapopt__space_derive_affinity. */
typedef struct atom_flow {
  int64_t last_writer; /* op of the last leaf that wrote it, or -1 */
  int64_t unread;      /* op of the last write, by a point of a task with a
                          table; or -1 */
  int watch_task;      /* the read-only task whose point watch_point lists
                          the later readers of the atom, or -1 */
  int64_t watch_point;
} atom_flow;

/* nreaders' mark of a point whose readers are not watched yet. */
enum { UNWATCHED = 0xff };

/* Appends op i to the readers of the point that watches f, if another
 * task's and not there yet. */
static void note_reader(const mapopt_space *sp, int64_t i, const atom_flow *f) {
  if (f->watch_task < 0 || f->watch_task == mapopt_app_run_op(sp->run, i)->task)
    return;
  space_affinity *a = sp->tasks[f->watch_task].affinity;
  int64_t *r = &a->readers[f->watch_point * SPACE_AFFINITY_READERS];
  uint8_t *n = &a->nreaders[f->watch_point];
  if (*n < SPACE_AFFINITY_READERS && (*n == 0 || r[*n - 1] != i)) {
    r[(*n)++] = i;
    a->any_prefetch = true;
  }
}

/* Records op i, a reader of what point wl of a's task wrote, as the
 * point's consumer if it reads at an earlier step than the one it has, or
 * in the consumer's cohort if it is a point of the consumer's launch. */
static void note_consumer(const mapopt_app_run *run, space_affinity *a,
                          int64_t wl, int64_t i, const int64_t *step) {
  int64_t *cohort = &a->cohort[wl * SPACE_AFFINITY_READERS];
  uint8_t *n = &a->ncohort[wl];
  if (a->consumer[wl] < 0 || step[i] < step[a->consumer[wl]]) {
    a->consumer[wl] = cohort[0] = i;
    *n = 1;
    a->any_consumer = true;
  } else if (*n < SPACE_AFFINITY_READERS && cohort[*n - 1] != i &&
             mapopt_app_run_op(run, i)->launch ==
                 mapopt_app_run_op(run, cohort[0])->launch) {
    cohort[(*n)++] = i;
    a->any_skewed = true;
  }
}

/* Records in the tables of o's task, if it has them, its producer, from
 * its first argument that reads (the last other task's point that wrote
 * any of its atoms), and in the tables of the writers of the atoms it
 * reads that nothing rewrote since, o as their consumer if it runs before
 * the consumer they have: its step (step[i], how many ops its parent
 * launched before it) is lower, so it is ready earlier, whatever the
 * program order of the parents' bodies (the first step of each point of
 * an index launch comes before the second step of any). */
static void note_reads(const mapopt_space *sp, int64_t i, const int64_t *step,
                       atom_flow *flow) {
  const mapopt_app_run *run = sp->run;
  const mapopt_app_op *o = mapopt_app_run_op(run, i);
  space_affinity *own = o->is_index ? sp->tasks[o->task].affinity : NULL;
  if (own && own->first_launch < 0)
    own->first_launch = o->launch;
  bool first = true;
  for (size_t r = 0; r < o->nreqs; r++) {
    const mapopt_app_req *q = mapopt_app_op_req(o, r);
    if (!q->fields || !reads(q->priv))
      continue;
    int64_t writer = -1;
    for (size_t a = 0; a < q->piece->natoms; a++) {
      atom_flow *f = &flow[mapopt_app_piece_atom_at(q->piece, a)->atom];
      note_reader(sp, i, f);
      if (f->last_writer > writer &&
          mapopt_app_run_op(run, f->last_writer)->task != o->task)
        writer = f->last_writer;
      if (f->unread < 0 || mapopt_app_run_op(run, f->unread)->task == o->task)
        continue;
      const mapopt_app_op *w = mapopt_app_run_op(run, f->unread);
      note_consumer(run, sp->tasks[w->task].affinity, linear_point(w), i, step);
    }
    int64_t l = own ? linear_point(o) : -1;
    if (own && o->launch == own->first_launch && writer >= 0 &&
        own->ninputs[l] < SPACE_AFFINITY_INPUTS) {
      int n = own->ninputs[l]++;
      own->input_writer[l * SPACE_AFFINITY_INPUTS + n] = writer;
      own->input_bytes[l * SPACE_AFFINITY_INPUTS + n] =
          mapopt__space_request_bytes(run, q);
    }
    if (first && own && writer >= 0) {
      if (own->producer[l] < 0) {
        own->producer[l] = writer;
        own->any_producer = true;
      }
    }
    /* The first launch of a read-only point watches its first piece. */
    if (first && own && own->readers && own->nreaders[l] == UNWATCHED) {
      own->nreaders[l] = 0;
      for (size_t a = 0; a < q->piece->natoms; a++) {
        atom_flow *f = &flow[mapopt_app_piece_atom_at(q->piece, a)->atom];
        f->watch_task = o->task;
        f->watch_point = l;
      }
    }
    first = false;
  }
}

/* Records o's writes in flow. */
static void note_writes(const mapopt_space *sp, int64_t i, atom_flow *flow) {
  const mapopt_app_op *o = mapopt_app_run_op(sp->run, i);
  bool tabled = o->is_index && sp->tasks[o->task].affinity != NULL;
  for (size_t r = 0; r < o->nreqs; r++) {
    const mapopt_app_req *q = mapopt_app_op_req(o, r);
    if (!q->fields || !writes(q->priv))
      continue;
    for (size_t a = 0; a < q->piece->natoms; a++) {
      atom_flow *f = &flow[mapopt_app_piece_atom_at(q->piece, a)->atom];
      f->last_writer = i;
      f->unread = tabled ? i : -1;
      f->watch_task = -1;
    }
  }
}

static int cmp_op(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* "affinity/skewed" is offered only where the cohorts are disjoint: each
 * reader reads one of the pieces the task writes, so that which reader a
 * write serves is an assignment of pieces to readers, and turning it with
 * the coordinates spreads the readers served (the blocks of a matrix
 * product). Where a reader reads several of the pieces (a halo: each
 * piece read by its neighbours), the turn only moves writes away from
 * their owners. */
static mapopt_status keep_skew_if_disjoint(mapopt_ctx *ctx, space_affinity *a) {
  size_t n = 0;
  for (int64_t k = 0; k < a->npoints; k++)
    n += a->ncohort[k];
  int64_t *all = mapopt__calloc(ctx, n, sizeof *all);
  if (!all)
    return MAPOPT_ENOMEM;
  size_t m = 0;
  for (int64_t k = 0; k < a->npoints; k++)
    for (int r = 0; r < a->ncohort[k]; r++)
      all[m++] = a->cohort[k * SPACE_AFFINITY_READERS + r];
  qsort(all, n, sizeof *all, cmp_op);
  for (size_t i = 1; i < n && a->any_skewed; i++)
    if (all[i] == all[i - 1])
      a->any_skewed = false;
  mapopt__free(ctx, all, n * sizeof *all);
  return MAPOPT_OK;
}

/* Whether some launch of task t writes a piece. */
static bool task_writes(const mapopt_app_run *run, int t) {
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || o->task != t)
      continue;
    for (size_t r = 0; r < o->nreqs; r++)
      if (mapopt_app_op_req(o, r)->fields &&
          writes(mapopt_app_op_req(o, r)->priv))
        return true;
  }
  return false;
}

mapopt_status mapopt__space_derive_affinity(mapopt_space *sp) {
  const mapopt_app_run *run = sp->run;
  for (int t = 0; t < run->ntasks; t++) {
    space_affinity shape = {0};
    if (!sp->tasks[t].used || !launch_shape(sp, t, &shape))
      continue;
    space_affinity *a = mapopt__arena_zalloc(&sp->arena, sizeof *a);
    size_t bytes = (size_t)shape.npoints * sizeof(int64_t);
    size_t points = (size_t)shape.npoints;
    if (!a || !(shape.consumer = mapopt__arena_alloc(&sp->arena, bytes)) ||
        !(shape.producer = mapopt__arena_alloc(&sp->arena, bytes)) ||
        !(shape.cohort = mapopt__arena_alloc(&sp->arena,
                                             bytes * SPACE_AFFINITY_READERS)) ||
        !(shape.ncohort = mapopt__arena_zalloc(&sp->arena, points)) ||
        !(shape.input_writer =
              mapopt__arena_alloc(&sp->arena, bytes * SPACE_AFFINITY_INPUTS)) ||
        !(shape.input_bytes =
              mapopt__arena_alloc(&sp->arena, bytes * SPACE_AFFINITY_INPUTS)) ||
        !(shape.ninputs = mapopt__arena_zalloc(&sp->arena, points)))
      return MAPOPT_ENOMEM;
    shape.first_launch = -1;
    if (!task_writes(run, t) &&
        (!(shape.readers = mapopt__arena_alloc(
               &sp->arena, bytes * SPACE_AFFINITY_READERS)) ||
         !(shape.nreaders =
               mapopt__arena_alloc(&sp->arena, (size_t)shape.npoints))))
      return MAPOPT_ENOMEM;
    for (int64_t k = 0; k < shape.npoints; k++)
      shape.consumer[k] = shape.producer[k] = -1;
    if (shape.nreaders)
      memset(shape.nreaders, UNWATCHED, (size_t)shape.npoints);
    *a = shape;
    sp->tasks[t].affinity = a;
  }
  size_t nsteps = (size_t)run->nops + 1;
  int64_t *step = mapopt__calloc(sp->ctx, nsteps, sizeof *step);
  int64_t *launched = mapopt__calloc(sp->ctx, nsteps, sizeof *launched);
  atom_flow *flow = mapopt__calloc(
      sp->ctx, (size_t)(run->natoms > 0 ? run->natoms : 1), sizeof *flow);
  if (!flow || !step || !launched) {
    mapopt__free(sp->ctx, step, nsteps * sizeof *step);
    mapopt__free(sp->ctx, launched, nsteps * sizeof *launched);
    mapopt__free(sp->ctx, flow,
                 (size_t)(run->natoms > 0 ? run->natoms : 1) * sizeof *flow);
    return MAPOPT_ENOMEM;
  }
  for (int64_t i = 0; i < run->nops; i++)
    step[i] = launched[mapopt_app_run_op(run, i)->parent + 1]++;
  for (int64_t k = 0; k < run->natoms; k++)
    flow[k] = (atom_flow){-1, -1, -1, 0};
  /* Only leaf tasks count on either side: an inner task's arguments pass
   * its children's privileges on, the children use the data (docs/sim.md).
   * A leaf launched alone counts as a neighbour (where it runs follows
   * from its parent's placement: neighbour_of) but has no table. */
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK || !sp->tasks[o->task].leaf)
      continue;
    note_reads(sp, i, step, flow);
    note_writes(sp, i, flow);
  }
  mapopt__free(sp->ctx, flow,
               (size_t)(run->natoms > 0 ? run->natoms : 1) * sizeof *flow);
  mapopt__free(sp->ctx, step, nsteps * sizeof *step);
  mapopt__free(sp->ctx, launched, nsteps * sizeof *launched);
  for (int t = 0; t < run->ntasks; t++) {
    space_affinity *a = sp->tasks[t].affinity;
    for (int64_t k = 0; a && a->nreaders && k < a->npoints; k++)
      if (a->nreaders[k] == UNWATCHED)
        a->nreaders[k] = 0;
    if (a && a->any_skewed) {
      mapopt_status st = keep_skew_if_disjoint(sp->ctx, a);
      if (st != MAPOPT_OK)
        return st;
    }
  }
  return MAPOPT_OK;
}

/* The bytes of the instance q asks for over its piece: every field of its
 * region, as the simulator's instances and Legion's default mapper's hold
 * them, a reduction's own fields only (docs/sim.md). Saturates. */
int64_t mapopt__space_request_bytes(const mapopt_app_run *run,
                                    const mapopt_app_req *q) {
  const mapopt_app_region *rg = mapopt_app_run_region(run, q->piece->region);
  int64_t per = 0;
  uint64_t fields = q->priv == MAPOPT_PRIV_REDUCE ? q->fields : ~0ull;
  for (int f = 0; f < rg->nfields && f < 64; f++)
    if (fields >> f & 1u)
      per += mapopt_app_region_field_bytes(rg, f);
  if (per > 0 && q->piece->elements > INT64_MAX / per)
    return INT64_MAX;
  return per * q->piece->elements;
}

mapopt_status mapopt__space_place_point(const mapopt_space *sp,
                                        const mapopt_program *prog,
                                        const mapopt_app_op *o,
                                        mapopt_proc_kind kind, int64_t *node,
                                        int64_t *local) {
  return mapopt_policy_place_point(prog, mapopt_app_task_name(sp->run, o->task),
                                   o->dims, o->point, o->extents, kind,
                                   o->parent >= 0 ? 1 : sp->shape.nodes,
                                   sp->shape.procs[kind], node, local);
}

/* Writes a tuple of the n values v. */
static void write_tuple(mapopt__strbuf *sb, const int64_t *v, int64_t n) {
  mapopt__sb_putc(sb, '(');
  for (int64_t k = 0; k < n; k++)
    mapopt__sb_printf(sb, "%s%lld", k ? ", " : "", (long long)v[k]);
  mapopt__sb_putc(sb, ')');
}

/* A launch of one point returns its processor: the DSL has no
 * one-element tuple literal (docs/dsl.md, "Tuples"). */
void mapopt__affinity_write_lookup(mapopt__strbuf *sb, const char *fn,
                                   const char *mv, const space_affinity *a,
                                   const int64_t *node, const int64_t *local) {
  mapopt__sb_printf(sb, "def %s(Task t) {\n", fn);
  if (a->npoints == 1) {
    mapopt__sb_printf(sb, "    return %s[%lld, %lld];\n}\n", mv,
                      (long long)node[0], (long long)local[0]);
    return;
  }
  mapopt__sb_puts(sb, "    p = t.ipoint;\n    s = t.ispace;\n    l = p[0]");
  for (int d = 1; d < a->dims; d++)
    mapopt__sb_printf(sb, " + s[%d] * (p[%d]", d - 1, d);
  for (int d = 1; d < a->dims; d++)
    mapopt__sb_putc(sb, ')');
  mapopt__sb_puts(sb, ";\n    node = ");
  write_tuple(sb, node, a->npoints);
  mapopt__sb_puts(sb, ";\n    proc = ");
  write_tuple(sb, local, a->npoints);
  mapopt__sb_printf(sb, ";\n    return %s[node[l], proc[l]];\n}\n", mv);
}

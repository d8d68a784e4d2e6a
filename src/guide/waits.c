/*
 * AutoGuide's rules on the critical path's attribution (the result's
 * waits, docs/sim.md): what the run's critical path waited for, in time.
 * A copy, a fold or a processor that held the path back is a finding, as
 * large as the time it cost (its exposed time); copies hidden behind work
 * cost nothing and are no finding, however many bytes they move.
 *
 * Each finding names the data and the two ends, and its suggestion is
 * checked against what the run's data flow allows: a piece read on two
 * processors must cross once whatever the placement, so no placement is
 * offered that claims to remove that copy; a memory is offered only when
 * the data fits in it. Where several fixes exist they are listed with the
 * time each would recover if it removed the wait -- an estimate, said to
 * be one -- and the first of them is also the finding's first edit.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "guide/guide.h"

/* A copy, fold or reduction, or a processor wait, is a finding when it
 * holds the critical path back for 5% of the run: less is the noise of a
 * halo exchange or of a pipeline's first step. */
#define WAIT_MIN_SHARE 0.05
/* Copies of another argument of the same task that waited at least this
 * share of what an exposed group's waited, though the attribution charged
 * them nothing, ran beside those (two arguments copied side by side, the
 * later arrival charged): fixing the exposed ones alone would leave these
 * on the path. They are a finding too, ranked BESIDE_RANK times lower. */
#define BESIDE_SHARE 0.25
#define BESIDE_RANK 0.5
/* A wait for a processor is a finding from a tenth of the run (a busy
 * processor is also what a well-balanced run looks like). */
#define PROCESSOR_MIN_SHARE 0.10

#define P(...) mapopt__guide_printf(f, __VA_ARGS__)
#define C(x) MAPOPT_GUIDE_CODE_##x

/* The waits of one (task, argument) for one family of causes. */
typedef struct group {
  const char *task, *arg_name;
  int arg;
  int64_t exposed, waited, copies, bytes, spread, pieces;
  const mapopt_sim_wait *main; /* its largest exposed entry */
  /* The exposed group of the same task whose waits these run beside
   * (for_groups), or NULL. */
  const struct group *beside;
} group;

typedef struct ctx {
  const mapopt_guide_input *in;
  const mapopt_sim_result *res;
  mapopt_findings *f;
  double elapsed;
  int64_t recover; /* the estimate of the last fix listed (fix) */
} ctx;

static bool same(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool copy_family(mapopt_sim_cause c) {
  return c == MAPOPT_SIM_CAUSE_COPY;
}
static bool reduction_family(mapopt_sim_cause c) {
  return c == MAPOPT_SIM_CAUSE_FOLD || c == MAPOPT_SIM_CAUSE_REDUCTION;
}

/* The groups of the family's entries, the most exposed first; n at most
 * cap. */
static size_t groups_of(const mapopt_sim_result *r,
                        bool (*family)(mapopt_sim_cause), group *out,
                        size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < mapopt_sim_result_nwaits(r); i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(r, i);
    if (!family(w->cause) || !w->task || w->arg < 0)
      continue;
    size_t k = 0;
    while (k < n && !(same(out[k].task, w->task) && out[k].arg == w->arg))
      k++;
    if (k == n) {
      if (n == cap)
        continue;
      out[n++] =
          (group){w->task, w->arg_name, w->arg, 0, 0, 0, 0, 0, 0, w, NULL};
    }
    group *g = &out[k];
    g->exposed += w->exposed_ns;
    g->waited += w->waited_ns;
    g->copies += w->copies;
    g->bytes += w->bytes;
    g->pieces += w->pieces;
    if (w->spread > g->spread)
      g->spread = w->spread;
    if (w->exposed_ns > g->main->exposed_ns)
      g->main = w;
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && out[j - 1].exposed < out[j].exposed; j--) {
      group t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
}

/* What is known of a task: its kind in this run and whether it is index
 * launched, from the busiest tasks or else the application. */
typedef struct task_facts {
  bool known, is_index;
  mapopt_proc_kind kind;
  unsigned variants;
  int64_t busy;
} task_facts;

static task_facts facts(const ctx *c, const char *task) {
  task_facts t = {0};
  const mapopt_sim_task_stats *s = mapopt_sim_result_task_named(c->res, task);
  if (s)
    return (task_facts){true, s->is_index, s->kind, s->variant_kinds,
                        s->busy_ns};
  const mapopt_app_op *op = mapopt__guide_first_op(c->in->run, task);
  const mapopt_app_task *at = mapopt__guide_task(c->in->run, task);
  if (op && at) {
    t.known = true;
    t.is_index = op->is_index;
    t.variants = at->variant_kinds;
    t.kind = at->variant_kinds >> MAPOPT_PROC_GPU & 1u ? MAPOPT_PROC_GPU
                                                       : MAPOPT_PROC_CPU;
  }
  return t;
}

/* "12.3 ms (9% of the run)". */
static const char *cost(const ctx *c, int64_t ns) {
  mapopt_findings *f = c->f;
  char t[32];
  mapopt__guide_fmt_ns(t, sizeof t, ns);
  double sh = c->elapsed > 0 ? (double)ns / c->elapsed : 0;
  return sh >= 0.01 ? P("%s (%.0f%% of the run)", t, 100 * sh)
                    : P("%s (%.1f%% of the run)", t, 100 * sh);
}

static const char *end_words(mapopt_findings *f, const mapopt_sim_end *e) {
  char b[64];
  mapopt__guide_fmt_end(b, sizeof b, e);
  return P("%s", b);
}

/* A processor end for the memory end e: an FBMEM's GPU; NULL otherwise. */
static const char *gpu_of(mapopt_findings *f, const mapopt_sim_end *e) {
  if (!e->kind || strcmp(e->kind, "FBMEM") != 0)
    return NULL;
  return P("GPU %" PRId64 " of node %" PRId64, e->index, e->node);
}

/* The fixes of one finding, listed in its suggestion: each with the time
 * it would recover if it removed the wait. */
typedef struct fixes {
  const char *text;
  int n;
} fixes;

static void fix(ctx *c, fixes *x, int64_t recover, const char *what) {
  mapopt_findings *f = c->f;
  c->recover = recover;
  char t[32];
  mapopt__guide_fmt_ns(t, sizeof t, recover);
  x->text = P("%s%s(%d) %s -- would recover up to %s (estimate)", x->text,
              x->n ? "; " : "", x->n + 1, what, t);
  x->n++;
}

/* Adds an edit to fd, carrying the estimate of the fix it makes (the
 * last one listed): the search tries the fixes that recover most first,
 * whichever finding they come from (src/tune/guide_edits.c). */
static void edit(const ctx *c, mapopt_guide_finding *fd,
                 mapopt_guide_edit_kind kind, const char *task,
                 const char *region, const char *proc, const char *value) {
  mapopt__guide_edit(c->f, fd, kind, task, region, proc, NULL, value);
  if (fd && c->elapsed > 0) {
    double share = (double)c->recover / c->elapsed;
    mapopt__guide_edit_share(fd, share < fd->impact ? share : fd->impact);
  }
}

/* Whether the data of size bytes fits in a memory of kind on the machine
 * (capacity per instance of that memory; unknown machine: yes). */
static bool fits(const ctx *c, mapopt_mem_kind kind, int64_t bytes) {
  const mapopt_machine *m = c->in->machine;
  if (!m)
    return true;
  if (!m->mems[kind].present)
    return false;
  int64_t peak = 0;
  for (size_t i = 0; i < mapopt_sim_result_nmems(c->res); i++)
    if (mapopt_sim_result_mem(c->res, i)->kind == kind &&
        mapopt_sim_result_mem(c->res, i)->peak_bytes > peak)
      peak = mapopt_sim_result_mem(c->res, i)->peak_bytes;
  return peak + bytes <= m->mems[kind].capacity;
}

/* The bandwidth of a channel on the machine, MB/s; 0 unknown. */
static int64_t channel_bw(const ctx *c, int ch) {
  const mapopt_machine *m = c->in->machine;
  return m && ch >= 0 && ch < MAPOPT_CHAN_COUNT ? m->channels[ch].bw_mbps : 0;
}

/* The share of the time a copy over `now` would save over `alt`, by the
 * channels' bandwidths (0 when alt is not faster or either is unknown). */
static double faster_by(const ctx *c, int now, int alt) {
  int64_t a = channel_bw(c, now), b = channel_bw(c, alt);
  return a > 0 && b > a ? 1 - (double)a / (double)b : 0;
}

static const char *gpu_kind = "GPU";

/* The name of the region argument arg of task is a piece of (what another
 * task's statements can name it by), or NULL when unknown. */
static const char *root_region(const mapopt_app_run *run, const char *task,
                               int arg) {
  const mapopt_app_op *op = mapopt__guide_first_op(run, task);
  if (!op || arg < 0 || (size_t)arg >= op->nreqs)
    return NULL;
  return mapopt_app_run_region(run, mapopt_app_op_req(op, arg)->piece->region)
      ->name;
}

/*
 * What task's kernels would lose, per processor they ran on, with their
 * arguments of region root in ZCMEM instead of the framebuffer: those
 * arguments' memory time scaled by the framebuffer's bandwidth over
 * ZCMEM's (an estimate). 0 for a task the profile does not list among the
 * busiest (too light to matter); -1 when the machine or the application
 * does not say.
 */
static int64_t zc_loss(const ctx *c, const char *task, const char *root) {
  const mapopt_machine *m = c->in->machine;
  const mapopt_app_op *op = mapopt__guide_first_op(c->in->run, task);
  if (!m || !op)
    return -1;
  int64_t fb = m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].bw_mbps;
  int64_t zc = m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM].bw_mbps;
  if (fb <= 0 || zc <= 0)
    return -1;
  const mapopt_sim_task_stats *t = mapopt_sim_result_task_named(c->res, task);
  if (!t || t->kind != MAPOPT_PROC_GPU)
    return 0;
  double loss = 0;
  for (size_t q = 0; q < mapopt_sim_task_nreqs(t); q++) {
    const mapopt_sim_req_stats *rq = mapopt_sim_task_req(t, q);
    if (rq->index < 0 || (size_t)rq->index >= op->nreqs ||
        rq->memory != MAPOPT_MEM_FBMEM ||
        strcmp(mapopt_app_run_region(
                   c->in->run, mapopt_app_op_req(op, rq->index)->piece->region)
                   ->name,
               root) != 0)
      continue;
    loss += (double)rq->mem_ns * ((double)fb / (double)zc - 1);
  }
  return (int64_t)(loss / (double)(t->procs_used > 0 ? t->procs_used : 1));
}

/* Whether task prod also writes other regions than the one argument arg
 * of task reads: one placement function places all of its points, so the
 * points writing this data cannot move alone (false when unknown). */
static bool writes_others(const mapopt_app_run *run, const char *prod,
                          const char *task, int arg) {
  const mapopt_app_op *op = mapopt__guide_first_op(run, task);
  if (!op || arg < 0 || (size_t)arg >= op->nreqs)
    return false;
  int region = mapopt_app_op_req(op, arg)->piece->region;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK ||
        strcmp(mapopt_app_task_name(run, o->task), prod))
      continue;
    for (size_t r = 0; r < o->nreqs; r++)
      if (mapopt_app_op_req(o, r)->priv != MAPOPT_PRIV_RO &&
          mapopt_app_op_req(o, r)->piece->region != region)
        return true;
  }
  return false;
}

/* Where the mapper runs index point o of kind: node * procs + local, or
 * -1 when it cannot say. */
static int64_t placed_at(const ctx *c, const mapopt_machine_shape *shape,
                         const mapopt_app_op *o, mapopt_proc_kind kind) {
  int64_t node, local, procs = shape->procs[kind];
  if (mapopt_policy_place_point(
          c->in->mapper, mapopt_app_task_name(c->in->run, o->task), o->dims,
          o->point, o->extents, kind, o->parent >= 0 ? 1 : shape->nodes, procs,
          &node, &local) != MAPOPT_OK)
    return -1;
  return node * procs + local;
}

/* Launches this large are not looked at point by point. */
enum { TURN_MAX_POINTS = 256 };

/* Whether the turn of the search's affinity/skewed (src/tune/affinity.c)
 * would move some write of prod's first index launch: a piece it writes
 * that two or more points of task's first launch read at argument arg is
 * written where the reader numbered by the sum of the writer's coordinates
 * (modulo the readers, in program order) runs; false when every write is
 * there already, or when it cannot say. */
static bool turn_moves(const ctx *c, const char *prod, const char *task,
                       int arg, mapopt_proc_kind kind_prod,
                       mapopt_proc_kind kind_task) {
  const mapopt_app_run *run = c->in->run;
  const mapopt_app_op *rfirst = run ? mapopt__guide_first_op(run, task) : NULL;
  const mapopt_app_op *wfirst = run ? mapopt__guide_first_op(run, prod) : NULL;
  if (!c->in->mapper || !c->in->machine || !rfirst || !wfirst ||
      !rfirst->is_index || !wfirst->is_index || arg < 0)
    return false;
  mapopt_machine_shape shape;
  mapopt_sim_shape(c->in->machine, run, &shape);
  int64_t r0 = rfirst - mapopt_app_run_op(run, 0);
  int64_t w0 = wfirst - mapopt_app_run_op(run, 0);
  for (int64_t j = w0; j < run->nops && j < w0 + TURN_MAX_POINTS &&
                       mapopt_app_run_op(run, j)->launch == wfirst->launch;
       j++) {
    const mapopt_app_op *w = mapopt_app_run_op(run, j);
    int64_t readers[TURN_MAX_POINTS], n = 0, sum = 0;
    for (int64_t i = r0; i < run->nops && i < r0 + TURN_MAX_POINTS &&
                         mapopt_app_run_op(run, i)->launch == rfirst->launch;
         i++) {
      const mapopt_app_op *o = mapopt_app_run_op(run, i);
      if ((size_t)arg >= o->nreqs)
        return false;
      const mapopt_app_piece *piece = mapopt_app_op_req(o, (size_t)arg)->piece;
      for (size_t r = 0; r < w->nreqs; r++)
        if (mapopt_app_op_req(w, r)->piece == piece &&
            mapopt_app_op_req(w, r)->priv != MAPOPT_PRIV_RO) {
          readers[n++] = i;
          break;
        }
    }
    if (n < 2)
      continue;
    for (int d = 0; d < w->dims; d++)
      sum += w->point[d];
    int64_t there = placed_at(c, &shape, w, kind_prod);
    int64_t turned = placed_at(
        c, &shape, mapopt_app_run_op(run, readers[sum % n]), kind_task);
    if (there >= 0 && turned >= 0 && there != turned)
      return true;
  }
  return false;
}

/* A task that could make the copy of argument arg of task ahead of time:
 * an index-launched leaf task that writes nothing and reads the region
 * of that argument after prod first writes it and before task first
 * reads it. Placed where the piece's other reader runs (the search's
 * affinity/prefetch, docs/tuning.md), its own read moves the piece there
 * before the reader needs it. NULL when none or unknown; the region in
 * *region_out. */
static const char *prefetcher(const mapopt_app_run *run, const char *prod,
                              const char *task, int arg, int *region_out) {
  const mapopt_app_op *op = mapopt__guide_first_op(run, task);
  if (!op || !prod || arg < 0 || (size_t)arg >= op->nreqs)
    return NULL;
  int region = *region_out = mapopt_app_op_req(op, arg)->piece->region;
  bool written = false;
  for (int64_t i = 0; i < run->nops && mapopt_app_run_op(run, i) != op; i++) {
    const mapopt_app_op *o = mapopt_app_run_op(run, i);
    if (o->kind != MAPOPT_OP_TASK)
      continue;
    const mapopt_app_task *t = mapopt_app_run_task(run, o->task);
    bool reads = false, writes = false;
    for (size_t r = 0; r < o->nreqs; r++) {
      if (!mapopt_app_op_req(o, r)->fields)
        continue;
      if (mapopt_app_op_req(o, r)->priv != MAPOPT_PRIV_RO)
        writes = true;
      else if (mapopt_app_op_req(o, r)->piece->region == region)
        reads = true;
    }
    if (!strcmp(t->name, prod)) {
      written = written || writes;
      continue;
    }
    if (written && reads && !writes && o->is_index && o->parent < 0 &&
        !t->inner && strcmp(t->name, task) != 0)
      return t->name;
  }
  return NULL;
}

/* The finding of code for group g when its waits cost the critical path
 * WAIT_MIN_SHARE of the run (NULL otherwise, or out of memory), with its
 * impact and subject; the argument's name in *region. */
static mapopt_guide_finding *group_finding(const ctx *c, const group *g,
                                           mapopt_guide_code code,
                                           const char **region) {
  mapopt_findings *f = c->f;
  double impact = (double)g->exposed / c->elapsed;
  if (impact < WAIT_MIN_SHARE)
    return NULL;
  if (g->beside)
    impact *= BESIDE_RANK;
  *region = g->arg_name && g->arg_name[0] ? g->arg_name : P("%d", g->arg);
  mapopt_guide_finding *fd =
      mapopt__guide_add(f, MAPOPT_GUIDE_PERFORMANCE, code);
  if (fd) {
    fd->impact = impact > 1 ? 1 : impact;
    mapopt__guide_subject(f, fd, g->task, *region, NULL);
  }
  return fd;
}

/* ---- copies -------------------------------------------------------------- */

static void copy_finding(ctx *c, const group *g, mapopt_guide_finding *fd,
                         const char *region) {
  mapopt_findings *f = c->f;
  const mapopt_sim_wait *w = g->main;
  const char *prod = w->other;
  task_facts tc = facts(c, g->task), tp = facts(c, prod);
  char moved[32];
  mapopt__guide_fmt_bytes(moved, sizeof moved, g->bytes);
  const char *chan = mapopt_sim_copy_kind_name(w->channel);
  const char *waits =
      g->beside ? P("also waits (up to %s once those of %s are gone)",
                    cost(c, g->exposed),
                    g->beside->arg_name ? g->beside->arg_name : "another")
                : P("waits %s", cost(c, g->exposed));
  fd->message = P("%s %s on copies of %s from %s to %s (%s%s); %s "
                  "moved in %" PRId64 " copies",
                  g->task, waits, region, end_words(f, &w->from),
                  end_words(f, &w->to), chan ? chan : "?",
                  prod ? P(", written by %s", prod) : "", moved, g->copies);
  /* What the data flow allows: a piece read on several processors
   * crosses at least once per reader but one. */
  bool spread = g->spread >= 2;
  bool producer_reads =
      spread && g->pieces > 0 && g->copies <= g->pieces * (g->spread - 1);
  const char *flow =
      !spread ? P("Each piece of %s is read on one processor in an "
                  "iteration, and %s does not write it there, so every "
                  "piece crosses.",
                  region, prod ? prod : "its producer")
      : producer_reads
          ? P("Each piece of %s is read on %" PRId64
              " processors in an iteration and %s already writes it on "
              "one of them: the copy to the other%s must cross whatever "
              "the placement.",
              region, g->spread, prod ? prod : "its producer",
              g->spread > 2 ? "s" : "")
          : P("Each piece of %s is read on %" PRId64
              " processors in an iteration, none of them where %s writes "
              "it: at least %" PRId64 " cop%s per piece must cross "
              "whatever the placement, one fewer than now.",
              region, g->spread, prod ? prod : "its producer", g->spread - 1,
              g->spread - 1 == 1 ? "y" : "ies");
  fd->explain =
      g->beside
          ? P("These copies run beside those of %s, which the critical path "
              "is charged for (%s waits for both): removing those alone "
              "would leave these on the path. %s",
              g->beside->arg_name ? g->beside->arg_name : "another argument",
              g->task, flow)
          : P("The critical path runs through these copies: %s cannot "
              "start before its %s arrives, and nothing on that path runs "
              "meanwhile. %s",
              g->task, region, flow);
  fixes x = {"", 0};
  bool other = prod && strcmp(prod, g->task) != 0 && tp.known;
  bool same_kind = other && tp.kind == tc.kind;
  /* Where the piece of the exposed copy was first read, when that is the
   * copy's own reader and not where the piece was written: writing it
   * there makes that read local (with several readers a prefetch for
   * the others; for data that shifts between steps, a skew). */
  const char *first =
      w->first_reader.kind ? end_words(f, &w->first_reader) : NULL;
  const char *src = gpu_of(f, &w->from), *dst = gpu_of(f, &w->to);
  bool first_is_dst = first && dst && strcmp(first, dst) == 0;
  if (other && first_is_dst && src && strcmp(src, first) != 0 &&
      !(c->in->run && writes_others(c->in->run, prod, g->task, g->arg))) {
    const char *fn = mapopt__guide_index_fn(c->in, g->task, tc.kind);
    bool like = same_kind && tc.is_index && tp.is_index;
    const char *what =
        !spread && like
            ? P("run %s's points where %s's run%s", prod, g->task,
                fn ? P(": `IndexTaskMap %s %s;` (the function %s uses)", prod,
                       fn, g->task)
                   : "")
            : P("write each piece of %s where it is first read: the one "
                "copied here is written on %s but first read on %s, so %s "
                "should run that point there%s",
                region, src, first, prod,
                spread ? " (with several readers, the others are then "
                         "served from the first; for data shifted "
                         "between steps, this skews the placement so the "
                         "first step reads locally)"
                       : "");
    fix(c, &x, g->exposed, what);
    if (like)
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, prod, NULL, NULL,
           P("like:%s", g->task));
    /* The same fix point by point, where the reader is no index launch
     * like the producer's too: each point of the producer where the first
     * reader of what it writes runs (the search's affinity/consumer,
     * docs/tuning.md). */
    if (tp.is_index)
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, prod, NULL, NULL,
           "affinity/consumer");
  } else if (other && producer_reads && tp.is_index && !tc.is_index &&
             c->in->run && !writes_others(c->in->run, prod, g->task, g->arg)) {
    /* Read on several processors, one of them where it is written, by a
     * task its parents launch step by step: which reader the write serves
     * decides which copy the path waits for. The reader of the earliest
     * step (affinity/consumer) takes the local read; the later steps'
     * copies then overlap the first steps' work. */
    fix(c, &x, g->exposed,
        P("write each piece of %s where its reader of the earliest step "
          "runs (the search's affinity/consumer): the read that waits "
          "here is not served by %s's write, and if it comes at an earlier "
          "step than the read that is, the copies move to later steps, "
          "behind the first steps' work",
          region, prod));
    edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, prod, NULL, NULL,
         "affinity/consumer");
  } else if (other && producer_reads && tp.is_index && tc.is_index &&
             turn_moves(c, prod, g->task, g->arg, tp.kind, tc.kind)) {
    /* Read by several points of one launch, one of them where it is
     * written: which one decides which points start at once. Written for
     * the same position in every group of readers (the first), the
     * points that start at once all sit in one part of the launch, and
     * whatever combines the others' results waits for all of their
     * copies; turning the reader with the piece's coordinates spreads
     * them (Cannon's initial alignment). Offered unless every write is
     * already where the turn puts it (turn_moves). */
    fix(c, &x, g->exposed,
        P("write each piece of %s for another of its readers, turning with "
          "the piece's coordinates (the search's affinity/skewed): the "
          "copies still cross, but the points of %s that read locally, and "
          "start at once, are then spread over the launch instead of "
          "gathered in one part of it",
          region, g->task));
    edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, prod, NULL, NULL,
         "affinity/skewed");
  }
  /* A piece read on several processors crosses anyway; what a placement
   * can still do is make that copy before the reader waits for it. */
  int ahead_region = 0;
  const char *ahead =
      spread && other && c->in->run
          ? prefetcher(c->in->run, prod, g->task, g->arg, &ahead_region)
          : NULL;
  if (ahead) {
    fix(c, &x, g->exposed,
        P("copy the pieces ahead of time: %s reads %s after %s writes it "
          "and before %s does, so running each point of %s where the "
          "piece's next reader runs (not where %s wrote it) makes the copy "
          "then, off this path (the search's affinity/prefetch)",
          ahead, mapopt_app_run_region(c->in->run, ahead_region)->name, prod,
          g->task, ahead, prod));
    edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, ahead, NULL, NULL,
         "affinity/prefetch");
  }
  if (other && !same_kind && (tc.variants >> tp.kind & 1u)) {
    const char *kinds = P("%s,%s", mapopt_shape_proc_name(tp.kind),
                          mapopt_shape_proc_name(tc.kind));
    fix(c, &x, g->exposed,
        P("run %s on the same kind as %s: `Task %s %s;`", g->task, prod,
          g->task, kinds));
    edit(c, fd, MAPOPT_GUIDE_EDIT_PROC_KINDS, g->task, NULL, NULL, kinds);
  }
  if (other && !tc.is_index && tp.is_index &&
      !(c->in->mapper &&
        mapopt_policy_map_function(c->in->mapper, g->task, tc.kind, true))) {
    fix(c, &x, g->exposed,
        P("run %s on its parent's processor: `SingleTaskMap %s f;` with "
          "`def f(Task t) { return m[*t.parent.processor(m)]; }`",
          g->task, g->task));
    edit(c, fd, MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW, g->task, NULL, NULL, "parent");
  }
  /* Between GPUs of a node, host memory can serve every reader over its
   * own host link, when that link is faster than a peer copy. */
  double gain = faster_by(c, w->channel, MAPOPT_CHAN_FB_HOST);
  int64_t size = g->copies ? g->bytes / g->copies : 0;
  const char *root = root_region(c->in->run, g->task, g->arg);
  if (!root)
    root = region;
  int64_t saved = (int64_t)((double)g->exposed * gain);
  int64_t lost = prod ? zc_loss(c, prod, root) : -1;
  /* Only when the writer's kernels would not lose more than it saves. */
  if (prod && w->channel == MAPOPT_CHAN_FB_FB_PEER && gain > 0 &&
      fits(c, MAPOPT_MEM_ZCMEM, size) && lost >= 0 && lost < saved) {
    fix(c, &x, saved - lost,
        P("let %s write %s in host memory, `Region %s %s GPU ZCMEM;`, "
          "from which each reader copies over its own host link (%.0f%% "
          "faster than this peer copy)",
          prod, region, prod, root, 100 * gain));
    edit(c, fd, MAPOPT_GUIDE_EDIT_MEMORY, prod, root, gpu_kind, "ZCMEM");
  }
  fd->suggest =
      x.n ? P("Fixes, with the time each would recover if it removed the "
              "wait: %s.",
              x.text)
          : P("No placement removes these copies; they can only be "
              "overlapped: look at the other findings, which hold the path "
              "back in their own right.");
}

/* ---- reductions ---------------------------------------------------------- */

static void reduction_finding(ctx *c, const group *g, mapopt_guide_finding *fd,
                              const char *region) {
  mapopt_findings *f = c->f;
  const mapopt_sim_wait *w = g->main;
  const char *red = w->other ? w->other : "its reducers";
  task_facts tr = facts(c, g->task), tq = facts(c, w->other);
  bool own = w->cause == MAPOPT_SIM_CAUSE_FOLD;
  const char *chan = mapopt_sim_copy_kind_name(w->channel);
  char moved[32];
  mapopt__guide_fmt_bytes(moved, sizeof moved, g->bytes);
  fd->message =
      P("%s waits %s on the folds of %s's contributions to %s, from %s to "
        "%s (%s)%s",
        g->task, cost(c, g->exposed), red, region, end_words(f, &w->from),
        end_words(f, &w->to), chan ? chan : "?",
        own && g->copies
            ? P("; %s folded in %" PRId64 " folds", moved, g->copies)
            : P(", into another reader's instance, which %s then copies",
                g->task));
  const char *late = gpu_of(f, &w->from), *home = gpu_of(f, &w->to);
  fd->explain =
      P("%s reduces into %s on %" PRId64 " processor%s per piece and %s reads "
        "the result; each contribution is folded into %s instance once its "
        "own reducer ends, and the fold from %s, %s, holds %s back.%s",
        red, region, g->spread > 0 ? g->spread : 1, g->spread > 1 ? "s" : "",
        g->task, own ? "the reader's" : "the first reader's",
        end_words(f, &w->from),
        w->last_contribution
            ? "whose contribution ends last"
            : "whose contribution ended earlier but whose fold arrives last "
              "(the fold itself is slow)",
        g->task,
        g->spread >= 2 ? " With contributions on several processors, some "
                         "fold must cross; only the last one need not."
                       : "");
  fixes x = {"", 0};
  if (late && home && own && w->last_contribution) {
    /* The fold target where the last contribution is made: its fold is
     * local, the others overlap that contribution's compute. */
    fix(c, &x, g->exposed,
        P("make %s's home the processor of the contribution that ends "
          "last: run %s's point that reads it on %s instead of %s, so "
          "that fold is local and the earlier contributions' folds "
          "overlap its compute",
          region, g->task, late, home));
    if (tr.known && tq.known && tr.is_index && tq.is_index &&
        tr.kind == tq.kind)
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, g->task, NULL, NULL,
           P("like:%s", w->other));
    /* Point by point: each reader where the last contribution in program
     * order is made (the search's affinity/producer), which is the one
     * that ends last when the contributions run alike. */
    if (tr.known && tr.is_index)
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, g->task, NULL, NULL,
           "affinity/producer");
  } else if (late && !home && own && w->last_contribution && w->to.kind &&
             tr.known && tr.is_index && tr.kind == MAPOPT_PROC_GPU) {
    /* The folds go to host memory, the last one too: in the last
     * contributor's framebuffer that one would be local, and the earlier
     * ones overlap its compute, as above. */
    fix(c, &x, g->exposed,
        P("fold into the framebuffer where the contribution that ends last "
          "is made: %s's home in FBMEM, `Region %s %s GPU FBMEM;`, with %s's "
          "points where the last contribution to each piece is made (the "
          "search's affinity/producer), so that fold is local and the "
          "earlier ones overlap its compute",
          region, g->task, region, g->task));
    edit(c, fd, MAPOPT_GUIDE_EDIT_MEMORY, g->task, region, gpu_kind, "FBMEM");
    edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, g->task, NULL, NULL,
         "affinity/producer");
  } else if (own && late && home && tr.known && tr.is_index && g->spread >= 2) {
    /* The slow fold is not of the last contribution: a home where one
     * of the contributions is made folds that one locally; the search's
     * affinity/producer takes the last in program order. */
    fix(c, &x, g->exposed,
        P("make %s's home the processor of one of its contributions, so "
          "that its fold is local and the path waits for one crossing "
          "fold at most: each point of %s where the last contribution in "
          "program order is made (the search's affinity/producer)",
          region, g->task));
    edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, g->task, NULL, NULL,
         "affinity/producer");
  } else if (!own && tr.known) {
    fix(c, &x, g->exposed,
        P("read %s where the folds go: run %s's points where the first "
          "reader of %s runs, so it reads the folded data in place",
          region, g->task, region));
  }
  double gain = faster_by(c, w->channel, MAPOPT_CHAN_FB_HOST);
  int64_t size = g->copies ? g->bytes / g->copies : 0;
  const char *root = root_region(c->in->run, g->task, g->arg);
  int64_t saved = (int64_t)((double)g->exposed * gain);
  int64_t lost = zc_loss(c, g->task, root ? root : region);
  /* Only when the reader's kernels would not lose more than it saves. */
  if (w->channel == MAPOPT_CHAN_FB_FB_PEER && gain > 0 &&
      fits(c, MAPOPT_MEM_ZCMEM, size) && lost >= 0 && lost < saved) {
    fix(c, &x, saved - lost,
        P("fold into host memory, `Region %s %s GPU ZCMEM;`: each "
          "contribution then goes over its reducer's own host link "
          "(%.0f%% faster than this peer copy)",
          g->task, region, 100 * gain));
    edit(c, fd, MAPOPT_GUIDE_EDIT_MEMORY, g->task, region, gpu_kind, "ZCMEM");
  }
  fd->suggest =
      x.n ? P("Fixes, with the time each would recover if it removed the "
              "wait: %s.",
              x.text)
          : P("Keep the reducers of each piece together only if their "
              "compute is cheaper than the fold: the folds cost %s here.",
              cost(c, g->exposed));
}

/* ---- processors ---------------------------------------------------------- */

/* The idle time of the processors of kind over the timed window: what
 * another placement could put a queued task into. */
static int64_t idle_of(const ctx *c, const char *kind) {
  int64_t idle = 0;
  for (size_t i = 0; i < mapopt_sim_result_nprocs(c->res); i++)
    if (strcmp(mapopt_sim_result_proc(c->res, i)->kind, kind) == 0)
      idle += c->res->elapsed_ns - mapopt_sim_result_proc(c->res, i)->busy_ns;
  return idle;
}

static void processor_waits(ctx *c) {
  mapopt_findings *f = c->f;
  for (size_t i = 0; i < mapopt_sim_result_nwaits(c->res); i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(c->res, i);
    if (w->cause != MAPOPT_SIM_CAUSE_PROCESSOR || !w->task)
      continue;
    double impact = (double)w->exposed_ns / c->elapsed;
    if (impact < PROCESSOR_MIN_SHARE || !w->to.kind ||
        idle_of(c, w->to.kind) < w->exposed_ns)
      continue;
    mapopt_guide_finding *fd =
        mapopt__guide_add(f, MAPOPT_GUIDE_PERFORMANCE, C(PROCESSOR_WAIT));
    if (!fd)
      return;
    fd->impact = impact > 1 ? 1 : impact;
    mapopt__guide_subject(f, fd, w->task, NULL, NULL);
    const char *where = w->to.kind ? end_words(f, &w->to) : "its processor";
    fd->message =
        P("%s waits %s for %s, busy with %s", w->task, cost(c, w->exposed_ns),
          where, w->other ? w->other : "other work");
    fd->explain = P("%s was ready, its data in place, but %s was still "
                    "running %s: the critical path queues there.",
                    w->task, where, w->other ? w->other : "other work");
    task_facts t = facts(c, w->task);
    const mapopt_sim_task_stats *s =
        mapopt_sim_result_task_named(c->res, w->task);
    int64_t procs = mapopt__guide_procs_of(c->in, t.kind);
    fixes x = {"", 0};
    /* Queued behind its own points with processors idle elsewhere: its
     * points are spread unevenly. */
    if (t.is_index && s && (s->procs_used < procs || same(w->other, w->task))) {
      fix(c, &x, w->exposed_ns,
          P("spread %s's points evenly over all %" PRId64 " %ss (it used "
            "%" PRId64 ", and they queue on %s): `IndexTaskMap %s block;` or "
            "`cyclic`",
            w->task, procs, mapopt_shape_proc_name(t.kind), s->procs_used,
            end_words(f, &w->to), w->task));
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, w->task, NULL, NULL, "block");
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, w->task, NULL, NULL, "cyclic");
    }
    /* Its data came from its last predecessor's processor, which was
     * free when it was ready: running it there does not queue. */
    task_facts tp = facts(c, w->pred);
    const char *from = w->from.kind ? end_words(f, &w->from) : NULL;
    if (w->pred && from && strcmp(from, where) != 0 && tp.known &&
        tp.is_index && t.is_index && tp.kind == t.kind &&
        !same(w->pred, w->task)) {
      const char *fn = mapopt__guide_index_fn(c->in, w->pred, t.kind);
      fix(c, &x, w->exposed_ns,
          P("run %s's points where %s's run (its last predecessor, on %s "
            "here)%s",
            w->task, w->pred, from,
            fn ? P(": `IndexTaskMap %s %s;` (the function %s uses)", w->task,
                   fn, w->pred)
               : ""));
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, w->task, NULL, NULL,
           P("like:%s", w->pred));
    }
    /* Placed otherwise than the task it queues behind, it waits for that
     * task's other points: placed alike, each runs after its own. */
    task_facts tu = facts(c, w->other);
    const char *fx = mapopt__guide_index_fn(c->in, w->task, t.kind);
    const char *fu = mapopt__guide_index_fn(c->in, w->other, t.kind);
    if (w->other && !same(w->other, w->task) && c->in->mapper && tu.known &&
        tu.is_index && t.is_index && tu.kind == t.kind && !same(fx, fu)) {
      fix(c, &x, w->exposed_ns,
          P("place %s's points like %s's%s", w->task, w->other,
            fu ? P(": `IndexTaskMap %s %s;`", w->task, fu) : ""));
      edit(c, fd, MAPOPT_GUIDE_EDIT_INDEX_MAP, w->task, NULL, NULL,
           P("like:%s", w->other));
    }
    fd->suggest =
        x.n ? P("Fixes, with the time each would recover if it removed the "
                "wait: %s.",
                x.text)
            : P("Its own points queue behind each other: the processor is "
                "the bottleneck, not the placement.");
  }
}

/* The finding of each group of the family's waits that costs enough;
 * with beside, also of each group that ran beside one that does
 * (BESIDE_SHARE), charged the time of that one. */
static void for_groups(ctx *c, bool (*family)(mapopt_sim_cause),
                       mapopt_guide_code code, bool beside,
                       void (*rule)(ctx *, const group *,
                                    mapopt_guide_finding *, const char *)) {
  group gs[32];
  size_t n = groups_of(c->res, family, gs, 32);
  for (size_t i = 0; beside && i < n; i++) {
    const group *top = &gs[i];
    if ((double)top->exposed < WAIT_MIN_SHARE * c->elapsed || top->beside)
      continue;
    for (size_t j = i + 1; j < n; j++) {
      group *g = &gs[j];
      if (g->exposed == 0 && !g->beside && same(g->task, top->task) &&
          (double)g->waited >= BESIDE_SHARE * (double)top->waited) {
        g->beside = top;
        g->exposed = top->exposed;
      }
    }
  }
  for (size_t i = 0; i < n; i++) {
    const char *region;
    mapopt_guide_finding *fd = group_finding(c, &gs[i], code, &region);
    if (fd)
      rule(c, &gs[i], fd, region);
  }
}

void mapopt__guide_wait_rules(const mapopt_guide_input *in,
                              mapopt_findings *f) {
  const mapopt_sim_result *res = in->result;
  if (!res || res->error != MAPOPT_SIM_NONE || res->elapsed_ns <= 0)
    return;
  ctx c = {in, res, f, (double)res->elapsed_ns, -1};
  for_groups(&c, reduction_family, C(REDUCTION_BOUND), false,
             reduction_finding);
  for_groups(&c, copy_family, C(COPY_BOUND), true, copy_finding);
  processor_waits(&c);
}
